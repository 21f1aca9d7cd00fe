/**
 * One process of `bench/fleet.ts`'s steady comparison: `kindly:full`, with or without a Redis
 * fleet store, called 1,000 times a second (10 calls every 10 ms) for 5 s, then prints its CPU
 * time per call as JSON: the whole process's, and the main thread's alone. A process per case,
 * so that nothing else (other downstreams' syncs, another store's reconnects) runs beside it.
 *
 * The warm-up decides this figure, so it is long: 20 s at the measured rate. After 1.5 s, V8
 * was still compiling: the case with the store ran more code, so more of it reached the
 * optimizing compiler inside the measured window (`--trace-opt`: 38 optimizations completed
 * in it, against 18 without the store; 2–4 in either after 20 s), and that compiling, with the
 * slower code that ran until it was done, read as 4–6 µs "added" per call. A shorter warm-up
 * at a higher rate is no substitute: batches 1 ms apart for 4 s left the garbage collector's
 * threads busy through the window (11–17 µs per call off the main thread).
 *
 *     node --import tsx bench/fleet-steady-child.ts PORT full|fleet|fleet-polling
 */
import { readFileSync } from 'node:fs';
import { downstream } from '../dist/index.js';
import { redisStore } from '../dist/redis.js';
import { connectRedis } from '../examples/support/redis-server.js';

const [port, variant] = [Number(process.argv[2]), process.argv[3] ?? 'full'];
if (!['full', 'fleet', 'fleet-polling'].includes(variant)) throw new Error(`unknown variant ${variant}`);
const client = await connectRedis(port);
// `fleet-polling`: no news connection, so the downstream reads the shared state every 80 ms.
const store =
  variant === 'full'
    ? undefined
    : redisStore({ client, prefix: `steady-${process.pid}`, ...(variant === 'fleet-polling' ? { subscriber: false } : {}) });
const api = downstream('bench-steady', {
  retry: { maxAttempts: 3 },
  attemptTimeoutMs: 10_000,
  budget: {},
  breaker: {},
  bulkhead: { maxConcurrent: 1_000 },
  ...(store === undefined ? {} : { store }),
});
const operation = async () => 42;
/** `batches` batches of 10 calls, `pauseMs` apart. */
const run = async (batches: number, pauseMs: number) => {
  for (let b = 0; b < batches; b++) {
    const batch: Promise<number>[] = [];
    for (let i = 0; i < 10; i++) batch.push(api.call(operation));
    await Promise.all(batch);
    await new Promise((r) => setTimeout(r, pauseMs));
  }
};
/**
 * The main thread's CPU time (ns), from Linux's scheduler statistics; `undefined` elsewhere.
 * It leaves out the compiler's and the garbage collector's helper threads.
 */
const mainThreadNs = (): number | undefined => {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
};
await run(2_000, 10);
const before = store === undefined ? 0 : store.counters.commands;
const cpu0 = process.cpuUsage();
const main0 = mainThreadNs();
const batches = 500;
await run(batches, 10);
const cpu = process.cpuUsage(cpu0);
const main1 = mainThreadNs();
const calls = batches * 10;
console.log(
  JSON.stringify({
    cpuNsPerCall: ((cpu.user + cpu.system) * 1000) / calls,
    mainThreadNsPerCall: main0 === undefined || main1 === undefined ? undefined : (main1 - main0) / calls,
    roundTripsPerCall: store === undefined ? 0 : (store.counters.commands - before) / calls,
  }),
);
store?.close();
client.disconnect();
