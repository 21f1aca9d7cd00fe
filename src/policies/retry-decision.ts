import { Backoff, type BackoffOptions } from '../backoff/backoff.js';
import type { Classification } from '../classify/outcome.js';
import type { GiveUpReason } from '../errors/errors.js';
import { OptionsValidator } from '../options/validate.js';
import type { Random } from '../random/random.js';

export interface RetryOptions {
  /**
   * Attempts in total, the first included. `Infinity` must be written explicitly and then
   * needs a finite `maxElapsedMs` (or the downstream's `totalTimeoutMs`).
   * @default 3
   */
  maxAttempts?: number;
  /** Longest time from the first attempt's start to the last attempt's start, sleeps included. */
  maxElapsedMs?: number;
  /** The delay schedule; see `Backoff`. @default exponential, base 100 ms, full jitter, cap 20 s */
  backoff?: BackoffOptions;
  /**
   * A wait hint longer than this ends retrying at once (the error carries `retryAfterMs`),
   * whether it came from a header or a body; no wait kindly chooses after a hint is longer
   * either (the hint's jitter is trimmed to it).
   * @default 300_000 (5 minutes)
   */
  maxRetryAfterMs?: number;
  /**
   * Upward jitter on wait hints, as a fraction: a hint h becomes
   * min(h × (1 + u × hintJitter), maxRetryAfterMs, time left), so clients told the same date do
   * not come back together. @default 0.2
   */
  hintJitter?: number;
  /** An attempt is not started with less than this many ms left before the deadline. @default 1 */
  minAttemptTimeMs?: number;
}

export const RETRY_DEFAULTS = {
  maxAttempts: 3,
  maxRetryAfterMs: 300_000,
  hintJitter: 0.2,
  minAttemptTimeMs: 1,
} as const;

const KEYS = ['maxAttempts', 'maxElapsedMs', 'backoff', 'maxRetryAfterMs', 'hintJitter', 'minAttemptTimeMs'] as const;

/** Everything the decision needs to know about the attempt that just failed. */
export interface RetryInput {
  /** Attempts made so far, including the one that just failed (1-based). */
  attempt: number;
  /**
   * The backoff schedule's step for the next delay (default: `attempt`). Failures of
   * attempts a pacer released at the callee's measured rate do not advance it: the pacer
   * misjudged the rate, the caller did not hammer, and the pacer already spaces its retries.
   */
  backoffStep?: number;
  classification: Classification;
  /** Is the operation safe to repeat (idempotent method, idempotency key, caller's word)? */
  idempotent: boolean;
  /** Whether a `verify` hook can settle an `unknown` outcome of a non-idempotent call. */
  verifiable: boolean;
  /** ms since the first attempt started. */
  elapsedMs: number;
  /** ms left before the caller's deadline (`Infinity` when there is none). */
  deadlineRemainingMs: number;
  /** Delay chosen before the previous retry (decorrelated jitter reads it). */
  previousDelayMs: number | undefined;
  /**
   * Step (4), system limits: called only when every other step allows the retry. Returns
   * the reason to stop (budget empty, breaker open) or undefined to go on. May consume state
   * (a budget withdrawal), which is why it runs last: a refused retry never spends a token.
   */
  admit?: () => GiveUpReason | undefined;
}

export type RetryDecision =
  | {
      retry: true;
      /** ms to wait before the next attempt: max(backoff, jittered hint), within the time left. */
      delayMs: number;
      /** The backoff schedule's delay before it was combined with a hint. */
      backoffMs: number;
      /** The hint that was honoured, if any. */
      hintMs: number | undefined;
      /** The next attempt must first ask the `verify` hook. */
      verify: boolean;
    }
  | {
      retry: false;
      reason: GiveUpReason;
      /** When the callee said when to come back. */
      retryAfterMs: number | undefined;
    };

/**
 * The retry decision (docs/guide.md, "The order of the decision"), pure: the async runtime and the simulator both call it.
 * After a failed attempt: (1) retryable (and no "don't retry" from the callee)? (2) idempotent,
 * or outcome `failed`, or verifiable? (3) attempts and time left? (4) budget and breaker
 * (`admit`)? (5) delay = max(backoff, hint); a delay that would not end in time for an
 * attempt (deadline, `maxElapsedMs`, `minAttemptTimeMs` before them) ends the call at once —
 * `hint-too-long` when the callee's hint is what does not fit. The first "no" is the reason,
 * except that (4) is asked last: it spends budget, which a retry stopped by (5) must not.
 */
export class RetryPolicy {
  readonly maxAttempts: number;
  readonly maxElapsedMs: number;
  readonly maxRetryAfterMs: number;
  readonly hintJitter: number;
  readonly minAttemptTimeMs: number;
  readonly backoff: Backoff;

