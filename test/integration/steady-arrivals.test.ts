// Adaptive pacing with its defaults while new callers keep arriving faster than a real limiter
// serves them — the everyday overload, not a herd at one instant. `limiter`'s TokenBucket (100
// a second, a burst of 10, 429 when empty, no wait hint) in front of a loopback server; 400
// callers whose first tries arrive at random over 2 s (twice its rate), each through
// `downstream().fetch` and retried until served. The lower bound is the simulator's for the
// same arrivals: first tries leave when they arrive, and no retry meets an empty bucket.
// Retries used to leave at the callee's whole rate on top of the arrivals: 728–735 requests
// against a bound of 591.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchThrough } from '../../src/http/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { firstTryTimes, herdSpreadLowerBound } from '../../src/sim/herd-run.js';
import { systemClock } from '../../src/time/system-clock.js';
import { type LimitedServer, startTokenBucketServer } from '../support/limiter-servers.js';
import { PACED_UNTIL_SERVED } from '../support/real-herd.js';

const CALLERS = 400;
const ARRIVAL_MS = 2_000;

describe('adaptive pacing against a real token bucket while callers keep arriving (limiter TokenBucket), defaults', () => {
  let server: LimitedServer;
  beforeAll(async () => {
    server = await startTokenBucketServer({ ratePerSecond: 100, burst: 10 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('400 callers over 2 s: ≤ 1.1× the bound’s requests and ≤ 1.2× its time (regression: 1.23–1.24× the requests)', {
    timeout: 90_000,
  }, async () => {
    const setup = {
      clients: CALLERS,
      capacity: 10,
      slotMs: 100,
      seed: 1,
      arrivalMs: ARRIVAL_MS,
      server: { model: 'token-bucket' as const },
    };
    const bound = herdSpreadLowerBound(setup, 1);
    const api = downstream('steady-arrivals', { ...PACED_UNTIL_SERVED, budget: false, attemptTimeoutMs: 10_000 });
    // A service that meets an overload has been running: one herd first (V8 compiles the HTTP
    // client and kindly's code), then quiet until the pacer has stopped throttling.
    await Promise.all(Array.from({ length: 100 }, async () => (await fetchThrough(api, server.url)).arrayBuffer()));
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    server.resetCounts();
    const start = systemClock.monotonic();
    let last = 0;
    let failed = 0;
    await Promise.all(
      firstTryTimes(setup, setup.seed).map(async (at) => {
        await new Promise((resolve) => setTimeout(resolve, at));
        try {
          const res = await fetchThrough(api, server.url);
          await res.arrayBuffer();
          if (res.ok) last = Math.max(last, systemClock.monotonic() - start);
          else failed++;
        } catch {
          failed++;
        }
      }),
    );
    const real = server.requests();
    console.log(
      `[figure] limiter TokenBucket 100/s, burst 10, ${CALLERS} callers over ${ARRIVAL_MS} ms, adaptive defaults: ` +
        `real ${real.total} requests, ${(last / 1000).toFixed(2)} s; bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(2)} s`,
    );
    expect(failed).toBe(0);
    expect(real.served).toBe(CALLERS);
    expect(real.total).toBeLessThanOrEqual(1.1 * bound.totalRequests);
    expect(last).toBeLessThanOrEqual(1.2 * bound.allSucceededMs);
  });
});
