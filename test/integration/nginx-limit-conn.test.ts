// A worker pool with no waiting place, for real: nginx's `limit_conn` (10 requests at once,
// 503 beyond) in front of a loopback server that takes 100 ms per request, run by this test.
// 100 callers whose first tries arrive over 200 ms — longer than a service time — each
// through a fresh `downstream().fetch` with `pacing: {}`, retried until served. The lower
// bound is the simulator's for the same arrivals on its concurrency model (`queue: 0`), and
// the simulator's own run of the same herd is printed beside the real one.
//
// Before, the pool's answers to the first tries it served were all back long before the
// arrivals' last rejection, so nothing read the slow flight: the search ended on a probe's
// guess (~8/s) and start-up crept up one request per service time — 1.93–2.09× the bound’s
// time here (seeds 1 and 2; the simulator read 1.93×).
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downstream } from '../../src/runtime/downstream.js';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import { firstTryTimes, herdSpreadLowerBound, runHerd } from '../../src/sim/herd-run.js';
import { systemClock } from '../../src/time/system-clock.js';
import { NGINX, type Nginx, startNginxConnLimit } from '../support/nginx.js';
import { arrivalsThrough, herdTwin, TWIN_HERD_OPTIONS, warmUpThrough } from '../support/real-herd.js';

const CALLERS = 100;
const ARRIVAL_MS = 200;

describe.skipIf(!existsSync(NGINX))('adaptive pacing against nginx limit_conn (10 at once, 100 ms each, no queue)', () => {
  let nginx: Nginx;
  beforeAll(async () => {
    nginx = await startNginxConnLimit({ connections: 10, serviceMs: 100 });
    await warmUpThrough(nginx.url, 'limit-conn-warm-up');
  });
  afterAll(async () => {
    await nginx?.stop();
  });

  for (const seed of [1, 2]) {
    it(`${CALLERS} callers over ${ARRIVAL_MS} ms (seed ${seed}): ≤ 1.1× the bound's requests and ≤ 1.35× its time (regression: 1.93–2.09×)`, {
      timeout: 60_000,
    }, async () => {
      const setup = herdTwin({ model: 'concurrency', queue: 0 }, CALLERS, ARRIVAL_MS, seed);
      const bound = herdSpreadLowerBound(setup, 1);
      const simulated = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
      const api = downstream(`limit-conn-${seed}`, TWIN_HERD_OPTIONS);
      await systemClock.sleep(300);
      nginx.resetLog();
      const { allSucceededMs: last, failed } = await arrivalsThrough(api, nginx.url, firstTryTimes(setup, seed));
      await systemClock.sleep(50); // nginx writes the last log lines after answering
      const real = nginx.requests();
      console.log(
        `[figure] nginx limit_conn 10 × 100 ms, ${CALLERS} callers over ${ARRIVAL_MS} ms, seed ${seed}: ` +
          `real ${real.total} requests, ${(last / 1000).toFixed(3)} s; simulated ${simulated.totalRequests}, ` +
          `${(simulated.allSucceededMs / 1000).toFixed(3)} s; bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(3)} s`,
      );
      expect(failed).toBe(0);
      expect(real.served).toBe(CALLERS);
      expect(real.total).toBe(real.served + real.rejected);
      expect(real.total / bound.totalRequests).toBeLessThanOrEqual(1.1);
      expect(last / bound.allSucceededMs).toBeLessThanOrEqual(1.35);
    });
  }
});
