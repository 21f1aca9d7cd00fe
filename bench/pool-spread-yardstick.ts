/**
 * What a client told the pool's size achieves against a real worker pool whose service times
 * spread, beside kindly's adaptive pacing on the same herds: the herd of
 * `test/integration/pool-spread-service.quiet.test.ts` (express-queue, 10 workers and one
 * waiting place, a lognormal 100 ms handler; a TCP proxy holding each chunk a lognormal 10 ms
 * each way; 100 callers whose first tries arrive over 200 ms, one herd per seed).
 *
 *     npx tsx bench/pool-spread-yardstick.ts [--client=told|kindly] [--window=11] [--herds=21]
 *
 * `told` is plain `fetch` with a window known in advance: first tries go when their callers
 * arrive (nobody holds them), and every retry waits in one line until fewer than `--window`
 * requests are in flight; each answer lets the next in line go at that instant. With the
 * window at the pool's size (workers plus waiting places) nothing it sends after the first
 * tries is turned away, and no client learns sooner that a worker is free: the best a client
 * that spends no request on guessing does on this machine. A window one larger spends requests
 * on guesses. `kindly` is `downstream().fetch` with `pacing: {}`, as the test runs it.
 *
 * Prints each herd's requests (counted by the server) and time over three bounds: the
 * simulator's for the same arrivals (nominal 100 ms services, as the test pins it); the same
 * bound on the mean of the service times the pool actually took for that herd (the server's
 * draws are the same every run, and their mean is not 100 ms); and the bound on those service
 * times themselves, in the order they started (`herdOnWorkDone`'s `drawsBoundMs`: no client
 * keeps a worker busy that has drawn short services while the others still run long ones).
 */
import { downstream } from '../src/runtime/downstream.js';
import { firstTryTimes, herdSpreadLowerBound } from '../src/sim/herd-run.js';
import { systemClock } from '../src/time/system-clock.js';
import { arrivalsThrough, herdOnWorkDone, TWIN_HERD_OPTIONS } from '../test/support/real-herd.js';
import { SPREAD_POOL_WAY_BACK_MS, spreadPoolHerd, startSpreadPool } from '../test/support/spread-pool.js';

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k as string, v ?? ''];
  }),
);
const client = args.get('client') ?? 'told';
const window = Number(args.get('window') ?? 11);
const herds = Number(args.get('herds') ?? 21);
if (client !== 'told' && client !== 'kindly') throw new Error(`--client is told or kindly, got ${client}`);
if (!Number.isInteger(window) || window < 1) throw new Error(`--window must be a whole number ≥ 1, got ${window}`);
if (!Number.isInteger(herds) || herds < 1) throw new Error(`--herds must be a whole number ≥ 1, got ${herds}`);

/** One herd through a window of `limit` known in advance; ms until the last caller was served. */
async function toldWindowHerd(url: string, times: readonly number[], limit: number): Promise<number> {
  let inFlight = 0;
  const line: Array<() => void> = [];
  const place = (): Promise<void> | undefined => {
    if (inFlight < limit) {
      inFlight++;
      return undefined;
    }
    return new Promise<void>((resolve) => line.push(resolve));
  };
  const free = () => {
    inFlight--;
    while (inFlight < limit && line.length > 0) {
      inFlight++;
      (line.shift() as () => void)();
    }
  };
  const start = systemClock.monotonic();
  let last = 0;
  await Promise.all(
    times.map(async (at) => {
      if (at > 0) await systemClock.sleep(at);
      for (let attempt = 1; ; attempt++) {
        if (attempt === 1) inFlight++;
        else await place();
        const res = await fetch(url);
        await res.arrayBuffer();
        free();
        if (res.ok) {
          last = Math.max(last, systemClock.monotonic() - start);
          return;
        }
        if (res.status !== 503) throw new Error(`Expected 200 or 503, got ${res.status}`);
      }
    }),
  );
  return last;
}

const { pool, proxy, close } = await startSpreadPool();

let nominal = 0;
let onWork = 0;
let onDraws = 0;
let requests = 0;
let boundRequests = 0;
for (let seed = 1; seed <= herds; seed++) {
  const setup = spreadPoolHerd(seed);
  const bound = herdSpreadLowerBound(setup, 1);
  const times = firstTryTimes(setup, seed);
  // 500 ms apart: the last herd's requests are answered.
  await systemClock.sleep(500);
  pool.resetCounts();
  let last: number;
  if (client === 'told') {
    last = await toldWindowHerd(proxy.url, times, window);
  } else {
    const run = await arrivalsThrough(downstream(`spread-pool-${seed}`, TWIN_HERD_OPTIONS), proxy.url, times);
    if (run.failed > 0) throw new Error(`seed ${seed}: ${run.failed} callers failed`);
    last = run.allSucceededMs;
  }
  const total = pool.requests().total;
  const work = herdOnWorkDone(setup, pool.serviceTimes?.() ?? [], SPREAD_POOL_WAY_BACK_MS);
  nominal += last / bound.allSucceededMs;
  onWork += last / work.boundMs;
  onDraws += last / work.drawsBoundMs;
  requests += total;
  boundRequests += bound.totalRequests;
  console.log(
    `seed ${seed}: ${total} requests (bound ${bound.totalRequests}), ${(last / 1000).toFixed(3)} s: ` +
      `${(last / bound.allSucceededMs).toFixed(3)}× the bound's time, ${(last / work.boundMs).toFixed(3)}× on the work done, ` +
      `${(last / work.drawsBoundMs).toFixed(3)}× on the pool's own draws`,
  );
}
const label = client === 'told' ? `told window ${window}` : 'kindly adaptive';
console.log(
  `${label}, ${herds} herds (node ${process.version}): mean ${(nominal / herds).toFixed(3)}× the bound's time, ` +
    `${(onWork / herds).toFixed(3)}× on the work done, ${(onDraws / herds).toFixed(3)}× on the pool's own draws; requests ${(requests / boundRequests).toFixed(3)}× the bound's`,
);
await close();
