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
import { BusyReruns } from '../support/machine-load.js';
import { herdBesideTwin, herdGuardMessage, herdTwin, median, type TwinHerd, twinFigure } from '../support/real-herd.js';
import { SecondLook } from '../support/second-look.js';
import { type SpreadWindow, startSpreadWindow } from '../support/spread-window.js';

const CALLERS = 100;
const ARRIVAL_MS = 200;
// Enough herds that the figure checked is the pacer's rather than one draw of this machine's
// timers: with 13, runs of one build read medians of 1.20–1.31×, against a bound of 1.33×.
const SEEDS = Array.from({ length: 21 }, (_, i) => i + 1);
/** Each herd's runaway guard on its requests over the bound's. */
const REQUESTS_GUARD = 1.25;
/** A herd's requests over the bound's. */
const overBound = (herd: TwinHerd) => herd.real.total / herd.bound.totalRequests;

describe('adaptive pacing against a real fixed window across latencies that spread', () => {
  let spread: SpreadWindow;
  beforeAll(async () => {
    spread = await startSpreadWindow('spread-window-warm-up');
  });
  afterAll(async () => {
    await spread?.close();
  });

  it(`${CALLERS} callers over ${ARRIVAL_MS} ms, ${SEEDS.length} herds: at the median ≤ 1.33× the bound's time (regression: 1.37–1.56×) and ≤ 1.12× its requests, each ≤ 1.25× (a second look at one that is not)`, {
    timeout: 120_000,
  }, async () => {
    const requests: number[] = [];
    const times: number[] = [];
    const reruns = new BusyReruns();
    const secondLook = new SecondLook();
    for (const seed of SEEDS) {
      const setup = herdTwin({ model: 'fixed-window', latencyMs: 20, distribution: 'lognormal' }, CALLERS, ARRIVAL_MS, seed);
      // Each herd: a guard against a runaway (one read 1.18× here); the medians below are the
      // target. One herd a run over it gets a second look on its seed (`SecondLook`): a CI
      // machine once met seed 11 at 1.77× (319 requests) with nothing else running.
      const herds = await secondLook.run(
        `seed ${seed}`,
        () =>
          reruns.run(`seed ${seed}`, () => herdBesideTwin(spread.limiter, spread.proxy.url, `spread-window-${seed}`, setup, 300)),
        (herd) => (overBound(herd) > REQUESTS_GUARD ? `${overBound(herd).toFixed(3)}× the bound's requests` : undefined),
        (herd) => herdGuardMessage(`seed ${seed}`, herd),
      );
      for (const herd of herds) {
        const { real, allSucceededMs: last, failed, bound } = herd;
        console.log(
          twinFigure(
            `express-rate-limit 10 / 100 ms across lognormal 10 + 10 ms, ${CALLERS} callers over ${ARRIVAL_MS} ms`,
            seed,
            herd,
          ),
        );
        expect(failed).toBe(0);
        expect(real.served).toBe(CALLERS);
        requests.push(overBound(herd));
        times.push(last / bound.allSucceededMs);
      }
      const herd = herds[herds.length - 1] as (typeof herds)[number];
      expect(overBound(herd), herdGuardMessage(`seed ${seed}`, herd)).toBeLessThanOrEqual(REQUESTS_GUARD);
    }
    // The target is 1.1×: the median reads 1.06–1.09×, two requests short of it, so 1.12 here.
    expect(median(requests)).toBeLessThanOrEqual(1.12);
    expect(median(times)).toBeLessThanOrEqual(1.33);
  });
});
