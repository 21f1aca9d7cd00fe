import { SeededRandom } from '../../random/random.js';
import type { CallOptions, DownstreamOptions } from '../../runtime/downstream.js';
import { VirtualClock } from '../../time/virtual-clock.js';
import type { SimCallEnd } from '../sim-downstream.js';
import { attemptLatencies, type HedgingRun, type HedgingSetup, hedgeSeed, hedgingOptions, hedgingRun } from './hedging.js';

/**
 * `downstream()` as this scenario uses it (passed in: the simulator does not load the async
 * runtime, see the import-direction test), with the counts it reports.
 */
export type HedgedDownstreamFactory = (
  name: string,
  options: DownstreamOptions,
) => {
  call<T>(operation: (context: { readonly signal: AbortSignal }) => Promise<T>, options?: CallOptions<T>): Promise<T>;
  stats(): { hedges: number; hedgeWins: number };
};

/** An operation that honours its abort signal, as `fetch` does: answers after `ms`, or rejects when aborted. */
function answerOnClock(clock: VirtualClock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const cancel = clock.schedule(ms, resolve);
    signal.addEventListener(
      'abort',
      () => {
        cancel();
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/**
 * The hedging scenario run by the real `downstream()` instead of the simulator's driver: its
 * calls are promises, its hedge delays and the callee's answers timers of a `VirtualClock`,
 * its draws those of `SeededRandom(setup.seed)` (arrivals, first attempts, and the
 * downstream's own random, as the simulation's one stream) and of the hedges' stream. Each
 * attempt's operation honours its abort signal, as `fetch` does: the loser of a race ends
 * when the winner answers. On the same seed it must agree exactly with `runHedging`.
 */
export async function runHedgingOnDownstream(
  setup: HedgingSetup,
  hedging: boolean,
  downstream: HedgedDownstreamFactory,
  observe?: (end: SimCallEnd) => void,
): Promise<HedgingRun> {
  const clock = new VirtualClock({ startMs: 0 });
  const random = new SeededRandom(setup.seed);
  const hedgeRandom = new SeededRandom(hedgeSeed(setup.seed));
  const api = downstream('callee', { ...hedgingOptions(setup, hedging), clock, random });
  const latencyOf = attemptLatencies(setup);
  const ratePerMs = setup.ratePerSecond / 1000;
  const latencies: number[] = [];
  let requests = 0;
  let slowFirstAttempts = 0;
  const answerAfter = (ms: number, signal: AbortSignal) => answerOnClock(clock, ms, signal);
  const startCall = (call: number, startedAt: number) => {
    let sent = 0;
    const operation = (context: { readonly signal: AbortSignal }) => {
      const first = sent++ === 0;
      const latency = latencyOf(first ? random : hedgeRandom);
      if (first && latency.slow) slowFirstAttempts++;
      return answerAfter(latency.ms, context.signal);
    };
    void api.call(operation).then(() => {
      const atMs = clock.monotonic();
      latencies.push(atMs - startedAt);
      observe?.({ call, ok: true, reason: undefined, attempts: 1, refused: false, atMs });
    });
  };
  const arrival = () => {
    const now = clock.monotonic();
    const next = now - Math.log(1 - random.next()) / ratePerMs;
    if (next < setup.durationMs) clock.schedule(0, arrival, next);
    startCall(requests++, now);
  };
  clock.schedule(0, arrival, 0);
  await clock.runAll(10_000_000);
  const { hedges, hedgeWins } = api.stats();
  return hedgingRun(requests, slowFirstAttempts, hedges, hedgeWins, latencies);
}
