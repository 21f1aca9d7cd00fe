import type { Classification } from '../../classify/outcome.js';
import { isGiveUpError } from '../../errors/errors.js';
import { SeededRandom } from '../../random/random.js';
import type { CallOptions, DownstreamOptions } from '../../runtime/downstream.js';
import { VirtualClock } from '../../time/virtual-clock.js';
import { BucketCounter } from '../bucket-counter.js';
import { ANSWER_OK, ANSWER_REFUSED, Dependency, REFUSED } from '../dependency.js';
import type { DeadDependencySetup, DeadDependencyVariant, VariantPolicies } from './dead-dependency.js';

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

const BUCKET_MS = 1_000;

/** What the simulated callee rejects an attempt with; the downstream's `classify` reads it as `REFUSED`. */
const REFUSED_ERROR = Object.freeze({ name: 'ConnectionRefused', code: 'ECONNREFUSED' });

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
  const { variant, retry, breaker: breakerOptions, downstream, observe, budget = false } = run;
  const clock = new VirtualClock({ startMs: 0 });
  const backAt = setup.downFromMs + setup.downForMs;
  const callee = new Dependency({
    whenDown: setup.failure === 'refuse' ? 'refuse' : 'hang',
    down: [{ fromMs: setup.downFromMs, untilMs: backAt }],
  });
  let closedAfterBackAt = Number.NaN;
  let breakerOpens = 0;
  const api = downstream('callee', {
    retry,
    budget,
    attemptTimeoutMs: setup.timeoutMs,
    clock,
    random: new SeededRandom(setup.seed),
    classify: (error): Classification | undefined => (error === REFUSED_ERROR ? REFUSED : undefined),
    breaker:
      breakerOptions === undefined
        ? false
        : {
            ...breakerOptions,
            onStateChange: (_from, to, at) => {
              if (to === 'open') breakerOpens++;
              if (to === 'closed' && at >= backAt && Number.isNaN(closedAfterBackAt)) closedAfterBackAt = at;
            },
          },
  });
  const perSecond = new BucketCounter(BUCKET_MS);
  const operation = () =>
    new Promise<void>((resolve, reject) => {
      const now = clock.monotonic();
      perSecond.add(now);
      const answer = callee.call(now);
      if (answer === ANSWER_OK) clock.schedule(callee.latencyMs, resolve);
      else if (answer === ANSWER_REFUSED) clock.schedule(callee.refuseMs, () => reject(REFUSED_ERROR));
      // A hanging callee never answers: the downstream's attempt timeout ends the attempt.
    });

  let succeeded = 0;
  let failed = 0;
  let failedFast = 0;
  let failedFastAfterRecovery = 0;
  const count = Math.ceil((setup.durationMs * setup.ratePerSecond) / 1000);
  const arrive = (call: number) => {
    // The next arrival is queued before this call starts, as `SteadyArrivals` does.
    if (call + 1 < count) clock.schedule(0, () => arrive(call + 1), ((call + 1) * 1000) / setup.ratePerSecond);
    let attempts = 0;
    let retryFollows = false;
    api
      .call(
        () => {
          attempts++;
          return operation();
        },
        {
          onAttemptError: (_error, info) => {
            retryFollows = info.willRetry;
          },
        },
      )
      .then(
        () => {
          succeeded++;
          observe?.({ call, ok: true, reason: undefined, attempts, refused: false, atMs: clock.monotonic() });
        },
        (error: unknown) => {
          if (!isGiveUpError(error)) throw error;
          failed++;
          // Refused at admission: before any attempt, or when the retry that was to follow was refused.
          const refused = attempts === 0 || retryFollows;
          if (refused) {
            failedFast++;
            if (clock.monotonic() >= backAt) failedFastAfterRecovery++;
          }
          observe?.({ call, ok: false, reason: error.reason, attempts, refused, atMs: clock.monotonic() });
        },
      );
  };
  if (count > 0) clock.schedule(0, () => arrive(0), 0);
  await clock.runAll(Number.MAX_SAFE_INTEGER);

  return {
    variant,
    breaker: breakerOptions !== undefined,
    requests: count,
    attempts: callee.calls,
    requestsToDead: callee.callsWhileDown,
    failedFast,
    failedFastAfterRecovery,
    succeeded,
    failed,
    breakerOpens,
    recoveryDelayMs: Number.isNaN(closedAfterBackAt) ? 0 : closedAfterBackAt - backAt,
    perSecond: perSecond.toArray(),
  };
}
