/**
 * One process of `bench/fleet.ts`'s steady comparison: `kindly:full`, with or without a Redis
 * fleet store, called 1,000 times a second (10 calls every 10 ms) — after a warm-up of 1.5 s,
 * for 5 s — then prints its CPU time per call as JSON. A process per case, so that nothing
 * else (other downstreams' syncs, another store's reconnects) runs beside it.
 *
 *     node --import tsx bench/fleet-steady-child.ts PORT full|fleet|fleet-polling
 */
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
const run = async (ms: number) => {
  for (let t = 0; t < ms; t += 10) {
    const batch: Promise<number>[] = [];
    for (let i = 0; i < 10; i++) batch.push(api.call(operation));
    await Promise.all(batch);
    await new Promise((r) => setTimeout(r, 10));
  }
};
await run(1_500);
const before = store === undefined ? 0 : store.counters.commands;
const cpu0 = process.cpuUsage();
const ms = 5_000;
await run(ms);
const cpu = process.cpuUsage(cpu0);
const calls = (ms / 10) * 10;
console.log(
  JSON.stringify({
    cpuNsPerCall: ((cpu.user + cpu.system) * 1000) / calls,
    roundTripsPerCall: store === undefined ? 0 : (store.counters.commands - before) / calls,
  }),
);
store?.close();
client.disconnect();
