import type { Classification } from '../classify/outcome.js';
import type { GiveUpReason } from '../errors/errors.js';

/** `Stage.enter`: the attempt may go on to the next stage. */
export const ADMIT = 0;
/** `Stage.enter`: the attempt must first wait `call.waitMs` (the stage has booked its turn). */
export const WAIT = 1;
/**
 * `Stage.enter`: the stage cannot grant the attempt synchronously; the driver waits on
 * `call.queue` for at most `call.queueWaitMs`, then reports `slotGranted` or `slotRefused`.
 */
export const QUEUE = 2;
/** `Stage.enter`: the attempt may not go ahead; the stage called `call.refuse(…)` first. */
export const REFUSE = 3;
export type Admission = typeof ADMIT | typeof WAIT | typeof QUEUE | typeof REFUSE;

/** `Stage.exit`: the callee answered and the call succeeded. */
export const RESULT_OK = 0;
/** `Stage.exit`: the attempt failed; `call.classification` says how. */
export const RESULT_FAILED = 1;
/**
 * `Stage.exit`: the attempt says nothing about the callee (the caller aborted, our own
 * deadline cut it, a later stage refused it): give back what was taken, count nothing.
 */
export const RESULT_NEUTRAL = 2;
export type AttemptResult = typeof RESULT_OK | typeof RESULT_FAILED | typeof RESULT_NEUTRAL;

/**
 * What `QUEUE` hands the driver: a line to wait in (a bulkhead's `acquire`), or a booking
 * already under way (a promise, e.g. a fleet store's pacing slot, resolving to a value for
 * the stage's `afterQueue`).
 */
export type Queue =
  | { acquire(signal: AbortSignal | undefined, maxWaitMs: number): PromiseLike<unknown> }
  | PromiseLike<unknown>
  | VirtualLine;

/**
 * A line on virtual time (the simulator's): `join` returns the refusal when the caller may
 * not wait (line full, no time), else `undefined` — then `waiter` is told later, by an event
 * and never from inside `join` or a release, that it was granted a slot or refused.
 */
export interface VirtualLine {
  join(waiter: LineWaiter, nowMs: number, maxWaitMs: number): unknown;
}

/** Told how a wait in a `VirtualLine` ended. */
export interface LineWaiter {
  granted(nowMs: number, value: unknown): void;
  refused(nowMs: number, error: unknown): void;
}

/** What a stage may read of the call it admits (a `CallMachine`). */
export interface StageCall {
  /** 1-based number of the attempt being admitted. */
  readonly attempt: number;
  /** Attempts that reached the operation so far. */
  readonly attemptsMade: number;
  /** When the call started (monotonic ms). */
  readonly startedAt: number;
  /** When the attempt being admitted started its admission, or was started (monotonic ms). */
  readonly attemptStart: number;
  /** The call's deadline (monotonic ms; `Infinity` without one). */
  readonly deadline: number;
  /** An attempt is not started with less than this many ms left before `deadline`. */
  readonly minAttemptTimeMs: number;
  /** Which retry budget the call draws on. */
  readonly budgetKey: string;
  /** Whether the call is safe to repeat (only such calls are hedged). */
  readonly idempotent: boolean;
  /** The call's class for partitioned limits (`CallOptions.partition`). */
  readonly partition: string | undefined;
  /** With `STEP_ATTEMPT`/`exit`: the attempt's timeout (clamped to the deadline). */
  readonly timeoutMs: number;
  /** In `exit` with `RESULT_NEUTRAL`: our own deadline cut the attempt (not the caller). */
  readonly cutByOwnDeadline: boolean;
  /** In `exit` with `RESULT_OK`: another attempt's answer won (a hedge), this one was not used. */
  readonly answerUnused: boolean;
  /**
   * In `exit` with `RESULT_NEUTRAL`: whether the attempt had started (an abort while it ran)
   * or was unwound before it started (a later stage refused it, the deadline came first).
   */
  readonly inAttempt: boolean;
  /** The downstream's name (for the errors a stage creates). */
  readonly name: string;
  /** How the attempt that just ended failed (with `RESULT_FAILED`). */
  readonly classification: Classification | undefined;
  /**
   * Scratch value a stage keeps for one attempt: set it in `enter`, read it back in `exit`
   * (the breaker's permit). The machine stores one per stage.
   */
  token: unknown;
  /** With `WAIT`: how long to wait. */
  waitMs: number;
  /**
   * With `WAIT`: enter this stage again when the wait ends, instead of going on to the next
   * (a pacer's slot may have moved meanwhile). Reset after each admission step.
   */
  waitAgain: boolean;
  /** With `QUEUE`: what the driver waits on (a `Queue`), and for how long at most. */
  queue: Queue | undefined;
  queueWaitMs: number;
  /**
   * With `REFUSE`: why. `cause` is the error for a first attempt (a retry refused ends the
   * call with what the last real attempt said); `retryAfterMs` when the stage knows when
   * to come back.
   */
  refuse(reason: GiveUpReason, cause: (() => unknown) | undefined, retryAfterMs: number | undefined): Admission;
  /** With `admitRetry` refusing: when to come back, if the stage knows. */
  retryAfterMs: number | undefined;
  /**
   * In `admitRetry`: the retry will wait for the pacer's slot at the callee's measured rate
   * (set by the pacing stage, which is asked before the budget; reset for every retry).
   */
  retryPaced: boolean;
  /**
   * In `exit`: runs `release` once the operation has really finished — at once, unless the
   * attempt ended (timeout, deadline, caller abort) while the operation kept running; then
   * when it settles. What bounds running work (a bulkhead) releases through it.
   */
  whenSettled(release: () => void): void;
}

