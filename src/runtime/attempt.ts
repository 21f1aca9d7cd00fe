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

/** What an attempt's timer needs from its downstream. */
export interface AttemptOwner {
  readonly clock: Clock;
  /** The downstream's name, for errors. */
  readonly name: string;
}

/** Where an attempt stands when it starts (the call's state machine is one). */
export interface AttemptTiming {
  readonly attempt: number;
  readonly retriesLeft: number;
  /** When the attempt starts (the clock's monotonic ms, just read): its timeout counts from it. */
  readonly attemptStart: number;
  /** ms until the attempt's timer fires, already clamped to the deadline (`Infinity` for none). */
  readonly timeoutMs: number;
  /** True when `timeoutMs` is the call's deadline rather than the attempt timeout. */
  readonly deadlineBound: boolean;
  /** The attempt timeout in force (fixed or derived), before clamping to the deadline. */
  readonly attemptTimeoutMs: number;
}

export class AttemptContext implements CallContext {
  // Fields are declared, then all assigned in the constructor (no class-field initialisers):
  // this object is built once per attempt, on the hot path.
  declare private controller: AbortController | undefined;
  declare private abortReason: unknown;
  declare private aborted: boolean;
  /** The timeout/deadline error this attempt's own timer produced, if it fired. */
  declare expiredWith: unknown;
  declare readonly attempt: number;
  declare readonly retriesLeft: number;
  declare readonly deadline: number | undefined;
  declare readonly attemptStart: number;
  declare readonly timeoutMs: number;
  declare readonly deadlineBound: boolean;
  declare readonly attemptTimeoutMs: number;
  /** The async context nested calls inherit, when deadlines are in play (set by the runtime). */
  declare scope: DeadlineScope | undefined;
  declare readonly owner: AttemptOwner;
  declare readonly callerSignal: AbortSignal | undefined;
  /** Whether the operation is still running (its promise not settled). */
  declare running: boolean;
  /** Told once the operation settles, when the attempt ended before it (see `whenSettled`). */
  declare private onSettled: (() => void)[] | undefined;
  declare telemetry: AttemptTelemetry | undefined;

  constructor(owner: AttemptOwner, timing: AttemptTiming, callerSignal: AbortSignal | undefined) {
    this.controller = undefined;
    this.abortReason = undefined;
    this.aborted = false;
    this.expiredWith = undefined;
    this.attempt = timing.attempt;
    this.retriesLeft = timing.retriesLeft;
    const deadline = timing.attemptStart + timing.timeoutMs;
    this.deadline = deadline === Number.POSITIVE_INFINITY ? undefined : deadline;
    this.attemptStart = timing.attemptStart;
    this.timeoutMs = timing.timeoutMs;
    this.deadlineBound = timing.deadlineBound;
    this.attemptTimeoutMs = timing.attemptTimeoutMs;
    this.scope = undefined;
    this.owner = owner;
    this.callerSignal = callerSignal;
    this.running = false;
    this.onSettled = undefined;
    this.telemetry = undefined;
  }

  /**
   * Runs `release` once the operation has settled: now if it has, else when its promise
   * settles (the attempt timed out or the caller aborted while it kept running). An operation
   * that never settles never runs it.
   */
  whenSettled(release: () => void): void {
    if (!this.running) release();
    else (this.onSettled ??= []).push(release);
  }

  /** The operation's promise settled. */
  settled(): void {
    this.running = false;
    const waiting = this.onSettled;
    if (waiting === undefined) return;
    this.onSettled = undefined;
    for (const release of waiting) release();
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.abortReason);
      else if (this.callerSignal?.aborted) this.controller.abort(this.callerSignal.reason);
    }
    return this.controller.signal;
  }

  timeLeft(): number {
    return this.deadline === undefined ? Number.POSITIVE_INFINITY : this.deadline - this.owner.clock.monotonic();
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
export function runAttempt<T>(operation: Operation<T>, context: AttemptContext): Promise<T> {
  const { callerSignal, timeoutMs, scope, owner } = context;
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
      cancelTimer = owner.clock.schedule(
        timeoutMs,
        () => {
          if (!finish()) return;
          const error = context.deadlineBound
            ? new DeadlineExceededError({ outcome: 'unknown', attempts: context.attempt, downstream: owner.name })
            : new AttemptTimeoutError(context.attemptTimeoutMs, { attempts: context.attempt, downstream: owner.name });
          context.expiredWith = error;
          context.abort(error);
          reject(error);
        },
        context.attemptStart,
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
      context.running = true;
      (result as PromiseLike<T>).then(
        (value) => {
          context.settled();
          if (finish()) resolve(value);
        },
        (error: unknown) => {
          context.settled();
          if (finish()) reject(error);
        },
      );
    } else if (finish()) {
      resolve(result as T);
    }
  });
}
