// A real fixed window met by a herd whose process stalls: express-rate-limit (10 per 100 ms,
// on Express) behind a TCP proxy that holds every chunk each way for a lognormal 10 ms (σ 0.5,
// a named seed). 100 callers whose first tries arrive over 200 ms, each through a fresh
// `downstream().fetch` with `pacing: {}`, retried until served — and 600 ms into each herd,
// once it paces, the event loop is blocked for 300 ms, as a long task, a GC pause or a loaded
// machine blocks it. The lower bound is the simulator's for the same arrivals.
//
// Before, every caller whose slot passed during the stall found it passed when its timer
// finally fired, and sent at once: 15 requests within 1 ms into a window of 10 (a 150 ms
// stall), and the pacer read that burst's answers as the callee's. Two runs of this test:
// medians of 1.19× and 1.23× the bound's requests, herds up to 1.32×; now 1.06× and 1.08×, up
// to 1.16× (Node 24). The stall's own 300 ms is lost either way: the time is not checked.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BusyReruns, describeLoad } from '../support/machine-load.js';
import { herdBesideTwin, herdTwin, median, twinFigure } from '../support/real-herd.js';
import { type SpreadWindow, startSpreadWindow } from '../support/spread-window.js';

const CALLERS = 100;
const ARRIVAL_MS = 200;
const PAUSE_MS = 300;
const STALL_AT_MS = 600;
const STALL_MS = 300;
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

/** Blocks the event loop for `ms`, `atMs` from now: nothing runs meanwhile, timers fire late. */
function stallAt(atMs: number, ms: number): void {
  setTimeout(() => {
    const end = performance.now() + ms;
    while (performance.now() < end) {
      // busy: the process does nothing else
    }
  }, atMs);
}

describe('adaptive pacing against a real fixed window when the calling process stalls', () => {
  let spread: SpreadWindow;
  beforeAll(async () => {
    spread = await startSpreadWindow('stall-window-warm-up');
  });
  afterAll(async () => {
    await spread?.close();
  });

  it(`${CALLERS} callers over ${ARRIVAL_MS} ms, the process blocked ${STALL_MS} ms in each of ${SEEDS.length} herds: at the median ≤ 1.12× the bound's requests (regression: 1.19–1.23×), none lost`, {
    timeout: 90_000,
  }, async () => {
    const requests: number[] = [];
    // The 300 ms hold is the test's own: only a hold beyond it disturbed the herd.
    const reruns = new BusyReruns({ plannedHoldMs: STALL_MS });
    for (const seed of SEEDS) {
      const setup = herdTwin({ model: 'fixed-window', latencyMs: 20, distribution: 'lognormal' }, CALLERS, ARRIVAL_MS, seed);
      const herd = await reruns.run(`seed ${seed}`, () => {
        stallAt(PAUSE_MS + STALL_AT_MS, STALL_MS);
        return herdBesideTwin(spread.limiter, spread.proxy.url, `stall-window-${seed}`, setup, PAUSE_MS);
      });
      console.log(twinFigure(`express-rate-limit 10 / 100 ms, a ${STALL_MS} ms stall at ${STALL_AT_MS} ms`, seed, herd));
      expect(herd.failed, describeLoad(herd.load)).toBe(0);
      expect(herd.real.served).toBe(CALLERS);
      requests.push(herd.real.total / herd.bound.totalRequests);
    }
    console.log(`[figure] a ${STALL_MS} ms stall: requests over the bound ${requests.map((r) => r.toFixed(3)).join(' ')}`);
    expect(median(requests)).toBeLessThanOrEqual(1.12);
  });
});