  constructor(options: RetryOptions = {}) {
    const v = new OptionsValidator('retry');
    v.knownKeys(options, KEYS)
      .integer('maxAttempts', options.maxAttempts, 1, { allowInfinity: true })
      .duration('maxElapsedMs', options.maxElapsedMs, { allowInfinity: false })
      .duration('maxRetryAfterMs', options.maxRetryAfterMs)
      .number('hintJitter', options.hintJitter, 0, 1)
      .duration('minAttemptTimeMs', options.minAttemptTimeMs);
    v.check(
      !(options.maxAttempts === Number.POSITIVE_INFINITY && options.maxElapsedMs === undefined),
      'Expected a finite `maxElapsedMs` when `maxAttempts` is Infinity (unbounded retrying must be bounded in time)',
    );
    const backoff = v.nested('backoff', () => new Backoff(options.backoff));
    v.done();
    this.backoff = backoff as Backoff;
    this.maxAttempts = options.maxAttempts ?? RETRY_DEFAULTS.maxAttempts;
    this.maxElapsedMs = options.maxElapsedMs ?? Number.POSITIVE_INFINITY;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? RETRY_DEFAULTS.maxRetryAfterMs;
    this.hintJitter = options.hintJitter ?? RETRY_DEFAULTS.hintJitter;
    this.minAttemptTimeMs = options.minAttemptTimeMs ?? RETRY_DEFAULTS.minAttemptTimeMs;
  }

  decide(input: RetryInput, random: Random): RetryDecision {
    const c = input.classification;
    // (1) Would trying again help, and did the callee allow it?
    if (c.dontRetry) return stop('dont-retry', c.hintMs);
    if (!c.retryable) return stop('not-retryable', c.hintMs);
    // (2) Never repeat something that may have happened, unless it is safe or checkable.
    let verify = false;
    if (c.outcome === 'unknown' && !input.idempotent) {
      if (!input.verifiable) return stop('not-idempotent', c.hintMs);
      verify = true;
    }
    // (3) Attempts and time left.
    if (input.attempt >= this.maxAttempts) return stop('max-attempts', c.hintMs);
    const elapsedLeft = this.maxElapsedMs - input.elapsedMs;
    const timeLeft = Math.min(elapsedLeft, input.deadlineRemainingMs) - this.minAttemptTimeMs;
    const limitedBy: GiveUpReason = input.deadlineRemainingMs <= elapsedLeft ? 'deadline' : 'max-elapsed';
    if (!(timeLeft >= 0)) return stop(limitedBy, c.hintMs);
    // (5) The delay — computed before (4) is consulted, because (4) spends state (a budget
    // token) that a retry stopped by (5) would never use. A hint is a minimum we may not shorten: if it does not fit, stop now
    // rather than sleep pointlessly, and hand the hint to the caller.
    const backoffMs = this.backoff.delay(input.backoffStep ?? input.attempt, random, input.previousDelayMs);
    let hintMs: number | undefined;
    let delayMs = backoffMs;
    if (c.hintMs !== undefined) {
      if (c.hintMs > this.maxRetryAfterMs || c.hintMs > timeLeft) return stop('hint-too-long', c.hintMs);
      // One rule for every hint, whatever its source: the wait is the hint plus upward
      // jitter, and the jitter (never the hint) is trimmed to `maxRetryAfterMs` and to the time left.
      hintMs = Math.min(timeLeft, this.maxRetryAfterMs, c.hintMs * (1 + random.next() * this.hintJitter));
      if (hintMs > delayMs) delayMs = hintMs;
    }
    // A sleep that would end too late to start an attempt is not started: stop now with the
    // last error rather than wait for nothing — and rather than retry sooner than the
    // schedule allows, which would put back the load the backoff is there to take off.
    if (delayMs > timeLeft) return stop(limitedBy, c.hintMs);
    // (4) System limits.
    const refused = input.admit?.();
    if (refused !== undefined) return stop(refused, c.hintMs);
    return { retry: true, delayMs, backoffMs, hintMs, verify };
  }
}

function stop(reason: GiveUpReason, retryAfterMs: number | undefined): RetryDecision {
  return { retry: false, reason, retryAfterMs };
}

/** A person is waiting: few attempts, short delays, a short overall limit. */
export const interactive: RetryOptions = Object.freeze({
  maxAttempts: 3,
  maxElapsedMs: 10_000,
  maxRetryAfterMs: 5_000,
  backoff: Object.freeze({ shape: 'exponential', baseMs: 200, factor: 2, jitter: 'full', capMs: 2_000 }),
} as const);

/**
 * A batch job or queue consumer: patient, with a 1 s minimum wait so that a struggling
 * callee is not probed in tight loops.
 */
export const background: RetryOptions = Object.freeze({
  maxAttempts: 10,
  maxElapsedMs: 15 * 60_000,
  maxRetryAfterMs: 10 * 60_000,
  backoff: Object.freeze({ shape: 'exponential', baseMs: 1_000, factor: 2, jitter: 'full', capMs: 60_000, floorMs: 1_000 }),
} as const);
