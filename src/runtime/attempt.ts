import { AttemptTimeoutError, DeadlineExceededError } from '../errors/errors.js';
import type { AttemptTelemetry } from '../telemetry/call-wrapper.js';
import type { Cancel, Clock } from '../time/clock.js';
import { onAbort, type Unsubscribe } from '../time/on-abort.js';
import { type DeadlineScope, runWithDeadline } from './deadline-context.js';

/** What the operation receives on each attempt. */
export interface CallContext {
  /**
   * Aborts when this attempt times out, the deadline passes or the caller aborts. Created on
   * first read: an operation that never looks at it costs no AbortController.
   */
  readonly signal: AbortSignal;
  /** 1-based attempt number. */
  readonly attempt: number;
  /** Retries still allowed after this attempt by `maxAttempts` (other limits may stop sooner). */
  readonly retriesLeft: number;
  /**
   * This attempt's deadline in the clock's monotonic ms: the earlier of the call's deadline
   * and the end of the attempt timeout (`undefined` when neither exists). Nested kindly calls
   * and the outbound `x-request-timeout-ms` header use it.
   */
  readonly deadline: number | undefined;
  /** ms left before `deadline` (`Infinity` without one). */
  timeLeft(): number;
  /**
   * Set while kindly-calls/otel instruments the downstream: the HTTP and gRPC layers name
   * the attempt's span through it and add its trace-context headers. `undefined` otherwise.
   */
  telemetry?: AttemptTelemetry | undefined;
}

export class AttemptContext implements CallContext {
  private controller: AbortController | undefined;
  private abortReason: unknown;
  private aborted = false;
  /** The timeout/deadline error this attempt's own timer produced, if it fired. */
  expiredWith: unknown;
  telemetry: AttemptTelemetry | undefined = undefined;

  constructor(
    readonly attempt: number,
    readonly retriesLeft: number,
    readonly deadline: number | undefined,
    private readonly clock: Clock,
    private readonly callerSignal: AbortSignal | undefined,
  ) {}

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
      else if (this.callerSignal?.aborted) this.controller.abort(this.callerSignal.reason);
    }
    return this.controller.signal;
  }

  timeLeft(): number {
    return this.deadline === undefined ? Number.POSITIVE_INFINITY : this.deadline - this.clock.monotonic();
  }

  /** Aborts the attempt's signal (if anyone asked for it) with `reason`. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortReason = reason;
    this.controller?.abort(reason);
  }
}

/**
 * The async context of one attempt: nested kindly calls inherit its deadline and its signal
 * (created only if a nested call asks for it), and report give-ups to the outer scope.
 */
export class AttemptScope implements DeadlineScope {
  constructor(
    readonly deadline: number,
    private readonly context: AttemptContext,
    readonly onGiveUp: ((reason: string) => void) | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.context.signal;
  }
}

export type Operation<T> = (context: CallContext) => T | PromiseLike<T>;

/**
 * Runs one attempt, settling with the first of: the operation's result, the attempt timeout
 * (`AttemptTimeoutError`), the deadline (`DeadlineExceededError`), or the caller's abort
 * (`signal.reason`). Listeners and timers are removed as soon as it settles, so nothing
 * accumulates over a million calls.
 */
export function runAttempt<T>(
  operation: Operation<T>,
  context: AttemptContext,
  clock: Clock,
  /** ms until the attempt timeout fires, already clamped to the deadline. */
  timeoutMs: number,
  /** True when `timeoutMs` is the deadline rather than the attempt timeout. */
  deadlineBound: boolean,
  attemptTimeoutMs: number,
  callerSignal: AbortSignal | undefined,
  scope: DeadlineScope | undefined,
  downstream: string,
  /** When the attempt started (the clock's monotonic ms, just read): the timeout counts from it. */
  startedAt?: number,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    let cancelTimer: Cancel | undefined;
    let unsubscribe: Unsubscribe | undefined;

    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      if (cancelTimer !== undefined) cancelTimer();
      if (unsubscribe !== undefined) unsubscribe();
      return true;
    };

    if (callerSignal !== undefined) {
      // One listener on a signal shared by many calls, whatever their number (see onAbort).
      unsubscribe = onAbort(callerSignal, () => {
        if (!finish()) return;
        context.abort(callerSignal.reason);
        reject(callerSignal.reason);
      });
    }
    if (timeoutMs !== Number.POSITIVE_INFINITY) {
      cancelTimer = clock.schedule(
        timeoutMs,
        () => {
          if (!finish()) return;
          const error = deadlineBound
            ? new DeadlineExceededError({ outcome: 'unknown', attempts: context.attempt, downstream })
            : new AttemptTimeoutError(attemptTimeoutMs, { attempts: context.attempt, downstream });
          context.expiredWith = error;
          context.abort(error);
          reject(error);
        },
        startedAt,
      );
    }

    let result: T | PromiseLike<T>;
    try {
      result = scope === undefined ? operation(context) : runWithDeadline(scope, () => operation(context));
    } catch (error) {
      if (finish()) reject(error);
      return;
    }
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<T>).then === 'function') {
      (result as PromiseLike<T>).then(
        (value) => {
          if (finish()) resolve(value);
        },
        (error: unknown) => {
          if (finish()) reject(error);
        },
      );
    } else if (finish()) {
      resolve(result as T);
    }
  });
}
