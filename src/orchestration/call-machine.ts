/**
 * The orchestration of one call, as a synchronous state machine: no promises, no timers, no
 * clock reads. Its driver tells it what happened and when (`now` is always an input), and it
 * answers with the next step. Two drivers run it: `Downstream` (src/runtime) with real time
 * and real operations, and the simulator's scenarios (src/sim) with virtual time and modelled
 * callees — so the pipeline the simulator measures is the one users run.
 *
 * The pipeline, in its one fixed order:
 *
 *   deadline → retry loop: [stages: budget → breaker → pacing → bulkhead] → attempt timeout → operation
 *
 * - deadline: fixed when the call starts (`callDeadline`); every step is checked against it;
 * - stages: a list of `Stage`s (src/orchestration/stage.ts), entered in order before each
 *   attempt and exited innermost first after it; the retry decision's step 4 asks them
 *   (`admitRetry`) innermost first;
 * - attempt timeout: the attempt's own deadline, the earlier of the call's and
 *   `attemptStart + attemptTimeoutMs`;
 * - operation: run by the driver (`STEP_ATTEMPT`); it reports `succeeded`, `failed`
 *   (classified), `cutByDeadline` or `abandon` (the caller aborted).
 *
 * Extension point: a new protection is a new `Stage` placed in the list where it belongs
 * (an adaptive concurrency limit next to the bulkhead, chaos injection just before the
 * operation, a fleet-wide budget or breaker as a stage over a shared store); tracing wraps
 * the driver's steps. Nothing here changes for them. A stage that must wait asynchronously
 * returns `QUEUE` and the driver does the waiting (the bulkhead's line).
 *
 * Driver protocol (each method returns the next step):
 *
 *   start(now)                         once; then begin(now)
 *   begin(now)           → STEP_VERIFY | STEP_WAIT | STEP_QUEUE | STEP_ATTEMPT | STEP_GIVE_UP
 *   verified(now, applied) → as begin, after the verify hook answered
 *   resume(now)          → after a STEP_WAIT: the same as begin's admission, from the next stage
 *   slotGranted(now) / slotRefused(now, error) → after a STEP_QUEUE
 *   waitCutByDeadline(now) → STEP_GIVE_UP   the deadline ended a wait before an attempt
 *   succeeded(now)                     the operation's value is the call's
 *   failed(now, error, classification) → STEP_SLEEP (then begin) | STEP_GIVE_UP
 *   cutByDeadline(now, error) → STEP_GIVE_UP
 *   abandon(now)                       the caller aborted: the driver rethrows its reason
 *   abandonGranted(now, value)         … just as a queued slot was granted (it is taken, then given back)
 *
 * Hedges (a second attempt sent, without cancelling the first, while it runs):
 *
 *   hedgeDelayMs()        → after STEP_ATTEMPT: when the first hedge may go (`undefined`: none)
 *   startHedge(now, n)    → hedge n of the running attempt, admitted by the stages, or `undefined`
 *   hedgeEnded(hedge, now, result) — once per hedge started; the attempt itself then reports
 *                           the group's outcome (`succeeded` with `answerUnused` when a hedge won)
 */
import type { Classification } from '../classify/outcome.js';
import { DeadlineExceededError, type GiveUpReason } from '../errors/errors.js';
import type { RetryDecision, RetryInput, RetryPolicy } from '../policies/retry-decision.js';
import type { Random } from '../random/random.js';
import { attemptFits } from './deadline.js';
import { HedgeAttempt } from './hedge-attempt.js';
import { Pipeline } from './pipeline.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  QUEUE,
  type Queue,
  REFUSE,
  RESULT_FAILED,
  RESULT_NEUTRAL,
  RESULT_OK,
  type Stage,
  type StageCall,
  WAIT,
} from './stage.js';

