// The token-bucket, fixed-window, GCRA and concurrency models against real limiters nobody
// here wrote: `limiter`'s TokenBucket, `express-rate-limit` (on Express), `redis-gcra` (on a
// real redis-server) and `express-queue` (on Express), each in front of a loopback server
// this test starts; express-queue also behind a TCP proxy that holds its answers 20 ms, as a
// callee across a network. The same herd — 100 callers at once through `downstream().fetch`,
// each retrying until served — runs against the real limiter and against the model; both
// figures are printed side by side (requests counted by the server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DownstreamOptions } from '../../src/runtime/downstream.js';
import { herdLowerBound } from '../../src/sim/herd-run.js';
import { HERD_RETRY_OPTIONS } from '../../src/sim/herd-strategies.js';
import type { ServerSpec } from '../../src/sim/models/index.js';
import { HERD_STRATEGIES, herdRow } from '../../src/sim/scenarios/herd.js';
import { systemClock } from '../../src/time/system-clock.js';
import { withReturnDelay } from '../support/delay-proxy.js';
import {
  firstTriesSpanMs,
  type LimitedServer,
  startConcurrencyServer,
  startFixedWindowServer,
  startGcraServer,
  startTokenBucketServer,
} from '../support/limiter-servers.js';
import { PACED_UNTIL_SERVED, realHerd } from '../support/real-herd.js';

type Spread = { min: number; median: number; max: number };

// Every row of the herd table but `exponential` (in lockstep like `fixed`, and 11–26 s a herd;
// bench/real-limiter-herds.ts runs it): a jitter that spreads, the floor's, none at all.
const STRATEGIES: Record<string, DownstreamOptions> = {
  full: { retry: HERD_RETRY_OPTIONS.full },
  equal: { retry: HERD_RETRY_OPTIONS.equal },
  decorrelated: { retry: HERD_RETRY_OPTIONS.decorrelated },
  floor: { retry: HERD_RETRY_OPTIONS.floor },
  fixed: { retry: HERD_RETRY_OPTIONS.fixed },
  adaptive: PACED_UNTIL_SERVED,
};

/**
 * Seeds of the model per row. A real herd is one draw; if the model were exact, it would
 * exceed the largest of n simulated herds with probability 1 / (n + 1) — 2 % per row at 50
 * seeds, a false alarm on most CI runs over the 25 rows checked against the model. At 500 it
 * is 0.2 % a row (and the check below also allows 10 % over the median).
 */
const SEEDS = 500;

type Server = Omit<ServerSpec, 'capacity' | 'slotMs'>;

/**
 * The same herd against the model: 100 clients, 10 per 100 ms, the first tries arriving over
 * `arrivalMs` — as long as the real herd's took to reach the limiter. Sent at once, they do
 * not arrive at once: one process's 100 sends, their connections and the limiter's event loop
 * spread them over ~5–120 ms on this machine. A herd in lockstep (`fixed`) keeps that spread
 * in every round (its rejections come back as spread, and so do its retries), and a bucket
 * refills while a round arrives: decided at one instant, the model sent 550 requests where the
 * real herds against the buckets sent 340–480.
 */
function simulated(
  server: Server,
  strategy: string,
  seeds: number,
  arrivalMs: number,
): { requests: Spread; ms: Spread; bound: number } {
  const setup = { clients: 100, capacity: 10, slotMs: 100, seed: 1, server, arrivalMs };
  const row = herdRow(setup, HERD_STRATEGIES.find((s) => s.name === strategy)!, seeds);
  return { requests: row.totalRequests, ms: row.allSucceededMs, bound: herdLowerBound(setup).totalRequests };
}

/**
 * The model of the server the herd actually met. express-queue's worker is held by a
 * `sleep(100)` plus this machine's timer and event-loop delays: 100.8 ms median on an idle
 * machine, 107–118 ms mean (p90 up to 180 ms) under load, and a server with 15 % less capacity
 * needs more retries — so the concurrency model draws its service times from the ones measured
 * in this herd instead of a constant 100 ms.
 */
function measuredModel(limiter: { server: Server }, server: LimitedServer): Server {
  const times = server.serviceTimes?.();
  if (times === undefined || times.length === 0) return limiter.server;
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  return { ...limiter.server, service: { ms: mean, samples: [...times] } };
}

