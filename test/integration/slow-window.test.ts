// Adaptive pacing with its defaults against a real fixed window of two seconds
// (express-rate-limit on Express, 20 requests per 2 s, no wait hint): 100 callers at once
// through `downstream().fetch`, each retrying until served. The pacer's estimator looks back
// 500 ms, and a window this long once defeated it: 325–327 requests and 10.3–10.8 s against a
// bound of 180 and 8 s. The simulated herd on the fixed-window model is printed beside it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import { herdLowerBound, runHerd } from '../../src/sim/herd-run.js';
import { type LimitedServer, startFixedWindowServer } from '../support/limiter-servers.js';
import { PACED_UNTIL_SERVED, realHerd } from '../support/real-herd.js';

const LIMIT = 20;
const WINDOW_MS = 2_000;
const CALLERS = 100;

describe('adaptive pacing against a real two-second window (express-rate-limit), defaults', () => {
  let server: LimitedServer;
  beforeAll(async () => {
    server = await startFixedWindowServer({ limit: LIMIT, windowMs: WINDOW_MS });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('every caller served in ≤ 1.2× the bound’s requests and time (regression: 1.8× and 1.3×)', async () => {
    const setup = { clients: CALLERS, capacity: LIMIT, slotMs: WINDOW_MS, seed: 1, server: { model: 'fixed-window' as const } };
    const bound = herdLowerBound(setup);
    const run = await realHerd(server.url, CALLERS, { ...PACED_UNTIL_SERVED, budget: false, attemptTimeoutMs: 10_000 });
    const real = server.requests();
    const simulated = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
    console.log(
      `[figure] express-rate-limit ${LIMIT} per ${WINDOW_MS} ms, ${CALLERS} callers, adaptive defaults: ` +
        `real ${real.total} requests, ${(run.allSucceededMs / 1000).toFixed(2)} s; ` +
        `simulated ${simulated.totalRequests}, ${(simulated.allSucceededMs / 1000).toFixed(2)} s; ` +
        `bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(2)} s`,
    );
    expect(run.failed).toBe(0);
    expect(real.served).toBe(CALLERS);
    expect(real.total).toBeLessThanOrEqual(1.2 * bound.totalRequests);
    expect(run.allSucceededMs).toBeLessThanOrEqual(1.2 * bound.allSucceededMs);
  });
});