/** Run the operation: `attemptStart`, `attemptDeadline`, `timeoutMs`, `deadlineBound`. */
export const STEP_ATTEMPT = 1;
/** A stage asks to wait `waitMs` before the attempt (pacing); then `resume`. */
export const STEP_WAIT = 2;
/** A stage needs a slot: wait on `queue` for at most `queueWaitMs`; then `slotGranted`/`slotRefused`. */
export const STEP_QUEUE = 3;
/** Ask the call's verify hook whether the previous attempt took effect; then `verified`. */
export const STEP_VERIFY = 4;
/** Sleep `waitMs` before the next attempt (yield even at 0 when `yieldBeforeRetry`); then `begin`. */
export const STEP_SLEEP = 5;
/** The call ends: `reason`, `attemptsMade`, `outcome`, `cause`, `retryAfterMs`. */
export const STEP_GIVE_UP = 6;
export type Step =
  | typeof STEP_ATTEMPT
  | typeof STEP_WAIT
  | typeof STEP_QUEUE
  | typeof STEP_VERIFY
  | typeof STEP_SLEEP
  | typeof STEP_GIVE_UP;

/** What every call of one downstream shares. */
export interface CallPlan {
  readonly name: string;
  readonly retry: RetryPolicy;
  readonly random: Random;
  /** Per-attempt timeout in ms (`Infinity` for none). */
  readonly attemptTimeoutMs: number;
  /** Whether calls are safe to repeat after an `unknown` outcome, unless a call says otherwise. */
  readonly idempotent: boolean;
}

/**
 * One call's own choices, each defaulting to the plan's (a runtime's per-call options object
 * fits as it is, so nothing is allocated to pass them).
 */
export interface CallChoices {
  /** Safe to repeat after an `unknown` outcome. @default the plan's `idempotent` */
  readonly idempotent?: boolean | undefined;
  /** Which retry budget the call draws on. @default the plan's `name` */
  readonly budgetKey?: string | undefined;
  /** The call's class for partitioned limits. */
  readonly partition?: string | undefined;
  /** Present when a verify hook can settle an `unknown` outcome of a non-idempotent call. */
  readonly verify?: unknown;
  /** This call's attempt timeout, in place of the plan's (a derived timeout starts from it). */
  readonly attemptTimeoutMs?: number | undefined;
}

/**
 * What a call needs only when something other than a first-time success happens — a wait, a
 * line, a failure, a retry, a give-up, a hedge's win, a verify hook. Kept apart from
 * `CallMachine` and made on first use: the common call (admitted at once, succeeds) never
 * builds it, so the machine it does build is half the size (it is made once per call).
 */
class CallExtras {
  previousDelay: number | undefined = undefined;
  needsVerify = false;
  cutByOwnDeadline = false;
  answerUnused = false;
  waitMs = 0;
  waitAgain = false;
  queue: Queue | undefined = undefined;
  queueWaitMs = 0;
  retryAfterMs: number | undefined = undefined;
  retryPaced = false;
  yieldBeforeRetry = false;
  /** Failed attempts that the pacer had released (see `RetryInput.backoffStep`). */
  pacedFailures = 0;
  classification: Classification | undefined = undefined;
  decision: RetryDecision | undefined = undefined;
  lastError: unknown = undefined;
  lastOutcome: 'failed' | 'unknown' = 'failed';
  reason: GiveUpReason = 'max-attempts';
  outcome: 'failed' | 'unknown' = 'failed';
  cause: unknown = undefined;
  giveUpRetryAfterMs: number | undefined = undefined;
  refusal: { reason: GiveUpReason; cause: (() => unknown) | undefined; retryAfterMs: number | undefined } | undefined = undefined;
  operationSettles: ((release: () => void) => void) | undefined = undefined;
  /** The call's own attempt timeout (`CallChoices.attemptTimeoutMs`), when it set one. */
  attemptTimeoutBase: number | undefined = undefined;
}

/** What a call that has not needed its `CallExtras` reads: their starting values. */
const NO_EXTRAS: Readonly<CallExtras> = Object.freeze(new CallExtras());

export class CallMachine implements StageCall {
  declare readonly startedAt: number;
  declare readonly deadline: number;
  declare readonly budgetKey: string;
  declare readonly partition: string | undefined;
  /** `STEP_ATTEMPT`: the attempt timeout in force before clamping to the deadline (for the error message). */
  declare attemptTimeoutMs: number;
  declare private readonly plan: CallPlan;
  declare private readonly pipeline: Pipeline;
  declare readonly idempotent: boolean;
  declare private readonly verifiable: boolean;
  /** Per stage, its token for the attempt being admitted or run (created on the first token). */
  declare private tokens: unknown[] | undefined;
  /** Stages that admitted the current attempt (they are exited, innermost first). */
  declare private entered: number;

