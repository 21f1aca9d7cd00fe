// A real worker pool whose service times spread, met across a path whose latencies spread:
// express-queue (10 workers, one waiting place, on Express) whose handler takes a lognormal
// 100 ms (σ 0.5) per request, behind a TCP proxy that holds every chunk each way for a
// lognormal 10 ms (σ 0.5); both drawn from named seeds. 100 callers whose first tries arrive
// over 200 ms, each through a fresh `downstream().fetch` with `pacing: {}`, retried until
// served. The lower bound is the simulator's for the same arrivals on its concurrency model;
// its own run of the same herd (lognormal 100 ms services, lognormal 20 ms back) is printed
// beside the real one.
//
// That bound takes every service at 100 ms, which no client can reach when they spread: while
// one worker runs a 250 ms service the others run out of work. So each herd is also held
// against the bound on the services the pool actually ran, in the order they started
// (`workConservingFinish`: every worker busy whenever a caller has arrived with work for it).
// No herd may beat it (it is a bound on this real server, or it is no bound), and adaptive
// pacing must stay within 1.2× of it on average (with the proxy's mean way back for the last
// answer).
//
// Before, the pool's window, made when the search read a slow flight, counted only the first
// tries of the last service time as holding places. With service times that spread, first
// tries that left 150 ms before were still being served: the window's first requests met a
// full pool, and each rejection took a place from it for good (a mean of 1.34–1.39× the
// bound's time over 13 herds, three runs; now 1.26–1.28× on Node 20, 24 and 26).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BusyReruns } from '../support/machine-load.js';
import { herdBesideTwin, herdGuardMessage, herdOnWorkDone, twinFigure } from '../support/real-herd.js';
import { SecondLook } from '../support/second-look.js';
import {
  SPREAD_POOL_ARRIVAL_MS as ARRIVAL_MS,
  SPREAD_POOL_CALLERS as CALLERS,
  SPREAD_POOL_WAY_BACK_MS,
  type SpreadPool,
  spreadPoolHerd,
  startSpreadPool,
} from '../support/spread-pool.js';

// Enough herds that the figure checked is the pacer's rather than one draw of this machine's
// timers: with 13, runs of one build read means of 1.253–1.288×, against a bound of 1.31×.
const SEEDS = Array.from({ length: 21 }, (_, i) => i + 1);
/** Each herd's runaway guards: its requests, and its time on the pool's own draws, over their bounds. */
const REQUESTS_GUARD = 1.1;
const DRAWS_GUARD = 1.25;

