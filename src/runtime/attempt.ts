import { AttemptTimeoutError, DeadlineExceededError } from '../errors/errors.js';
import type { AttemptTelemetry } from '../telemetry/call-wrapper.js';
import type { Cancel, Clock, TimerHandle } from '../time/clock.js';
import { onAbort, type Unsubscribe } from '../time/on-abort.js';
import { SystemClock } from '../time/system-clock.js';
import { WheelEntry } from '../time/timer-wheel.js';
import { type DeadlineScope, runWithDeadline } from './deadline-context.js';
import { LOST_ATTEMPTS_RESOLVE_WITH_THENABLE } from './lost-attempt-context.js';

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

export class AttemptContext extends WheelEntry implements CallContext {
  // Fields are declared, then all assigned in the constructor (no class-field initialisers):
  // this object is built once per attempt, on the hot path.
  declare private controller: AbortController | undefined;
  declare private abortReason: unknown;
  declare private aborted: boolean;
  /** The timeout/deadline error this attempt's own timer produced, if it fired. */
  declare expiredWith: unknown;
  declare readonly attempt: number;
  declare readonly retriesLeft: number;
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
  /** The attempt's race (`runAttempt`): settled once, by whichever comes first. */
  declare private won: boolean;
  declare private resolvePromise: (value: unknown) => void;
  declare private rejectPromise: (error: unknown) => void;
  declare private settlement: AttemptSettlement<unknown, unknown> | undefined;
  /** The attempt's timer (its timeout or the deadline) when it is not in the wheel itself. */
  declare timer: TimerHandle | undefined;
  declare unsubscribe: Unsubscribe | undefined;
  /** The driver's own record of the call this attempt belongs to (opaque here). */
  declare run: unknown;
  /**
   * Whether `attemptStart` is the system clock's coarse reading (the common call's first
   * attempt, see `Downstream.run`): its timeout then counts from the next tick's reading.
   */
  declare startedCoarse: boolean;

  constructor(owner: AttemptOwner, timing: AttemptTiming, callerSignal: AbortSignal | undefined) {
    // The attempt is its own timer-wheel entry (see `armTimer`): no timer object per call.
    super();
    this.controller = undefined;
    this.abortReason = undefined;
    this.aborted = false;
    this.expiredWith = undefined;
    this.attempt = timing.attempt;
    this.retriesLeft = timing.retriesLeft;
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
    this.won = false;
    this.resolvePromise = noop;
    this.rejectPromise = noop;
    this.settlement = undefined;
    this.timer = undefined;
    this.unsubscribe = undefined;
    this.run = undefined;
    this.startedCoarse = false;
  }

  /** `runAttempt` starts the race: these settle its promise. */
  race(
    resolve: (value: unknown) => void,
    reject: (error: unknown) => void,
    settlement: AttemptSettlement<unknown, unknown> | undefined,
  ): void {
    this.resolvePromise = resolve;
    this.rejectPromise = reject;
    this.settlement = settlement;
  }

  /** The first to settle wins; the timer and the abort listener go at once. */
  private finish(): boolean {
    if (this.won) return false;
    this.won = true;
    const wheel = this.wheel;
    if (wheel !== undefined) wheel.cancel(this);
    const timer = this.timer;
    if (timer !== undefined) timer.cancel();
    const unsubscribe = this.unsubscribe;
    if (unsubscribe !== undefined) unsubscribe();
    return true;
  }

  /**
   * The operation answered. `direct` when that happened inside `runAttempt` (a synchronous
   * operation): the settlement then waits a microtask, so the driver's bookkeeping never runs
   * inside the caller's own `call()` (as with any promise).
   */
  fulfil(value: unknown, direct: boolean): void {
    if (!this.finish()) return;
    const settlement = this.settlement;
    if (settlement === undefined) {
      this.resolvePromise(value);
      this.forget();
    } else if (direct) queueMicrotask(() => this.settleValue(settlement, value));
    else this.settleValue(settlement, value);
  }

  /**
   * The attempt's promise is settled: the context lets go of it (and through it of the value)
   * and of the call. Whoever still holds the context (the operation, a body being read) must
   * not keep the caller's value or the call alive with it.
   */
  private forget(): void {
    this.resolvePromise = noop;
    this.rejectPromise = noop;
    this.settlement = undefined;
    this.run = undefined;
  }

  /** The operation failed (`direct`: it threw inside `runAttempt`). */
  fail(error: unknown, direct: boolean): void {
    if (!this.finish()) return;
    this.settleError(error, direct);
  }

  /** The attempt's timer fired: the attempt timeout, or the call's deadline. */
  expire(): void {
    if (!this.finish()) return;
    const owner = this.owner;
    const error = this.deadlineBound
      ? new DeadlineExceededError({ outcome: 'unknown', attempts: this.attempt, downstream: owner.name })
      : new AttemptTimeoutError(this.attemptTimeoutMs, { attempts: this.attempt, downstream: owner.name });
    this.expiredWith = error;
    this.lose(error, true);
  }