  declare attempt: number;
  declare attemptsMade: number;
  declare attemptStart: number;
  /** `STEP_ATTEMPT`: the attempt's timeout (see `attemptDeadline`), and whether that is the call's deadline. */
  declare timeoutMs: number;
  declare deadlineBound: boolean;
  /** Whether an attempt is running (between `STEP_ATTEMPT` and its report). */
  declare inAttempt: boolean;

  declare token: unknown;
  /** The rarely needed state, once something needed it (see `CallExtras`). */
  declare private extras: CallExtras | undefined;

  /**
   * @param startedAt when the call started (monotonic ms)
   * @param deadline the call's deadline (`callDeadline`), `Infinity` for none
   */
  constructor(plan: CallPlan, pipeline: Pipeline | undefined, startedAt: number, deadline: number, choices?: CallChoices) {
    // Every field assigned here, in one order (no class-field initialisers): one hidden
    // class, and the cheapest construction V8 offers — this runs once per call.
    this.startedAt = startedAt;
    this.deadline = deadline;
    this.budgetKey = choices?.budgetKey ?? plan.name;
    this.partition = choices?.partition;
    this.attemptTimeoutMs = plan.attemptTimeoutMs;
    this.plan = plan;
    this.pipeline = pipeline ?? Pipeline.EMPTY;
    this.idempotent = choices?.idempotent ?? plan.idempotent;
    this.verifiable = choices?.verify !== undefined;
    this.tokens = undefined;
    this.entered = 0;
    this.attempt = 0;
    this.attemptsMade = 0;
    this.attemptStart = 0;
    this.timeoutMs = 0;
    this.deadlineBound = false;
    this.inAttempt = false;
    this.token = undefined;
    this.extras = undefined;
    const own = choices?.attemptTimeoutMs;
    if (own !== undefined) this.attemptTimeoutMs = this.more().attemptTimeoutBase = own;
  }

  /** The attempt timeout each attempt starts from: the call's own, else the plan's. */
  private get attemptTimeoutBase(): number {
    return this.seen.attemptTimeoutBase ?? this.plan.attemptTimeoutMs;
  }

  /** The rarely needed state, made on first write. */
  private more(): CallExtras {
    let extras = this.extras;
    if (extras === undefined) {
      extras = new CallExtras();
      this.extras = extras;
    }
    return extras;
  }

  /** The rarely needed state for reading (its starting values until something wrote it). */
  private get seen(): Readonly<CallExtras> {
    return this.extras ?? NO_EXTRAS;
  }

  // The rarely needed state, read and written as if it were the machine's own fields (stages
  // and drivers see no difference).

