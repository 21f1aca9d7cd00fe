import type { Classification } from '../../classify/outcome.js';
import { isGiveUpError } from '../../errors/errors.js';
import { SeededRandom } from '../../random/random.js';
import type { CallOptions, DownstreamOptions } from '../../runtime/downstream.js';
import { VirtualClock } from '../../time/virtual-clock.js';
import { ANSWER_OK, ANSWER_REFUSED, type Dependency, REFUSED } from '../dependency.js';
import type { SimCallEnd } from '../sim-downstream.js';
import { type DeadDependencySetup, type DeadDependencyVariant, deadCallee, type VariantPolicies } from './dead-dependency.js';
import { DeadDependencyTally } from './dead-dependency-tally.js';

/**
 * `downstream()` as this scenario uses it. It is passed in: the simulator does not load the
 * async runtime (see the import-direction test), and whoever runs this check does.
 */
export type DownstreamFactory = (
  name: string,
  options: DownstreamOptions,
) => { call<T>(operation: () => Promise<T>, options?: CallOptions<T>): Promise<T> };

/** One row of the scenario, and the `downstream` to run it with. */
export interface RuntimeVariant extends VariantPolicies {
  /** `downstream` from `kindly-calls` (passed in: the simulator does not load the runtime). */
  downstream: DownstreamFactory;
}

/** What the simulated callee rejects an attempt with; the downstream's `classify` reads it as `REFUSED`. */
const REFUSED_ERROR = Object.freeze({ name: 'ConnectionRefused', code: 'ECONNREFUSED' });

/** The `downstream()` the calls go through: virtual time, the run's seed, and the callee's refusals read as `REFUSED`. */
function deadDependencyDownstream(
  setup: DeadDependencySetup,
  run: RuntimeVariant,
  clock: VirtualClock,
  tally: DeadDependencyTally,
): ReturnType<DownstreamFactory> {
  const { retry, breaker, downstream, budget = false } = run;
  return downstream('callee', {
    retry,
    budget,
    attemptTimeoutMs: setup.timeoutMs,
    clock,
    random: new SeededRandom(setup.seed),
    classify: (error): Classification | undefined => (error === REFUSED_ERROR ? REFUSED : undefined),
    breaker: tally.watchBreaker(breaker),
  });
}

/** One attempt at the callee: a promise settled on the clock as the callee answers (or never). */
function calleeAttempt(callee: Dependency, clock: VirtualClock, tally: DeadDependencyTally): () => Promise<void> {
  return () =>
    new Promise<void>((resolve, reject) => {
      const now = clock.monotonic();
      tally.perSecond.add(now);
      const answer = callee.call(now);
      if (answer === ANSWER_OK) clock.schedule(callee.latencyMs, resolve);
      else if (answer === ANSWER_REFUSED) clock.schedule(callee.refuseMs, () => reject(REFUSED_ERROR));
      // A hanging callee never answers: the downstream's attempt timeout ends the attempt.
    });
}

/** Calls that ended, counted as the simulator's `SimDownstream` counts them. */
class CallEnds {
  succeeded = 0;
  failed = 0;

  constructor(
    private readonly clock: VirtualClock,
    private readonly tally: DeadDependencyTally,
    private readonly observe: ((end: SimCallEnd) => void) | undefined,
  ) {}

  ok(call: number, attempts: number): void {
    this.succeeded++;
    this.observe?.({ call, ok: true, reason: undefined, attempts, refused: false, atMs: this.clock.monotonic() });
  }

  /** `retryFollows`: the last attempt's error said a retry would follow. */
  gaveUp(call: number, error: unknown, attempts: number, retryFollows: boolean): void {
    if (!isGiveUpError(error)) throw error;
    this.failed++;
    // Refused at admission: before any attempt, or when the retry that was to follow was refused.
    const refused = attempts === 0 || retryFollows;
    if (refused) this.tally.failFast(this.clock.monotonic());
    this.observe?.({ call, ok: false, reason: error.reason, attempts, refused, atMs: this.clock.monotonic() });
  }
}

/** Call `call` of the run, through `api`, its end told to `ends`. */
function startCall(api: ReturnType<DownstreamFactory>, attempt: () => Promise<void>, ends: CallEnds, call: number): void {
  let attempts = 0;
  let retryFollows = false;
  api
    .call(
      () => {
        attempts++;
        return attempt();
      },
      {
        onAttemptError: (_error, info) => {
          retryFollows = info.willRetry;
        },
      },
    )
    .then(
      () => ends.ok(call, attempts),
      (error: unknown) => ends.gaveUp(call, error, attempts, retryFollows),
    );
}

/**
 * The dead-dependency scenario run by the real `downstream()` instead of the simulator's
 * driver: its calls are promises, its sleeps and attempt timeouts timers of a `VirtualClock`,
 * its random draws those of a `SeededRandom(setup.seed)` — the same seed the simulation
 * creates. Arrivals and the callee are the same models (`Dependency`, steady arrivals). Each
 * timer's consequences run to completion before the next timer fires (`VirtualClock.runAll`
 * drains the promise continuations between timers), so on the same seed it makes the same
 * decisions in the same order as `runDeadDependency`, and the two must agree exactly.
 */
export async function runDeadDependencyOnDownstream(
  setup: DeadDependencySetup,
  run: RuntimeVariant,
): Promise<DeadDependencyVariant> {
  const clock = new VirtualClock({ startMs: 0 });
  const callee = deadCallee(setup);
  const tally = new DeadDependencyTally(setup.downFromMs + setup.downForMs);
  const api = deadDependencyDownstream(setup, run, clock, tally);
  const attempt = calleeAttempt(callee, clock, tally);
  const ends = new CallEnds(clock, tally, run.observe);
  const count = Math.ceil((setup.durationMs * setup.ratePerSecond) / 1000);
  const arrive = (call: number) => {
    // The next arrival is queued before this call starts, as `SteadyArrivals` does.
    if (call + 1 < count) clock.schedule(0, () => arrive(call + 1), ((call + 1) * 1000) / setup.ratePerSecond);
    startCall(api, attempt, ends, call);
  };
  if (count > 0) clock.schedule(0, () => arrive(0), 0);
  await clock.runAll(Number.MAX_SAFE_INTEGER);
  const calls = {
    variant: run.variant,
    breaker: run.breaker !== undefined,
    requests: count,
    succeeded: ends.succeeded,
    failed: ends.failed,
    breakerOpens: tally.breakerOpens,
  };
  return tally.row(calls, callee);
}
