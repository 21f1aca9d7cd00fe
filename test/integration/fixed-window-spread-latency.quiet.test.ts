// A real fixed window met across a path whose latencies spread: express-rate-limit (10 per
// 100 ms, on Express) behind a TCP proxy that holds every chunk each way for a lognormal
// 10 ms (σ 0.5, drawn from a named seed; order kept per connection). 100 callers whose first
// tries arrive over 200 ms, each through a fresh `downstream().fetch` with `pacing: {}`,
// retried until served. The lower bound is the simulator's for the same arrivals on its
// fixed-window model; its own run of the same herd on lognormal 20 ms round trips is printed
// beside the real one.
//
// Before, the run of first tries that ended the search was cut short by a rejection that came
// back ahead of the window's other successes and read the window low; the pacer then climbed
// to what that reading allowed over a second, forgot at its next cut that the reading was on
// trial, and read its own slow sending as the callee's rate: medians of 1.37–1.56× the
// bound's time over 9–13 herds (five runs; now 1.21–1.29× over nine, on Node 20, 24 and 26).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchThrough } from '../../src/http/index.js';
import { SeededRandom } from '../../src/random/random.js';
import { downstream } from '../../src/runtime/downstream.js';
import { lognormal } from '../../src/sim/distributions.js';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import { firstTryTimes, herdSpreadLowerBound, runHerd } from '../../src/sim/herd-run.js';
import { systemClock } from '../../src/time/system-clock.js';
import { type DelayProxy, jitterProxy } from '../support/delay-proxy.js';
import { type LimitedServer, startFixedWindowServer } from '../support/limiter-servers.js';
import { arrivalsThrough, herdTwin, PACED_UNTIL_SERVED } from '../support/real-herd.js';

const CALLERS = 100;
const ARRIVAL_MS = 200;
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];

function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1] as number;
}

describe('adaptive pacing against a real fixed window across latencies that spread', () => {
  let limiter: LimitedServer;
  let proxy: DelayProxy;
  beforeAll(async () => {
    limiter = await startFixedWindowServer({ limit: 10, windowMs: 100 });
    const random = new SeededRandom(7);
    proxy = await jitterProxy({ port: Number(new URL(limiter.url).port) }, () => lognormal(random, 10, 0.5));
    // V8 compiles the HTTP client and kindly's code on a herd through another downstream.
    const warm = downstream('spread-window-warm-up', { ...PACED_UNTIL_SERVED, budget: false, attemptTimeoutMs: 10_000 });
    await Promise.all(Array.from({ length: 50 }, async () => (await fetchThrough(warm, proxy.url)).arrayBuffer()));
  });
  afterAll(async () => {
    await proxy?.close();
    await limiter?.close();
  });

  it(`${CALLERS} callers over ${ARRIVAL_MS} ms, ${SEEDS.length} herds: at the median ≤ 1.33× the bound's time (regression: 1.37–1.56×) and ≤ 1.12× its requests`, {
    timeout: 120_000,
  }, async () => {
    const requests: number[] = [];
    const times: number[] = [];
    for (const seed of SEEDS) {
      const setup = herdTwin({ model: 'fixed-window', latencyMs: 20, distribution: 'lognormal' }, CALLERS, ARRIVAL_MS, seed);
      const bound = herdSpreadLowerBound(setup, 1);
      const simulated = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const api = downstream(`spread-window-${seed}`, { ...PACED_UNTIL_SERVED, budget: false, attemptTimeoutMs: 10_000 });
      await systemClock.sleep(300); // the last herd's windows are over
      limiter.resetCounts();
      const { allSucceededMs: last, failed } = await arrivalsThrough(api, proxy.url, firstTryTimes(setup, seed));
      const real = limiter.requests();
      console.log(
        `[figure] express-rate-limit 10 / 100 ms across lognormal 10 + 10 ms, ${CALLERS} callers over ${ARRIVAL_MS} ms, ` +
          `seed ${seed}: real ${real.total} requests, ${(last / 1000).toFixed(3)} s (${(last / bound.allSucceededMs).toFixed(2)}×); ` +
          `simulated ${simulated.totalRequests}, ${(simulated.allSucceededMs / 1000).toFixed(3)} s; ` +
          `bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(3)} s`,
      );
      expect(failed).toBe(0);
      expect(real.served).toBe(CALLERS);
      // Each herd: a guard against a runaway (one read 1.18× here); the median below is the target.
      expect(real.total / bound.totalRequests, `seed ${seed}`).toBeLessThanOrEqual(1.25);
      requests.push(real.total / bound.totalRequests);
      times.push(last / bound.allSucceededMs);
    }
    // The target is 1.1×: the median reads 1.06–1.09×, two requests short of it, so 1.12 here.
    expect(median(requests)).toBeLessThanOrEqual(1.12);
    expect(median(times)).toBeLessThanOrEqual(1.33);
  });
});