  /** In `exit` with `RESULT_NEUTRAL`: our own deadline cut the attempt. */
  get cutByOwnDeadline(): boolean {
    return this.seen.cutByOwnDeadline;
  }
  /** Set by the driver before `succeeded` when another attempt's answer (a hedge) won. */
  get answerUnused(): boolean {
    return this.seen.answerUnused;
  }
  set answerUnused(value: boolean) {
    if (value || this.extras !== undefined) this.more().answerUnused = value;
  }
  get waitMs(): number {
    return this.seen.waitMs;
  }
  set waitMs(value: number) {
    this.more().waitMs = value;
  }
  get waitAgain(): boolean {
    return this.seen.waitAgain;
  }
  set waitAgain(value: boolean) {
    if (value || this.extras !== undefined) this.more().waitAgain = value;
  }
  get queue(): Queue | undefined {
    return this.seen.queue;
  }
  set queue(value: Queue | undefined) {
    this.more().queue = value;
  }
  get queueWaitMs(): number {
    return this.seen.queueWaitMs;
  }
  set queueWaitMs(value: number) {
    this.more().queueWaitMs = value;
  }
  get retryAfterMs(): number | undefined {
    return this.seen.retryAfterMs;
  }
  set retryAfterMs(value: number | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().retryAfterMs = value;
  }
  get retryPaced(): boolean {
    return this.seen.retryPaced;
  }
  set retryPaced(value: boolean) {
    if (value || this.extras !== undefined) this.more().retryPaced = value;
  }
  /** `STEP_SLEEP` at 0 ms must still yield (the pacer took over the retry's timing). */
  get yieldBeforeRetry(): boolean {
    return this.seen.yieldBeforeRetry;
  }
  get classification(): Classification | undefined {
    return this.seen.classification;
  }
  /** The last retry decision (`failed`), for events. */
  get decision(): RetryDecision | undefined {
    return this.seen.decision;
  }
  get lastError(): unknown {
    return this.seen.lastError;
  }
  get lastOutcome(): 'failed' | 'unknown' {
    return this.seen.lastOutcome;
  }
  /** `STEP_GIVE_UP`: why, with what, and when to come back. */
  get reason(): GiveUpReason {
    return this.seen.reason;
  }
  get outcome(): 'failed' | 'unknown' {
    return this.seen.outcome;
  }
  get cause(): unknown {
    return this.seen.cause;
  }
  get giveUpRetryAfterMs(): number | undefined {
    return this.seen.giveUpRetryAfterMs;
  }
  /**
   * Set by the driver before it reports an attempt whose operation is still running (it
   * timed out or was abandoned): how to run something once the operation settles.
   */
  get operationSettles(): ((release: () => void) => void) | undefined {
    return this.seen.operationSettles;
  }
  set operationSettles(value: ((release: () => void) => void) | undefined) {
    if (value !== undefined || this.extras !== undefined) this.more().operationSettles = value;
  }

  /** The pipeline's gates (stages around each attempt). */
  private get gates(): readonly Stage[] {
    return this.pipeline.gates;
  }

  get name(): string {
    return this.plan.name;
  }

  get minAttemptTimeMs(): number {
    return this.plan.retry.minAttemptTimeMs;
  }

  /** The call begins: stages that count calls (the budget) are told. */
  start(nowMs: number): void {
    const starters = this.pipeline.starters;
    for (let i = 0; i < starters.length; i++) starters[i]!.start?.(this, nowMs);
  }

  /** The next attempt begins (after the driver's `beforeAttempt` hook, if any). */
  begin(nowMs: number): Step {
    this.attempt++;
    const extras = this.extras;
    if (extras?.needsVerify) {
      extras.needsVerify = false;
      return STEP_VERIFY;
    }
    return this.admit(nowMs);
  }

  /** The verify hook answered: `applied` ends the call (`verified-applied`). */
  verified(nowMs: number, applied: boolean): Step {
    if (applied) return this.giveUp('verified-applied', undefined, undefined);
    return this.admit(nowMs);
  }

  /** After `STEP_WAIT`: admission goes on from the stage after the one that asked to wait. */
  resume(nowMs: number): Step {
    this.attemptStart = nowMs;
    return this.enterFrom(this.entered, nowMs);
  }

  /** After `STEP_QUEUE`: the wait ended at `nowMs`, resolving to `value` (the stage's `afterQueue` reads it). */
  slotGranted(nowMs: number, value?: unknown): Step {
    const i = this.entered;
    this.attemptStart = nowMs;
    const admission = this.takeGranted(nowMs, value);
    if (admission === REFUSE) return this.refused(nowMs);
    if (admission === WAIT) {
      // A wait that asks the stage again when it ends (a pacer's held ticket).
      if (this.waitAgain) this.entered = i;
      this.waitAgain = false;
      return STEP_WAIT;
    }
    if (admission === QUEUE) {
      this.entered = i;
      return STEP_QUEUE;
    }
    if (!attemptFits(this.deadline, nowMs, this.minAttemptTimeMs)) {
      this.unwind(nowMs);
      return this.giveUp('deadline', undefined, undefined);
    }
    return this.enterFrom(this.entered, nowMs);
  }

  /** After `STEP_QUEUE`: no slot (line full, wait too long); `error` says which. */
  slotRefused(nowMs: number, error: unknown): Step {
    this.unwind(nowMs);
    // A line's wait is bounded by the call's deadline: ended there, the deadline ended the
    // call, not the line (reported as `rejected`, a retryable cause, an outer layer retried a
    // call whose time was up).
    if (nowMs >= this.deadline) return this.waitCutByDeadline(nowMs);
    return this.giveUp('rejected', () => error, undefined);
  }

