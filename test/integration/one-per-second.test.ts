// Adaptive pacing with its defaults against a real token bucket of one request a second with
// no burst (`limiter`'s TokenBucket, 429 when empty, no wait hint) — the limit many public
// APIs state, and exactly the pacer's floor of one request per `maxSpacingMs`. 30 callers at
// once through `downstream().fetch`, each retrying until served. Paced at exactly the callee's
// rate, a request that left a few ms early found no token, and a cut could not go below the
// floor: 81–84 requests and 45–48 s against a bound of 59 and 29 s.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { herdLowerBound } from '../../src/sim/herd-run.js';
import { type LimitedServer, startTokenBucketServer } from '../support/limiter-servers.js';
import { PACED_UNTIL_SERVED, realHerd } from '../support/real-herd.js';

const CALLERS = 30;

describe('adaptive pacing against a real bucket of one request a second (limiter TokenBucket), defaults', () => {
  let server: LimitedServer;
  beforeAll(async () => {
    server = await startTokenBucketServer({ ratePerSecond: 1, burst: 1 });
    // The bucket starts empty: let it hold its one token, then count from zero.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    server.resetCounts();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('every caller served in ≤ 1.3× the bound’s requests and ≤ 1.45× its time (regression: 1.37–1.42× and 1.55–1.65×)', {
    timeout: 120_000,
  }, async () => {
    const bound = herdLowerBound({ clients: CALLERS, capacity: 1, slotMs: 1_000, server: { model: 'token-bucket' } });
    const run = await realHerd(server.url, CALLERS, { ...PACED_UNTIL_SERVED, budget: false, attemptTimeoutMs: 10_000 });
    const real = server.requests();
    console.log(
      `[figure] limiter TokenBucket 1/s, burst 1, ${CALLERS} callers, adaptive defaults: ` +
        `real ${real.total} requests, ${(run.allSucceededMs / 1000).toFixed(1)} s; ` +
        `bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(1)} s`,
    );
    expect(run.failed).toBe(0);
    expect(real.served).toBe(CALLERS);
    expect(real.total).toBeLessThanOrEqual(1.3 * bound.totalRequests);
    expect(run.allSucceededMs).toBeLessThanOrEqual(1.45 * bound.allSucceededMs);
  });
});
