// The herd against a real server: `clients` callers in this process, all at once (or arriving
// over time: `arrivalsThrough`), each one `downstream().fetch` until it succeeds. Requests are counted by the server (its log).

import { createFetch, fetchThrough } from '../../src/http/index.js';
import type { Downstream, DownstreamOptions } from '../../src/runtime/downstream.js';
import { downstream } from '../../src/runtime/downstream.js';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import { firstTryTimes, type HerdRun, type HerdSetup, herdSpreadLowerBound, runHerd } from '../../src/sim/herd-run.js';
import { workConservingFinish } from '../../src/sim/models/concurrency.js';
import type { LowerBound, ServerSpec } from '../../src/sim/models/index.js';
import { systemClock } from '../../src/time/system-clock.js';
import { HerdTimeline } from './herd-timeline.js';
import { herdCallerUrl } from './limiter-servers.js';
import { cpuMark, describeLoad, loadBetween, loopHeldMeter, type MachineLoad } from './machine-load.js';

/** Adaptive pacing as a herd's callers use it: retried until served, when is the pacer's business. */
export const PACED_UNTIL_SERVED: DownstreamOptions = {
  retry: {
    maxAttempts: Number.POSITIVE_INFINITY,
    maxElapsedMs: 60_000,
    backoff: { shape: 'constant', baseMs: 0, jitter: 'none' },
  },
  pacing: {},
};

/** A herd's downstream beside its twin: retried until served, no budget, a long attempt timeout. */
export const TWIN_HERD_OPTIONS: DownstreamOptions = { ...PACED_UNTIL_SERVED, budget: false, attemptTimeoutMs: 10_000 };

/** V8 compiles the HTTP client and kindly's code on a herd of 50 through a downstream of its own. */
export async function warmUpThrough(url: string, name: string): Promise<void> {
  const warm = downstream(name, TWIN_HERD_OPTIONS);
  await Promise.all(Array.from({ length: 50 }, async () => (await fetchThrough(warm, url)).arrayBuffer()));
}

/** A real herd and the simulator's run of the same arrivals (`herdBesideTwin`). */
export interface TwinHerd {
  /** Requests the real server counted. */
  real: { total: number; served: number };
  /** When the last real caller's success arrived, ms after the start. */
  allSucceededMs: number;
  failed: number;
  simulated: HerdRun;
  bound: LowerBound;
  /** What the rest of the machine did while the real herd ran. */
  load: MachineLoad;
  /** What the herd's downstream did, 100 ms at a time: said with a herd that broke a guard. */
  timeline: HerdTimeline;
}

/**
 * One herd of `setup`'s arrivals against the real `limiter` at `url` (the limiter itself, or a
 * proxy in front of it), through a fresh downstream `name`, after a pause of `pauseMs` (the
 * last herd's answers and windows are over); beside it, the simulator's run of the same setup
 * and the lower bound for its arrivals.
 */
export async function herdBesideTwin(
  limiter: { resetCounts(): void; requests(): { total: number; served: number } },
  url: string,
  name: string,
  setup: HerdSetup,
  pauseMs: number,
): Promise<TwinHerd> {
  const bound = herdSpreadLowerBound(setup, 1);
  const simulated = runHerd(setup, ADAPTIVE_HERD_STRATEGY);
  const api = downstream(name, TWIN_HERD_OPTIONS);
  const timeline = new HerdTimeline(api);
  await systemClock.sleep(pauseMs);
  limiter.resetCounts();
  const from = cpuMark();
  const loopHeld = loopHeldMeter();
  const { allSucceededMs, failed } = await arrivalsThrough(api, url, firstTryTimes(setup, setup.seed));
  const load = { ...loadBetween(from, cpuMark()), loopHeldMs: loopHeld() };
  const { total, served } = limiter.requests();
  return { real: { total, served }, allSucceededMs, failed, simulated, bound, load, timeline };
}

/** What a per-herd guard says when `herd` breaks it: `what`, the machine's load, the timeline. */
export function herdGuardMessage(what: string, herd: TwinHerd): string {
  return `${what} (${describeLoad(herd.load)})\n${herd.timeline.describe()}`;
}

/** The figure line of one herd beside its twin (`what`: the limiter and the herd). */
export function twinFigure(what: string, seed: number, herd: TwinHerd): string {
  const { real, allSucceededMs: last, simulated, bound } = herd;
  return (
    `[figure] ${what}, seed ${seed}: real ${real.total} requests, ${(last / 1000).toFixed(3)} s ` +
    `(${(last / bound.allSucceededMs).toFixed(2)}×); simulated ${simulated.totalRequests}, ` +
    `${(simulated.allSucceededMs / 1000).toFixed(3)} s; bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(3)} s ` +
    `(${describeLoad(herd.load)})`
  );
}