  /**
   * The call's deadline ended a wait before an attempt (a line, a pacing wait, a hook): reason
   * `deadline` — whether a line's own timer said so (`slotRefused`) or the caller's signal,
   * aborted for that same deadline.
   */
  waitCutByDeadline(nowMs: number): Step {
    this.unwind(nowMs);
    return this.giveUp(
      'deadline',
      () => new DeadlineExceededError({ outcome: 'failed', attempts: this.attemptsMade, downstream: this.name }),
      undefined,
    );
  }

  /** The attempt succeeded. */
  succeeded(nowMs: number): void {
    this.inAttempt = false;
    this.exitAll(nowMs, RESULT_OK);
    this.answerUnused = false;
  }

  /** The attempt failed as `classification`: retry (`STEP_SLEEP`) or give up. */
  failed(nowMs: number, error: unknown, classification: Classification): Step {
    this.inAttempt = false;
    const x = this.more();
    x.classification = classification;
    this.exitAll(nowMs, RESULT_FAILED);
    x.lastError = error;
    x.lastOutcome = classification.outcome;
    x.retryAfterMs = undefined;
    // The attempt that just failed waited for the pacer's slot (the sleep before it was paced).
    if (x.yieldBeforeRetry) x.pacedFailures++;
    const input: RetryInput = {
      attempt: this.attempt,
      backoffStep: this.attempt - x.pacedFailures,
      classification,
      idempotent: this.idempotent,
      verifiable: this.verifiable,
      elapsedMs: nowMs - this.startedAt,
      deadlineRemainingMs: this.deadline - nowMs,
      previousDelayMs: x.previousDelay,
      admit: this.pipeline.retryAdmitters.length === 0 ? undefined : () => this.admitRetry(nowMs),
    };
    const decision = this.plan.retry.decide(input, this.plan.random);
    x.decision = decision;
    if (!decision.retry) {
      x.reason = decision.reason;
      x.outcome = x.lastOutcome;
      x.cause = error;
      x.giveUpRetryAfterMs = decision.retryAfterMs ?? (decision.reason === 'circuit-open' ? x.retryAfterMs : undefined);
      return STEP_GIVE_UP;
    }
    x.previousDelay = decision.delayMs;
    x.needsVerify = decision.verify;
    let waitMs = decision.delayMs;
    let paced = false;
    const timers = this.pipeline.retryTimers;
    for (let i = 0; i < timers.length; i++) {
      const replaced = timers[i]!.retryDelay?.(this, nowMs, waitMs);
      if (replaced !== undefined && replaced >= 0) {
        waitMs = replaced;
        paced = true;
        break;
      }
    }
    x.waitMs = waitMs;
    x.yieldBeforeRetry = paced;
    return STEP_SLEEP;
  }

  /** Our own deadline cut the attempt short: neutral for the stages, reason `deadline`. */
  cutByDeadline(nowMs: number, error: unknown): Step {
    this.inAttempt = false;
    const x = this.more();
    x.cutByOwnDeadline = true;
    this.exitAll(nowMs, RESULT_NEUTRAL);
    x.cutByOwnDeadline = false;
    x.reason = 'deadline';
    x.outcome = 'unknown';
    x.cause = error;
    x.giveUpRetryAfterMs = undefined;
    return STEP_GIVE_UP;
  }

  /**
   * The caller aborted (during an attempt, an admission wait or a sleep): every stage holding
   * something for the attempt gives it back. The outcome to report is `abandonedOutcome`.
   */
  abandon(nowMs: number): void {
    this.exitAll(nowMs, RESULT_NEUTRAL);
    // A stage may hold something for an attempt it has not admitted yet (a pacer's ticket).
    const stages = this.gates;
    for (let i = 0; i < stages.length; i++) stages[i]!.leave?.(this, nowMs);
  }

  /**
   * The caller aborted as a queued slot was granted (`value`): the stage takes the slot first,
   * so that abandoning gives it back — abandoned before, it was never held, so never released.
   */
  abandonGranted(nowMs: number, value: unknown): void {
    this.takeGranted(nowMs, value);
    this.waitAgain = false;
    this.abandon(nowMs);
  }