  /** The attempt lost its race to `reason` (a timer, the caller's abort): its signal aborts. */
  lose(reason: unknown, finished: boolean): void {
    if (!finished && !this.finish()) return;
    this.abort(reason);
    if (this.settlement !== undefined) {
      // Called from a timer or an abort listener, in the async context of whoever armed or
      // aborted it — with a timer wheel shared by every request, another request's. The
      // settlement (the call's bookkeeping, events, give-up, next attempt) is left to the
      // attempt promise's consumer, whose reaction runs in the call's own context
      // (`resumeLost`), or, where the runtime runs a thenable's `then` in the context of the
      // promise it resolves, to the promise itself (src/runtime/lost-attempt-context.ts).
      this.resolvePromise(
        LOST_ATTEMPTS_RESOLVE_WITH_THENABLE ? new ResumingLostAttempt(this, reason) : new LostAttempt(this, reason),
      );
      this.resolvePromise = noop;
      this.rejectPromise = noop;
      return;
    }
    // Without one, the driver hears of it on a microtask, as it would from any rejected
    // promise, not inside someone else's callback.
    this.settleError(reason, true);
  }

  /** Settles a lost attempt (see `lose`), in the context of the call that made it. */
  settleLost(reason: unknown): unknown {
    const settlement = this.settlement as AttemptSettlement<unknown, unknown>;
    try {
      return settlement.onError(reason, this);
    } finally {
      this.forget();
    }
  }

  private settleValue(settlement: AttemptSettlement<unknown, unknown>, value: unknown): void {
    try {
      this.resolvePromise(settlement.onValue(value, this));
    } catch (error) {
      this.rejectPromise(error);
    }
    this.forget();
  }