/**
 * The herd's bounds and twin on the service times a real worker pool actually took for it
 * (`serviceTimes`: one per request served, ms, in the order they started). A pool that draws
 * its service times from a seeded stream gives each herd the same draws every run, and their
 * mean is not the model's: the nominal bound (`ceil(callers / workers)` × the nominal service
 * time, plus the way back) is then short or long by the draws' luck, the same for every build.
 * - `boundMs`: that bound on their mean instead (no client serves the same work in less time
 *   than the work divided by the workers), and `twinMs`, the simulator drawing from them;
 * - `drawsBoundMs`: the bound on the draws themselves, in their order (`workConservingFinish`:
 *   every worker busy whenever a caller has arrived with work for it), plus `wayBackMs` for the
 *   last answer. Services that spread leave workers idle that no client can keep busy, so it
 *   is later than `boundMs`, and it is what the pool allowed: without the way back, no herd
 *   can beat it.
 */
export function herdOnWorkDone(
  setup: HerdSetup,
  serviceTimes: readonly number[],
  wayBackMs: number,
): { boundMs: number; twinMs: number; drawsBoundMs: number } {
  const server = setup.server;
  if (server?.model !== 'concurrency' || serviceTimes.length === 0) {
    throw new Error('Expected a worker pool herd and the service times it took');
  }
  const ms = serviceTimes.reduce((a, b) => a + b, 0) / serviceTimes.length;
  const measured: HerdSetup = { ...setup, server: { ...server, service: { ms, samples: serviceTimes } } };
  return {
    boundMs: herdSpreadLowerBound(measured, 1).allSucceededMs,
    twinMs: runHerd(measured, ADAPTIVE_HERD_STRATEGY).allSucceededMs,
    drawsBoundMs: workConservingFinish(serviceTimes, firstTryTimes(setup, setup.seed), setup.capacity) + wayBackMs,
  };
}

/**
 * The simulator's twin of a real herd against a callee of 10 per 100 ms: `clients` callers
 * whose first tries arrive over `arrivalMs` (drawn from `seed`), on the model `server`.
 */
export function herdTwin(
  server: Omit<ServerSpec, 'capacity' | 'slotMs'>,
  clients: number,
  arrivalMs: number,
  seed: number,
): HerdSetup {
  return { clients, capacity: 10, slotMs: 100, seed, arrivalMs, server };
}

export interface RealHerdRun {
  /** When the last caller's success arrived, ms after the start. */
  allSucceededMs: number;
  failed: number;
  /** Mean time from an attempt's start to its answer, ms (what the model's latency stands for). */
  meanLatencyMs: number;
  /** From the first first try's start to the last one's, ms (the model's `arrivalMs`). */
  firstTrySpreadMs: number;
}

/**
 * `clients` callers at once through a fresh downstream with `options`, each until served or
 * given up. `marked`: each attempt carries kindly's `x-retry-attempt` and each caller names
 * itself in the query (`herdCallerUrl`), so a limiter's log tells first tries from retries.
 */
export async function realHerd(url: string, clients: number, options: DownstreamOptions, marked = false): Promise<RealHerdRun> {
  const api = downstream(`herd-${clients}`, options);
  let latencySum = 0;
  let answers = 0;
  let firstTryFrom = Number.POSITIVE_INFINITY;
  let firstTryTo = Number.NEGATIVE_INFINITY;
  api.on('attempt-end', (e) => {
    latencySum += e.durationMs;
    answers++;
  });
  api.on('attempt-start', (e) => {
    if (e.attempt !== 1) return;
    firstTryFrom = Math.min(firstTryFrom, e.atMs);
    firstTryTo = Math.max(firstTryTo, e.atMs);
  });
  const { allSucceededMs, failed } = await arrivalsThrough(
    api,
    url,
    Array.from({ length: clients }, () => 0),
    marked,
  );
  return {
    allSucceededMs,
    failed,
    meanLatencyMs: answers === 0 ? 0 : latencySum / answers,
    firstTrySpreadMs: firstTryTo - firstTryFrom,
  };
}

/**
 * One caller per entry of `times`, each starting that many ms after now (0: at once) and
 * calling `url` through `api` until served or given up. Returns when the last success
 * arrived (ms after now) and how many callers failed. `marked`: as `realHerd`'s.
 */
export async function arrivalsThrough(
  api: Downstream,
  url: string,
  times: readonly number[],
  marked = false,
): Promise<{ allSucceededMs: number; failed: number }> {
  // kindly sends its attempt header only where told to (or inside a deadline scope).
  const send = createFetch(api, marked ? { propagateHeaders: true } : undefined);
  const start = systemClock.monotonic();
  let last = 0;
  let failed = 0;
  await Promise.all(
    times.map(async (at, caller) => {
      if (at > 0) await systemClock.sleep(at);
      try {
        const res = await send(marked ? herdCallerUrl(url, caller) : url);
        await res.arrayBuffer();
        if (res.ok) last = Math.max(last, systemClock.monotonic() - start);
        else failed++;
      } catch {
        failed++;
      }
    }),
  );
  return { allSucceededMs: last, failed };
}

/** The middle value (the upper of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  return [...values].sort((a, b) => a - b)[values.length >> 1] as number;
}