  /** The queued stage reads its grant (`afterQueue`); unless it refuses, it holds what it took. */
  private takeGranted(nowMs: number, value: unknown): Admission {
    const i = this.entered;
    const stage = this.gates[i]!;
    this.token = undefined;
    const admission = stage.afterQueue === undefined ? ADMIT : stage.afterQueue(this, nowMs, value);
    if (admission !== REFUSE) {
      this.keep(i, this.token);
      this.entered = i + 1;
    }
    return admission;
  }

  whenSettled(release: () => void): void {
    const later = this.operationSettles;
    if (later === undefined) release();
    else later(release);
  }

  /** After `STEP_ATTEMPT`: how long after the attempt's start its first hedge may go; `undefined` for no hedging. */
  hedgeDelayMs(): number | undefined {
    const hedger = this.pipeline.hedger;
    return hedger === undefined ? undefined : hedger.hedgeDelayMs?.(this, this.attemptStart);
  }

  /**
   * Hedge `n` (1-based) of the running attempt, now: admitted by the stages (innermost first,
   * see `Stage.enterHedge`) and timed like an attempt; `undefined` when the deadline leaves no
   * room or a stage refused it (those that admitted it are given it back).
   */
  startHedge(nowMs: number, n: number): HedgeAttempt | undefined {
    if (!this.inAttempt || !attemptFits(this.deadline, nowMs, this.minAttemptTimeMs)) return undefined;
    const hedge = new HedgeAttempt(this, n, nowMs);
    const gates = this.pipeline.hedgeGates;
    for (let i = 0; i < gates.length; i++) {
      const stage = gates[i]!;
      hedge.token = undefined;
      if (stage.enterHedge !== undefined && !stage.enterHedge(hedge, nowMs)) {
        this.exitHedge(hedge, nowMs, RESULT_NEUTRAL);
        return undefined;
      }
      hedge.tokens[i] = hedge.token;
      hedge.entered = i + 1;
    }
    const timer = this.pipeline.timer;
    const base = this.attemptTimeoutBase;
    hedge.run(timer === undefined ? base : (timer.attemptTimeoutMs?.(hedge, nowMs, base) ?? base));
    return hedge;
  }

  /** A hedge that ran ended (`RESULT_NEUTRAL`: it lost the race or was aborted); `classification` with `RESULT_FAILED`. */
  hedgeEnded(hedge: HedgeAttempt, nowMs: number, result: AttemptResult, classification?: Classification): void {
    hedge.classification = classification;
    this.exitHedge(hedge, nowMs, result);
  }

  /** Every stage that admitted the hedge learns how it ended, in the reverse of their admission. */
  private exitHedge(hedge: HedgeAttempt, nowMs: number, result: AttemptResult): void {
    const gates = this.pipeline.hedgeGates;
    for (let i = hedge.entered - 1; i >= 0; i--) {
      hedge.token = hedge.tokens[i];
      gates[i]!.exitHedge?.(hedge, nowMs, result);
    }
    hedge.entered = 0;
  }

  /**
   * `STEP_ATTEMPT`: the attempt's deadline (`Infinity` for none). Worked out when read: a
   * stored one was a number boxed per call, read only by deadline scopes and the simulator.
   */
  get attemptDeadline(): number {
    return this.attemptStart + this.timeoutMs;
  }

  /** Retries still allowed after the current attempt by `maxAttempts`. */
  get retriesLeft(): number {
    return this.plan.retry.maxAttempts - this.attempt;
  }

  /** The outcome of an abandoned call: `unknown` if an attempt was running. */
  get abandonedOutcome(): 'failed' | 'unknown' {
    return this.inAttempt ? 'unknown' : this.lastOutcome;
  }

  refuse(reason: GiveUpReason, cause: (() => unknown) | undefined, retryAfterMs: number | undefined): Admission {
    this.more().refusal = { reason, cause, retryAfterMs };
    return REFUSE;
  }