/**
 * A hedge of the attempt in flight, as the stages see it: the call's fields, with the hedge's
 * own start, timeout, token and outcome (`CallMachine.startHedge`).
 */
export interface HedgeCall extends StageCall {
  /** 1-based: the first hedge of the attempt is 1. */
  readonly hedge: number;
}

/**
 * One protection between the retry loop and the operation (budget, breaker, pacer, bulkhead,
 * …). A stage is synchronous and does no I/O: it reads `now` and the call, updates its
 * policy's state and answers. Its methods are called in a fixed order:
 *
 * - `start` once per call, before anything else (the budget counts the request);
 * - `enter` before each attempt, stages in list order (a stage without it admits); a stage that did not `ADMIT`
 *   stops the walk (`WAIT`/`QUEUE` resume it at the next stage);
 * - `exit` exactly once for every stage that entered the attempt, innermost first, with
 *   how it ended (`RESULT_OK`, `RESULT_FAILED` or `RESULT_NEUTRAL`);
 * - `admitRetry` after a failure that the retry decision would retry (its step 4),
 *   innermost stage first: free checks are asked before a stage that spends (the budget),
 *   so a refused retry never spends a token;
 * - `retryDelay` may replace the delay before the next attempt (the pacer takes over
 *   while it is throttling); return a negative number to keep it;
 * - `enterHedge` before each hedge of a running attempt (a second attempt sent without
 *   cancelling the first), innermost stage first like `admitRetry`: slots are taken and free
 *   checks made before a stage spends (the hedging policy's extra load, the retry budget); a
 *   refusal ends the hedge, and the stages that admitted it are given it back
 *   (`exitHedge` with `RESULT_NEUTRAL`). `exitHedge` is told once how each admitted hedge
 *   ended. Stages without these hear only the attempt's own outcome (the group's: the
 *   breaker and the pacer count a hedged attempt once).
 */
export interface Stage {
  /** For traces and errors: `budget`, `breaker`, `pacing`, `bulkhead`, … */
  readonly name: string;
  start?(call: StageCall, nowMs: number): void;
  /** Absent: the stage admits every attempt. */
  enter?(call: StageCall, nowMs: number): Admission;
  /**
   * After its `QUEUE` was granted at `nowMs` (`value`: what the wait resolved to). Absent:
   * the attempt is admitted, if the deadline still allows it.
   */
  afterQueue?(call: StageCall, nowMs: number, value: unknown): Admission;
  /** Absent: the stage has nothing to learn from an attempt. */
  exit?(call: StageCall, nowMs: number, result: AttemptResult): void;
  admitRetry?(call: StageCall, nowMs: number): GiveUpReason | undefined;
  /**
   * The caller aborted the call: give back anything held for an attempt this stage has not
   * admitted yet (a pacer's ticket while the call waits for its slot).
   */
  leave?(call: StageCall, nowMs: number): void;
  retryDelay?(call: StageCall, nowMs: number, delayMs: number): number;
  /** May set the attempt timeout for an attempt starting now (derived from latency); `baseMs` is the downstream's. */
  attemptTimeoutMs?(call: StageCall, nowMs: number, baseMs: number): number;
  /** Admits a hedge (`false`: refused; give back nothing, `exitHedge` is not called). Absent: admits. */
  enterHedge?(hedge: HedgeCall, nowMs: number): boolean;
  exitHedge?(hedge: HedgeCall, nowMs: number, result: AttemptResult): void;
  /** How long after an attempt starts its first hedge may go (`undefined`: no hedging). One stage offers it. */
  hedgeDelayMs?(call: StageCall, nowMs: number): number | undefined;
  /**
   * Whether `exit` needs a real `now` after a success, at this moment (the driver may skip a
   * clock read). A stage whose answer can change defines it as a getter, read after every
   * success; an own data property is read once, when the pipeline is built.
   */
  readonly observesSuccess: boolean;
  /**
   * `true`: the stage files a call's start (`start`, and the first attempt's `enter`) only in
   * windows seconds wide, so a start read from the coarse clock (`SystemClock.coarseMonotonic`,
   * up to a few ms old) changes nothing it decides. A call starts on that reading only when
   * every stage of its pipeline says so; absent, the start is read from the clock.
   */
  readonly coarseStart?: true;
}
