import type { Classification } from '../classify/outcome.js';
import type { GiveUpReason } from '../errors/errors.js';
import type { RetryInput, RetryPolicy } from '../policies/retry-decision.js';
import type { Random } from '../random/random.js';

/** `RetryState.next` returns this instead of a delay when the call gives up. */
export const GIVE_UP = -1;

/**
 * The client side of many simulated calls, each identified by a small integer id: per call,
 * the attempt count, when its first attempt started and the previous delay, in typed arrays.
 * Every decision is kindly's own `RetryPolicy.decide` — the simulator has no retry logic of
 * its own — fed from one reused input object so that deciding allocates as little as the
 * policy itself does.
 */
export class RetryState {
  private attempts: Int32Array;
  private startedAt: Float64Array;
  private previousDelay: Float64Array;
  private readonly input: RetryInput;
  /** Calls that gave up, by reason. */
  readonly gaveUp: Partial<Record<GiveUpReason, number>> = {};
  /** Total number of calls that gave up. */
  gaveUpCount = 0;
  /** The backoff part of the last `next()` decision (before a hint or the time left). */
  lastBackoffMs = 0;

  constructor(
    readonly policy: RetryPolicy,
    private readonly random: Random,
    /** Expected number of calls; ids beyond it make the arrays grow. */
    calls: number,
    options: { idempotent?: boolean } = {},
  ) {
    const n = Math.max(16, calls);
    this.attempts = new Int32Array(n);
    this.startedAt = new Float64Array(n);
    this.previousDelay = new Float64Array(n).fill(Number.NaN);
    this.input = {
      attempt: 0,
      classification: { outcome: 'failed', retryable: true },
      idempotent: options.idempotent ?? true,
      verifiable: false,
      elapsedMs: 0,
      deadlineRemainingMs: Number.POSITIVE_INFINITY,
      previousDelayMs: undefined,
      admit: undefined,
    };
  }

  /** Records that call `id` starts an attempt now; returns its 1-based attempt number. */
  attempt(id: number, now: number): number {
    if (id >= this.attempts.length) this.grow(id);
    const n = ++this.attempts[id]!;
    if (n === 1) this.startedAt[id] = now;
    return n;
  }

  /** Attempts call `id` has made. */
  attemptsOf(id: number): number {
    return this.attempts[id]!;
  }

  /**
   * After call `id`'s latest attempt failed as `classification`: the delay in ms before its
   * next attempt, or `GIVE_UP`. `admit` is step (4) of the decision (budget, breaker).
   */
  next(id: number, classification: Classification, now: number, admit?: () => GiveUpReason | undefined): number {
    const input = this.input;
    input.attempt = this.attempts[id]!;
    input.classification = classification;
    input.elapsedMs = now - this.startedAt[id]!;
    const prev = this.previousDelay[id]!;
    input.previousDelayMs = Number.isNaN(prev) ? undefined : prev;
    input.admit = admit;
    const decision = this.policy.decide(input, this.random);
    if (!decision.retry) {
      this.gaveUp[decision.reason] = (this.gaveUp[decision.reason] ?? 0) + 1;
      this.gaveUpCount++;
      return GIVE_UP;
    }
    this.previousDelay[id] = decision.delayMs;
    this.lastBackoffMs = decision.backoffMs;
    return decision.delayMs;
  }

  private grow(id: number): void {
    let n = this.attempts.length * 2;
    while (n <= id) n *= 2;
    const attempts = new Int32Array(n);
    const startedAt = new Float64Array(n);
    const previousDelay = new Float64Array(n).fill(Number.NaN);
    attempts.set(this.attempts);
    startedAt.set(this.startedAt);
    previousDelay.set(this.previousDelay);
    this.attempts = attempts;
    this.startedAt = startedAt;
    this.previousDelay = previousDelay;
  }
}