  private admit(nowMs: number): Step {
    this.attemptStart = nowMs;
    this.entered = 0;
    if (!attemptFits(this.deadline, nowMs, this.minAttemptTimeMs)) {
      return this.giveUp(
        'deadline',
        () => new DeadlineExceededError({ outcome: 'failed', attempts: this.attemptsMade, downstream: this.name }),
        undefined,
      );
    }
    return this.enterFrom(0, nowMs);
  }

  private enterFrom(from: number, nowMs: number): Step {
    const stages = this.gates;
    for (let i = from; i < stages.length; i++) {
      this.token = undefined;
      const enter = stages[i]!.enter;
      const admission = enter === undefined ? ADMIT : enter.call(stages[i], this, nowMs);
      if (admission === ADMIT) {
        this.keep(i, this.token);
        this.entered = i + 1;
        continue;
      }
      if (admission === WAIT) {
        this.keep(i, this.token);
        this.entered = this.waitAgain ? i : i + 1;
        this.waitAgain = false;
        return STEP_WAIT;
      }
      if (admission === QUEUE) return STEP_QUEUE;
      return this.refused(nowMs);
    }
    return this.startAttempt();
  }

  /** A stage refused the attempt: the stages before it give back what they took. */
  private refused(nowMs: number): Step {
    this.unwind(nowMs);
    const x = this.more();
    const r = x.refusal as NonNullable<CallExtras['refusal']>;
    x.refusal = undefined;
    return this.giveUp(r.reason, r.cause, r.retryAfterMs);
  }

  /** The attempt timeout, last before the operation: the earlier of the call's deadline and the attempt's own timeout. */
  private startAttempt(): Step {
    const remaining = this.deadline - this.attemptStart;
    const timer = this.pipeline.timer;
    const base = this.attemptTimeoutBase;
    let timeoutMs = timer === undefined ? base : (timer.attemptTimeoutMs?.(this, this.attemptStart, base) ?? base);
    this.attemptTimeoutMs = timeoutMs;
    let deadlineBound = false;
    if (remaining < timeoutMs) {
      timeoutMs = remaining;
      deadlineBound = true;
    }
    this.timeoutMs = timeoutMs;
    this.deadlineBound = deadlineBound;
    this.attemptsMade++;
    this.inAttempt = true;
    return STEP_ATTEMPT;
  }

  private admitRetry(nowMs: number): GiveUpReason | undefined {
    const admitters = this.pipeline.retryAdmitters;
    this.retryPaced = false;
    for (let i = 0; i < admitters.length; i++) {
      const refused = admitters[i]!.admitRetry?.(this, nowMs);
      if (refused !== undefined) return refused;
    }
    return undefined;
  }

  /** Stores stage `i`'s token for the attempt (no array until a stage keeps one). */
  private keep(i: number, token: unknown): void {
    if (this.tokens === undefined) {
      if (token === undefined) return;
      this.tokens = new Array(this.gates.length);
    }
    this.tokens[i] = token;
  }

  /** Every stage that admitted the attempt learns how it ended, innermost first. */
  private exitAll(nowMs: number, result: AttemptResult): void {
    const stages = this.gates;
    const tokens = this.tokens;
    for (let i = this.entered - 1; i >= 0; i--) {
      this.token = tokens === undefined ? undefined : tokens[i];
      stages[i]!.exit?.(this, nowMs, result);
    }
    this.entered = 0;
    this.operationSettles = undefined;
  }

  /** A later stage refused, or the deadline passed, before the attempt started. */
  private unwind(nowMs: number): void {
    this.exitAll(nowMs, RESULT_NEUTRAL);
  }

  /**
   * Ends the call before an attempt could start. A first attempt refused never reached the
   * callee (`cause` says why, outcome `failed`); a retry refused ends the call with what the
   * last real attempt said.
   */
  private giveUp(reason: GiveUpReason, cause: (() => unknown) | undefined, retryAfterMs: number | undefined): Step {
    const x = this.more();
    x.reason = reason;
    if (this.attemptsMade > 0) {
      x.outcome = x.lastOutcome;
      x.cause = x.lastError;
    } else {
      x.outcome = 'failed';
      x.cause = cause?.();
    }
    x.giveUpRetryAfterMs = retryAfterMs;
    return STEP_GIVE_UP;
  }
}
