import type { Classification } from '../classify/outcome.js';
import type { GiveUpReason } from '../errors/errors.js';
import { type Admission, type HedgeCall, type Queue, REFUSE } from './stage.js';

/** What a hedge takes over from the call it hedges (a `CallMachine`). */
export interface HedgedCall {
  readonly attempt: number;
  readonly attemptsMade: number;
  readonly startedAt: number;
  readonly deadline: number;
  readonly minAttemptTimeMs: number;
  readonly budgetKey: string;
  readonly partition: string | undefined;
  readonly idempotent: boolean;
  readonly name: string;
  readonly retriesLeft: number;
}

/**
 * One hedge of a running attempt (`CallMachine.startHedge`): what the stages that admit it
 * read and keep (`HedgeCall`), and what its driver needs to run it — the attempt's timing
 * (`AttemptTiming` of the runtime), its own timeout clamped to the call's deadline.
 */
export class HedgeAttempt implements HedgeCall {
  readonly attempt: number;
  readonly attemptsMade: number;
  readonly startedAt: number;
  readonly deadline: number;
  readonly minAttemptTimeMs: number;
  readonly budgetKey: string;
  readonly partition: string | undefined;
  readonly idempotent: boolean;
  readonly name: string;
  readonly retriesLeft: number;
  /** When the hedge starts. */
  readonly attemptStart: number;
  /** The attempt timeout in force (fixed or derived), then its timeout clamped to the deadline. */
  attemptTimeoutMs = 0;
  timeoutMs = 0;
  deadlineBound = false;
  attemptDeadline = 0;
  /** True once the hedge runs (false while it is admitted, or unwound before it started). */
  inAttempt = false;
  cutByOwnDeadline = false;
  answerUnused = false;
  /** With `RESULT_FAILED`: how the hedge failed. */
  classification: Classification | undefined = undefined;
  token: unknown = undefined;
  waitMs = 0;
  waitAgain = false;
  queue: Queue | undefined = undefined;
  queueWaitMs = 0;
  retryAfterMs: number | undefined = undefined;
  retryPaced = false;
  /** Per hedge gate (`Pipeline.hedgeGates`), its token; and how many admitted the hedge. */
  readonly tokens: unknown[] = [];
  entered = 0;
  /** Set by the driver when the hedge ended while its operation runs on (see `StageCall.whenSettled`). */
  operationSettles: ((release: () => void) => void) | undefined = undefined;

  constructor(
    call: HedgedCall,
    /** 1-based. */
    readonly hedge: number,
    nowMs: number,
  ) {
    this.attempt = call.attempt;
    this.attemptsMade = call.attemptsMade;
    this.startedAt = call.startedAt;
    this.deadline = call.deadline;
    this.minAttemptTimeMs = call.minAttemptTimeMs;
    this.budgetKey = call.budgetKey;
    this.partition = call.partition;
    this.idempotent = call.idempotent;
    this.name = call.name;
    this.retriesLeft = call.retriesLeft;
    this.attemptStart = nowMs;
  }

  /** The hedge runs, timed out after `attemptTimeoutMs` or at the deadline, whichever comes first. */
  run(attemptTimeoutMs: number): void {
    this.attemptTimeoutMs = attemptTimeoutMs;
    const remaining = this.deadline - this.attemptStart;
    this.deadlineBound = remaining < attemptTimeoutMs;
    this.timeoutMs = this.deadlineBound ? remaining : attemptTimeoutMs;
    this.attemptDeadline = this.attemptStart + this.timeoutMs;
    this.inAttempt = true;
  }

  /** Hedges are admitted or not (`enterHedge`); nothing refuses them with a reason. */
  refuse(_reason: GiveUpReason, _cause: (() => unknown) | undefined, _retryAfterMs: number | undefined): Admission {
    return REFUSE;
  }

  whenSettled(release: () => void): void {
    const later = this.operationSettles;
    if (later === undefined) release();
    else later(release);
  }
}