const limiters: Array<{ server: Server; name: string; start: () => Promise<LimitedServer> }> = [
  // 100 r/s with a bucket of 10: the model's default capacity (10 per 100 ms, burst 10).
  {
    server: { model: 'token-bucket' },
    name: 'limiter TokenBucket',
    start: () => startTokenBucketServer({ ratePerSecond: 100, burst: 10 }),
  },
  {
    server: { model: 'fixed-window' },
    name: 'express-rate-limit',
    start: () => startFixedWindowServer({ limit: 10, windowMs: 100 }),
  },
  { server: { model: 'gcra' }, name: 'redis-gcra', start: () => startGcraServer({ ratePerSecond: 100, burst: 10 }) },
  // 10 served at once, 100 ms each, one more may wait (express-queue admits through its queue:
  // with no room there it serves nothing).
  {
    server: { model: 'concurrency', queue: 1 },
    name: 'express-queue',
    start: () => startConcurrencyServer({ concurrency: 10, queue: 1, serviceMs: 100 }),
  },
  // The same pool across a network: every answer held 20 ms on its way back by a TCP proxy
  // (the model's `latencyMs`, a rejection's included), so a worker is free ~20 ms before its
  // caller learns it (the pacer's window then sends ahead of an answer).
  {
    server: { model: 'concurrency', queue: 1, latencyMs: 20 },
    name: 'express-queue 20 ms away',
    start: async () => withReturnDelay(await startConcurrencyServer({ concurrency: 10, queue: 1, serviceMs: 100 }), 20),
  },
];

for (const limiter of limiters) {
  describe(`${limiter.server.model} model vs ${limiter.name} (100 r/s)`, () => {
    let server: LimitedServer;
    /** Lets the limiter fill/reset completely before a herd. */
    const rest = () => systemClock.sleep(300);
    beforeAll(async () => {
      server = await limiter.start();
      // A first herd opens the pooled connections: measured herds then reach the server as
      // fast as a warm client's do (a cold herd's connection set-up spreads it over tens of ms).
      await rest();
      await realHerd(server.url, 100, { ...STRATEGIES.decorrelated, budget: false }, true);
    });
    afterAll(async () => {
      await server?.close();
    });

    for (const strategy of Object.keys(STRATEGIES)) {
      it(`${strategy}: every caller served; the model is not optimistic`, async () => {
        await rest();
        server.resetCounts();
        // Marked: the limiter's log then tells the first tries (`x-retry-attempt: 0`) from retries.
        const run = await realHerd(server.url, 100, { ...STRATEGIES[strategy], budget: false, attemptTimeoutMs: 10_000 }, true);
        const real = server.requests();
        const model = measuredModel(limiter, server);
        const arrivals = server.arrivals();
        // The span is the first tries' own (each marked, by caller), not the first 100 arrivals'.
        const firstTries = arrivals.filter((a) => a.previousAttempts === 0);
        expect(new Set(firstTries.map((a) => a.caller)).size).toBe(100);
        const arrivalMs = firstTriesSpanMs(firstTries, 100);
        // The adaptive row's model is only printed (its check is against the bound).
        const sim = simulated(model, strategy, strategy === 'adaptive' ? 50 : SEEDS, arrivalMs);
        const service = model.service === undefined ? '' : ` (service ${model.service.ms.toFixed(1)} ms mean)`;
        console.log(
          `[figure] ${limiter.name} ${strategy}: real ${real.total} requests, ${(run.allSucceededMs / 1000).toFixed(3)} s${service}, first tries over ${arrivalMs.toFixed(1)} ms; ` +
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
          // One real herd cannot show a median within ±10 % (bench/real-limiter-herds.ts and
          // docs/simulator.md do, over several); what one herd must do is not need more than
          // the model allows: its worst of SEEDS seeds, or 10 % over its median (the accuracy
          // the models are held to), whichever is higher. The worst seed alone is not enough:
          // a real herd is one draw with the machine's own timing noise on top of the
          // model's, and 75 rows per CI run (25 here, three Nodes) each land just above
          // the model's worst now and then (real 299 against a worst of 298, once). A model
          // optimistic by more than 10 % still fails here on most herds.
          const allowed = Math.max(sim.requests.max, Math.ceil(1.1 * sim.requests.median));
          expect(real.total).toBeLessThanOrEqual(allowed);
        }
      });
    }
  });
}