describe('adaptive pacing against a real worker pool whose service times spread', () => {
  let spread: SpreadPool;
  beforeAll(async () => {
    spread = await startSpreadPool();
    // Three herds, not measured, before those that are: the pacer's own code runs warm in every
    // measured herd. A process's first herds are a miss of their own (docs/simulator.md, "A
    // process's first herd"); here the first measured herd took up to 1.66× the bound on the
    // pool's draws (warm herds 1.06–1.17×): three of the four herds over 1.25× in seven runs of
    // this test on one morning. After one herd unmeasured, the next was still slow in 3 of 14
    // runs of it in a vitest fork (1.36–1.68×: its rejections read after ~80 ms at the median
    // against ~30 in later herds, the client still slow to read its answers); after three, in
    // none of 10 (1.08–1.12×).
    for (const seed of [0, 101, 102])
      await herdBesideTwin(spread.pool, spread.proxy.url, `spread-pool-warm-up-herd-${seed}`, spreadPoolHerd(seed), 500);
  }, 60_000);
  afterAll(async () => {
    await spread?.close();
  });

  it(`${CALLERS} callers over ${ARRIVAL_MS} ms, ${SEEDS.length} herds: on average ≤ 1.31× the nominal bound's time (regression: 1.34–1.39×), each ≤ 1.1× its requests and within 1.0–1.25× the bound on the pool's own draws (a second look at one herd that is not), ≤ 1.15× on average`, {
    timeout: 150_000,
  }, async () => {
    const { pool, proxy } = spread;
    const reruns = new BusyReruns();
    /** One herd of `seed` (run again while the machine was busy) and its figures. */
    const look = async (seed: number) => {
      const setup = spreadPoolHerd(seed);
      // 500 ms apart: the last herd's requests are answered.
      const herd = await reruns.run(`seed ${seed}`, () => herdBesideTwin(pool, proxy.url, `spread-pool-${seed}`, setup, 500));
      const last = herd.allSucceededMs;
      console.log(
        twinFigure(
          `express-queue 10 workers, lognormal 100 ms services, across lognormal 10 + 10 ms, ${CALLERS} callers over ${ARRIVAL_MS} ms`,
          seed,
          herd,
        ),
      );
      expect(herd.failed).toBe(0);
      expect(herd.real.served).toBe(CALLERS);
      const served = pool.serviceTimes?.() ?? [];
      expect(served, `seed ${seed}: a service time per request served`).toHaveLength(CALLERS);
      const onWork = herdOnWorkDone(setup, served, SPREAD_POOL_WAY_BACK_MS);
      const onDraws = last / onWork.drawsBoundMs;
      console.log(
        `[figure] seed ${seed}: the bound on the pool's own draws ${(onWork.drawsBoundMs / 1000).toFixed(3)} s, ${onDraws.toFixed(3)}× it`,
      );
      // Strictly, with no time at all for the last answer's way back (the figure takes the
      // proxy's mean): no herd can beat that on this server, or it is no bound.
      const strict = onWork.drawsBoundMs - SPREAD_POOL_WAY_BACK_MS;
      expect(last / strict, `seed ${seed}: no herd beats the bound on the work the pool did`).toBeGreaterThanOrEqual(1);
      return {
        herd,
        requests: herd.real.total / herd.bound.totalRequests,
        time: last / herd.bound.allSucceededMs,
        onWork: last / onWork.boundMs,
        twinOnWork: onWork.twinMs / onWork.boundMs,
        onDraws,
      };
    };
    type Look = Awaited<ReturnType<typeof look>>;
    const overGuard = (figures: Look) =>
      figures.requests > REQUESTS_GUARD
        ? `${figures.requests.toFixed(3)}× the bound's requests`
        : figures.onDraws > DRAWS_GUARD
          ? `${figures.onDraws.toFixed(3)}× the bound on the pool's draws`
          : undefined;
    // Every herd measured counts in the means, a second look's first herd too.
    const looks: Look[] = [];
    // The guards below are runaway guards; the means are the target's. One undisturbed herd a
    // run over a guard gets a second look on its seed, which must hold (`SecondLook`). On this
    // machine every herd of eight runs of this test on Node 20 (168) stayed within 1.148× the
    // draws and 1.094× the requests; the CI machine met one undisturbed herd over a guard in
    // each of two runs on Node 20 (seed 9 at 1.336× the draws; then seed 4).
    const secondLook = new SecondLook();
    for (const seed of SEEDS) {
      const herds = await secondLook.run(
        `seed ${seed}`,
        () => look(seed),
        overGuard,
        (figures) => herdGuardMessage(`seed ${seed}`, figures.herd),
      );
      looks.push(...herds);
      const figures = herds[herds.length - 1] as Look;
      const message = herdGuardMessage(`seed ${seed}`, figures.herd);
      expect(figures.requests, message).toBeLessThanOrEqual(REQUESTS_GUARD);
      // A herd the machine was busy for ran again (`BusyReruns`).
      expect(figures.onDraws, message).toBeLessThanOrEqual(DRAWS_GUARD);
    }
    const average = (of: (figures: Look) => number) => looks.reduce((sum, figures) => sum + of(figures), 0) / looks.length;
    const mean = (of: (figures: Look) => number) => average(of).toFixed(3);
    const time = (figures: Look) => figures.time;
    const onDraws = (figures: Look) => figures.onDraws;
    console.log(`[figure] express-queue, service times that spread: mean ${mean(time)}× the bound's time`);
    // The server's draws are the same every run (their mean over these herds is 101.6 ms, not
    // 100): the same herds against the bound for the service times they actually took.
    console.log(
      `[figure] the same against the bound for the work the pool did: mean ${mean((f) => f.onWork)}× (the simulator on those service times: ${mean((f) => f.twinOnWork)}×)`,
    );
    console.log(`[figure] against the bound on the pool's own draws: mean ${mean(onDraws)}×`);
    expect(average(time)).toBeLessThanOrEqual(1.31);
    // Within 1.2× on average, by a margin (1.088–1.098× on Node 20, 24 and 26 when added; every
    // herd then within 1.056–1.156×).
    expect(average(onDraws)).toBeLessThanOrEqual(1.15);
  });
});
