/**
 * Herds against real rate limiters nobody here wrote, one after another: 100 callers in this
 * process through `downstream().fetch` with `pacing: {}`, retrying until served, against
 * `limiter`'s TokenBucket (100/s, bucket 10), `express-rate-limit` (10 per 100 ms, a fixed
 * window) or `express-queue` (10 at once, 100 ms each, one waiting). Prints each herd's
 * requests (counted by the server) and the time until the last caller was served — the
 * spread over several herds is the figure, since one herd on a loaded machine says little.
 *
 *     npx tsx bench/real-limiter-herds.ts token-bucket|fixed-window|concurrency [herds=8]
 */
import { fetchThrough } from '../src/http/index.js';
import { type DownstreamOptions, downstream } from '../src/runtime/downstream.js';
import { systemClock } from '../src/time/system-clock.js';
import {
  type LimitedServer,
  startConcurrencyServer,
  startFixedWindowServer,
  startTokenBucketServer,
} from '../test/support/limiter-servers.js';

/** Each limiter, and the lower bound its simulator model computes for this herd. */
const LIMITERS: Record<string, { start: () => Promise<LimitedServer>; bound: string }> = {
  'token-bucket': { start: () => startTokenBucketServer({ ratePerSecond: 100, burst: 10 }), bound: '190 requests / 0.90 s' },
  'fixed-window': { start: () => startFixedWindowServer({ limit: 10, windowMs: 100 }), bound: '190 requests / 0.90 s' },
  concurrency: {
    start: () => startConcurrencyServer({ concurrency: 10, queue: 1, serviceMs: 100 }),
    bound: '190 requests / 1.00 s',
  },
};

const PACED: DownstreamOptions = {
  budget: false,
  attemptTimeoutMs: 10_000,
  retry: {
    maxAttempts: Number.POSITIVE_INFINITY,
    maxElapsedMs: 60_000,
    backoff: { shape: 'constant', baseMs: 0, jitter: 'none' },
  },
  pacing: {},
};

/** One herd of 100: ms until the last caller was served. */
async function herd(url: string): Promise<number> {
  const api = downstream('herd', PACED);
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

const name = process.argv[2] ?? 'token-bucket';
const herds = Number(process.argv[3] ?? 8);
const limiter = LIMITERS[name];
if (limiter === undefined) throw new Error(`Unknown limiter '${name}': one of ${Object.keys(LIMITERS).join(', ')}`);
const server = await limiter.start();
// A first herd opens the pooled connections, as a warm client's would be.
await herd(server.url);
const rows: string[] = [];
for (let i = 0; i < herds; i++) {
  // Lets the limiter fill or reset completely before the next herd.
  await systemClock.sleep(300);
  server.resetCounts();
  const ms = await herd(server.url);
  rows.push(`${server.requests().total} requests / ${(ms / 1000).toFixed(2)} s`);
}
await server.close();
console.log(`${name} (lower bound ${limiter.bound}):\n  ${rows.join('\n  ')}`);
