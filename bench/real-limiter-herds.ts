/**
 * Herds against real rate limiters nobody here wrote, one after another: 100 callers in this
 * process through `downstream().fetch`, retrying until served, against `limiter`'s TokenBucket
 * (100/s, bucket 10), `express-rate-limit` (10 per 100 ms, a fixed window), `express-queue`
 * (10 at once, 100 ms each, one waiting), nginx `limit_req` (100 r/s, burst 9, nodelay) or
 * `redis-gcra` (100/s, burst 10, on a real redis-server). The strategy is kindly's adaptive
 * pacing (`pacing: {}`, the default) or one of the herd's jittered retry policies. Prints each
 * herd's requests (counted by the server) and the time until the last caller was served —
 * the spread over several herds is the figure, since one herd on a loaded machine says little
 * — then the medians beside the simulator's model of that limiter (same strategy, 20 seeds).
 *
 *     npx tsx bench/real-limiter-herds.ts token-bucket|fixed-window|concurrency|leaky-bucket|gcra [herds=8] [adaptive|full|decorrelated]
 */
import { fetchThrough } from '../src/http/index.js';
import { type DownstreamOptions, downstream } from '../src/runtime/downstream.js';
import { HERD_RETRY_OPTIONS } from '../src/sim/herd-strategies.js';
import { withDefaults } from '../src/sim/scenario.js';
import { herd as herdScenario } from '../src/sim/scenarios/herd.js';
import { systemClock } from '../src/time/system-clock.js';
import {
  type LimitedServer,
  startConcurrencyServer,
  startFixedWindowServer,
  startGcraServer,
  startTokenBucketServer,
} from '../test/support/limiter-servers.js';
import { startNginx } from '../test/support/nginx.js';

/** Each limiter; its name is the simulator model that stands for it. */
const LIMITERS: Record<string, { label: string; start: () => Promise<LimitedServer>; model: Record<string, unknown> }> = {
  'token-bucket': {
    label: "limiter's TokenBucket",
    start: () => startTokenBucketServer({ ratePerSecond: 100, burst: 10 }),
    model: {},
  },
  'fixed-window': {
    label: 'express-rate-limit',
    start: () => startFixedWindowServer({ limit: 10, windowMs: 100 }),
    model: {},
  },
  concurrency: {
    label: 'express-queue',
    start: () => startConcurrencyServer({ concurrency: 10, queue: 1, serviceMs: 100 }),
    model: { queue: 1 },
  },
  'leaky-bucket': {
    label: 'nginx limit_req',
    async start() {
      const nginx = await startNginx({ ratePerSecond: 100, burst: 9, nodelay: true });
      return { url: nginx.url, requests: () => nginx.requests(), resetCounts: () => nginx.resetLog(), close: () => nginx.stop() };
    },
    model: {},
  },
  gcra: { label: 'redis-gcra', start: () => startGcraServer({ ratePerSecond: 100, burst: 10 }), model: {} },
};

const UNTIL_SERVED = { maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 60_000 } as const;

const STRATEGIES: Record<string, DownstreamOptions> = {
  adaptive: {
    budget: false,
    attemptTimeoutMs: 10_000,
    retry: { ...UNTIL_SERVED, backoff: { shape: 'constant', baseMs: 0, jitter: 'none' } },
    pacing: {},
  },
  full: { budget: false, attemptTimeoutMs: 10_000, retry: HERD_RETRY_OPTIONS.full },
  decorrelated: { budget: false, attemptTimeoutMs: 10_000, retry: HERD_RETRY_OPTIONS.decorrelated },
};

/** One herd of 100: ms until the last caller was served. */
async function herd(url: string, options: DownstreamOptions): Promise<number> {
  const api = downstream('herd', options);
  const start = systemClock.monotonic();
  let last = 0;
  await Promise.all(
    Array.from({ length: 100 }, async () => {
      const response = await fetchThrough(api, url);
      await response.arrayBuffer();
      last = Math.max(last, systemClock.monotonic() - start);
    }),
  );
  return last;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const name = process.argv[2] ?? 'token-bucket';
const herds = Number(process.argv[3] ?? 8);
const strategy = process.argv[4] ?? 'adaptive';
const limiter = LIMITERS[name];
if (limiter === undefined) throw new Error(`Unknown limiter '${name}': one of ${Object.keys(LIMITERS).join(', ')}`);
const options = STRATEGIES[strategy];
if (options === undefined) throw new Error(`Unknown strategy '${strategy}': one of ${Object.keys(STRATEGIES).join(', ')}`);
const server = await limiter.start();
// A first herd opens the pooled connections, as a warm client's would be.
await herd(server.url, options);
const requests: number[] = [];
const times: number[] = [];
for (let i = 0; i < herds; i++) {
  // Lets the limiter fill or reset completely before the next herd.
  await systemClock.sleep(300);
  server.resetCounts();
  times.push(await herd(server.url, options));
  requests.push(server.requests().total);
}
await server.close();
const { json } = herdScenario.run(withDefaults(herdScenario, { server: name, strategy, seeds: 20, ...limiter.model }), {});
const row = (json.strategies as Array<{ totalRequests: { median: number }; allSucceededMs: { median: number } }>)[0]!;
const bound = json.lowerBound as { totalRequests: number; allSucceededMs: number };
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(
  `${name} (${limiter.label}), ${strategy} (lower bound ${bound.totalRequests} requests / ${s(bound.allSucceededMs)}):`,
);
for (let i = 0; i < herds; i++) console.log(`  ${requests[i]} requests / ${s(times[i]!)}`);
const realRequests = median(requests);
const realTime = median(times);
const pct = (real: number, model: number) => `${real >= model ? '+' : ''}${((real / model - 1) * 100).toFixed(1)} %`;
console.log(
  `  median ${realRequests} requests / ${s(realTime)}; model median ${row.totalRequests.median} / ${s(row.allSucceededMs.median)} (real ${pct(realRequests, row.totalRequests.median)} requests, ${pct(realTime, row.allSucceededMs.median)} time)`,
);