  private settleError(error: unknown, deferred: boolean): void {
    const settlement = this.settlement;
    if (settlement === undefined) {
      this.rejectPromise(error);
      this.forget();
      return;
    }
    if (deferred) {
      queueMicrotask(() => this.settleError(error, false));
      return;
    }
    try {
      this.resolvePromise(settlement.onError(error, this));
    } catch (thrown) {
      this.rejectPromise(thrown);
    }
    this.forget();
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

  /**
   * The attempt's AbortController itself (made now if nobody read `signal` yet): the HTTP
   * layer aborts it when a response's body outlives the attempt (its deadline, the caller's
   * abort), instead of making a second controller per request. Holding the controller, not
   * this context, keeps the call's objects collectable while the body is read.
   */
  ownController(): AbortController {
    void this.signal;
    return this.controller as AbortController;
  }

  /** Worked out when read, not stored: one number fewer to box per attempt. */
  get deadline(): number | undefined {
    const deadline = this.attemptStart + this.timeoutMs;
    return deadline === Number.POSITIVE_INFINITY ? undefined : deadline;
  }

  timeLeft(): number {
    const deadline = this.attemptStart + this.timeoutMs;
    return deadline === Number.POSITIVE_INFINITY ? deadline : deadline - this.owner.clock.monotonic();
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
 * Set (to `true`) on a call's options by kindly's own layers whose operation runs no user
 * code — the HTTP attempt through the platform's `fetch` — so no nested kindly call can look
 * for the attempt's deadline scope, and none is entered (see `needsScope` in downstream.ts).
 * A symbol: the options' checks (`for…in`) never see it, and users cannot set it by mistake.
 */
export const RUNS_NO_USER_CODE: unique symbol = Symbol('kindly-calls.runs-no-user-code');

/** Call options as kindly's own layers may build them. */
export interface InternalCallOptions {
  [RUNS_NO_USER_CODE]?: boolean;
}

/**
 * What happens when an attempt settles, before its promise does: the driver's bookkeeping,
 * folded into the attempt's own promise so that a call costs one promise rather than two.
 */
export interface AttemptSettlement<T, R> {
  /** The operation answered `value` first: the attempt's promise resolves with what this returns. */
  onValue(value: T, context: AttemptContext): R;
  /**
   * The attempt failed first (the operation's error, the timeout, the deadline, the caller's
   * abort): its promise follows what this returns; a throw rejects it.
   */
  onError(error: unknown, context: AttemptContext): R | PromiseLike<R>;
}

/**
 * What an attempt's promise resolves with when the attempt lost its race to a timer or an
 * abort while a settlement was given: the settlement has not run yet. The promise's consumer
 * passes the value through `resumeLost`, in the call's own async context.
 */
class LostAttempt {
  constructor(
    readonly context: AttemptContext,
    readonly reason: unknown,
  ) {}

  /** Runs the settlement (in the context of whoever calls this). */
  settle(): unknown {
    return this.context.settleLost(this.reason);
  }
}

/**
 * A lost attempt where the runtime calls a thenable's `then` in the context of the promise it
 * resolves (`LOST_ATTEMPTS_RESOLVE_WITH_THENABLE`): the attempt's promise, made when the call
 * began, settles it there itself, and needs no `resumeLost`.
 */
class ResumingLostAttempt extends LostAttempt {
  // biome-ignore lint/suspicious/noThenProperty: the attempt's promise adopts it, and so calls this in the call's context
  then(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
    let value: unknown;
    try {
      value = this.settle();
    } catch (error) {
      reject(error);
      return;
    }
    resolve(value);
  }
}

/**
 * The reaction every consumer of `runAttempt(…, settlement)` puts on its promise, unless lost
 * attempts resolve it with a thenable (`LOST_ATTEMPTS_RESOLVE_WITH_THENABLE`): a lost attempt is
 * settled here, where the consumer registered it — in the call's async context, so that its
 * events, give-up and next attempt run under the request that made the call (its deadline
 * scope, its tracing context, the caller's own AsyncLocalStorage values) — and any other value
 * passes through.
 */
export function resumeLost<R>(value: R): R {
  return value instanceof LostAttempt ? (value.settle() as R) : value;
}

let capturedResolve: (value: unknown) => void = noop;
let capturedReject: (error: unknown) => void = noop;
/** A promise executor that allocates no closure: it hands its functions to `runAttempt`. */
function capture(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  capturedResolve = resolve;
  capturedReject = reject;
}
function noop(): void {}

/**
 * Runs one attempt, settling with the first of: the operation's result, the attempt timeout
 * (`AttemptTimeoutError`), the deadline (`DeadlineExceededError`), or the caller's abort
 * (`signal.reason`). Listeners and timers are removed as soon as it settles, so nothing
 * accumulates over a million calls. With a `settlement`, the promise settles with what its
 * hooks return instead.
 */
export function runAttempt<T>(operation: Operation<T>, context: AttemptContext): Promise<T>;
export function runAttempt<T, R>(
  operation: Operation<T>,
  context: AttemptContext,
  settlement: AttemptSettlement<T, R>,
): Promise<R>;
export function runAttempt<T, R>(
  operation: Operation<T>,
  context: AttemptContext,
  settlement?: AttemptSettlement<T, R>,
): Promise<T | R> {
  const promise = new Promise<T | R>(capture as (resolve: (value: T | R) => void, reject: (error: unknown) => void) => void);
  context.race(capturedResolve, capturedReject, settlement as AttemptSettlement<unknown, unknown> | undefined);
  // Not kept here: they would hold the last attempt's promise, and through it its value.
  capturedResolve = noop;
  capturedReject = noop;
  const { callerSignal, timeoutMs, scope } = context;
  if (callerSignal !== undefined) listenForAbort(context, callerSignal);
  if (timeoutMs !== Number.POSITIVE_INFINITY) armTimer(context);
  let result: T | PromiseLike<T>;
  try {
    result = scope === undefined ? operation(context) : runInScope(operation, context, scope);
  } catch (error) {
    context.fail(error, true);
    return promise;
  }
  try {
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<T>).then === 'function') {
      follow(result as PromiseLike<T>, context);
    } else {
      context.fulfil(result as T, true);
    }
  } catch (error) {
    // A thenable whose `then` throws (or a `then` getter that does) failed the attempt like a
    // throwing operation: thrown out of here, the call's slots were never given back. Nothing
    // will settle it now, so nothing may wait for it to (a bulkhead's slot).
    context.settled();
    context.fail(error, true);
  }
  return promise;
}

// The closures an attempt may need are made in helpers of their own, so that `runAttempt`
// itself captures nothing: V8 allocates a function's closure context whenever any of its
// closures could be created, even on a path that creates none.

/** One listener on a signal shared by many calls, whatever their number (see onAbort). */
function listenForAbort(context: AttemptContext, callerSignal: AbortSignal): void {
  context.unsubscribe = onAbort(callerSignal, () => context.lose(callerSignal.reason, false));
}

/**
 * The attempt's timer. On the system clock the context itself is what fires, and a long
 * timeout links the context itself into the wheel: no closure and no timer object.
 */
function armTimer(context: AttemptContext): void {
  const clock = context.owner.clock;
  // A coarse start is the system clock's (`Downstream.run`): no class check on the common call.
  if (context.startedCoarse) context.timer = (clock as SystemClock).expireAfterCoarse(context.timeoutMs, context);
  else if (clock instanceof SystemClock) context.timer = clock.expireAfter(context.timeoutMs, context, context.attemptStart);
  else context.timer = new ScheduledTimer(clock.schedule(context.timeoutMs, () => context.expire(), context.attemptStart));
}

/** A timer of any other clock (`Clock.schedule`), behind the same handle. */
class ScheduledTimer implements TimerHandle {
  constructor(private readonly cancelIt: Cancel) {}
  cancel(): void {
    this.cancelIt();
  }
}

function runInScope<T>(operation: Operation<T>, context: AttemptContext, scope: DeadlineScope): T | PromiseLike<T> {
  return runWithDeadline(scope, () => operation(context));
}

/** The operation returned a promise: the attempt settles when it does (unless it lost its race first). */
function follow<T>(result: PromiseLike<T>, context: AttemptContext): void {
  context.running = true;
  result.then(
    (value) => {
      context.settled();
      context.fulfil(value, false);
    },
    (error: unknown) => {
      context.settled();
      context.fail(error, false);
    },
  );
}
