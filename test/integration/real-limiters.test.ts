// The token-bucket, fixed-window, GCRA and concurrency models against real limiters nobody
// here wrote: `limiter`'s TokenBucket, `express-rate-limit` (on Express), `redis-gcra` (on a
// real redis-server) and `express-queue` (on Express), each in front of a loopback server
// this test starts. The same herd — 100 callers at once through `downstream().fetch`,
// each retrying until served — runs against the real limiter and against the model; both
// figures are printed side by side (requests counted by the server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DownstreamOptions } from '../../src/runtime/downstream.js';
import { HERD_RETRY_OPTIONS } from '../../src/sim/herd-strategies.js';
import { withDefaults } from '../../src/sim/scenario.js';
import { herd } from '../../src/sim/scenarios/herd.js';
import { systemClock } from '../../src/time/system-clock.js';
import {
  type LimitedServer,
  startConcurrencyServer,
  startFixedWindowServer,
  startGcraServer,
  startTokenBucketServer,
} from '../support/limiter-servers.js';
import { realHerd } from '../support/real-herd.js';

type Spread = { min: number; median: number; max: number };

const STRATEGIES: Record<string, DownstreamOptions> = {
  full: { retry: HERD_RETRY_OPTIONS.full },
  decorrelated: { retry: HERD_RETRY_OPTIONS.decorrelated },
  adaptive: {
    retry: {
      maxAttempts: Number.POSITIVE_INFINITY,
      maxElapsedMs: 60_000,
      backoff: { shape: 'constant', baseMs: 0, jitter: 'none' },
    },
    pacing: {},
  },
};

function simulated(
  server: string,
  strategy: string,
  extra: Record<string, number>,
): { requests: Spread; ms: Spread; bound: number } {
  const { json } = herd.run(withDefaults(herd, { server, strategy, seeds: 50, ...extra }), {});
  const row = (json.strategies as Array<{ totalRequests: Spread; allSucceededMs: Spread }>)[0]!;
  const bound = (json.lowerBound as { totalRequests: number }).totalRequests;
  return { requests: row.totalRequests, ms: row.allSucceededMs, bound };
}

const limiters: Array<{ model: string; name: string; start: () => Promise<LimitedServer>; extra?: Record<string, number> }> = [
  // 100 r/s with a bucket of 10: the model's default capacity (10 per 100 ms, burst 10).
  { model: 'token-bucket', name: 'limiter TokenBucket', start: () => startTokenBucketServer({ ratePerSecond: 100, burst: 10 }) },
  { model: 'fixed-window', name: 'express-rate-limit', start: () => startFixedWindowServer({ limit: 10, windowMs: 100 }) },
  { model: 'gcra', name: 'redis-gcra', start: () => startGcraServer({ ratePerSecond: 100, burst: 10 }) },
  // 10 served at once, 100 ms each, one more may wait (express-queue admits through its queue:
  // with no room there it serves nothing).
  {
    model: 'concurrency',
    name: 'express-queue',
    start: () => startConcurrencyServer({ concurrency: 10, queue: 1, serviceMs: 100 }),
    extra: { queue: 1 },
  },
];

for (const limiter of limiters) {
  describe(`${limiter.model} model vs ${limiter.name} (100 r/s)`, () => {
    let server: LimitedServer;
    /** Lets the limiter fill/reset completely before a herd. */
    const rest = () => systemClock.sleep(300);
    beforeAll(async () => {
      server = await limiter.start();
      // A first herd opens the pooled connections: measured herds then reach the server as
      // fast as a warm client's do (a cold herd's connection set-up spreads it over tens of ms).
      await rest();
      await realHerd(server.url, 100, { ...STRATEGIES.decorrelated, budget: false });
    });
    afterAll(async () => {
      await server?.close();
    });

    for (const strategy of Object.keys(STRATEGIES)) {
      it(`${strategy}: every caller served; the model is not optimistic`, async () => {
        await rest();
        server.resetCounts();
        const run = await realHerd(server.url, 100, { ...STRATEGIES[strategy], budget: false, attemptTimeoutMs: 10_000 });
        const real = server.requests();
        const sim = simulated(limiter.model, strategy, limiter.extra ?? {});
        console.log(
          `[figure] ${limiter.name} ${strategy}: real ${real.total} requests, ${(run.allSucceededMs / 1000).toFixed(3)} s; ` +
            `simulated ${sim.requests.median} (${sim.requests.min}–${sim.requests.max}) requests, ` +
            `${(sim.ms.median / 1000).toFixed(3)} s (${(sim.ms.min / 1000).toFixed(3)}–${(sim.ms.max / 1000).toFixed(3)})`,
        );
        expect(run.failed).toBe(0);
        expect(real.served).toBe(100);
        if (strategy === 'adaptive') {
          // The target is 1.1 × the bound; measured mostly 185–250 here on a loaded
          // 2-core machine, with outliers up to 323 (docs/simulator.md) — so this guard is
          // 2× the bound: a pacer that stopped pacing needs ~300–550.
          expect(real.total).toBeLessThanOrEqual(2 * sim.bound);
        } else {
          // The ±10 % target is not met for jittered rows (docs/simulator.md); what holds is
          // that a real herd needs no more requests than the model's worst seed.
          expect(real.total).toBeLessThanOrEqual(sim.requests.max);
        }
      });
    }
  });
}
