import type { GiveUpReason } from '../../errors/errors.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  QUEUE,
  REFUSE,
  RESULT_FAILED,
  RESULT_OK,
  type Stage,
  type StageCall,
  type VirtualLine,
} from '../stage.js';

/** The keyed retry budgets a `BudgetStage` draws on (`KeyedRetryBudgets`, or a store-backed one). */
export interface BudgetLedger {
  recordRequest(key: string, nowMs: number): void;
  tryRetry(key: string, nowMs: number): boolean;
  recordOutcome(key: string, nowMs: number, ok: boolean): void;
  /**
   * A ledger that may need a round trip to decide (a fleet store's budget): `true`/`false`
   * now, or a claim decided later. The retry is admitted provisionally and waits for the
   * decision before its attempt (usually already there after the backoff).
   */
  claimRetry?(key: string, nowMs: number): boolean | RetryClaim;
}

/**
 * A retry admitted before its budget token was confirmed. `settled` always resolves (never
 * rejects) to whether it was granted; in the simulator it is a line on virtual time, granted
 * with that answer.
 */
export interface RetryClaim {
  /** `undefined` until decided. */
  readonly granted: boolean | undefined;
  readonly settled: PromiseLike<boolean> | VirtualLine;
}

/**
 * The retry budget: every call deposits once when it starts; every retry must withdraw
 * (step 4 of the retry decision). With `shrinkOnErrors`, each attempt's outcome is recorded.
 */
export class BudgetStage implements Stage {
  readonly name = 'budget';
  /** It files requests in a window seconds wide; a start a few ms old lands in the same bucket, or the one before. */
  readonly coarseStart = true;
  readonly observesSuccess: boolean;

  constructor(
    private readonly budgets: BudgetLedger,
    options: {
      /** Whether outcomes matter (`shrinkOnErrors`); a success is then recorded too. */
      recordsOutcomes?: boolean;
      /** Told of every retry the budget refused. */
      onRefused?: (key: string, nowMs: number) => void;
    } = {},
  ) {
    this.observesSuccess = options.recordsOutcomes ?? false;
    this.onRefused = options.onRefused;
    // Without outcomes to record, the budget takes no part in attempts (see `Pipeline`).
    this.exit = this.observesSuccess ? (call, nowMs, result) => this.record(call, nowMs, result) : undefined;
    if (budgets.claimRetry !== undefined) {
      const claims = new WeakMap<StageCall, RetryClaim>();
      this.claims = claims;
      this.enter = (call, nowMs) => {
        const claim = claims.get(call);
        if (claim === undefined) return ADMIT;
        claims.delete(call);
        if (claim.granted === undefined) {
          call.queue = claim.settled;
          call.queueWaitMs = Number.POSITIVE_INFINITY;
          return QUEUE;
        }
        return this.decided(call, nowMs, claim.granted);
      };
      this.afterQueue = (call, nowMs, granted) => this.decided(call, nowMs, granted === true);
    }
  }

  /** With a ledger that claims: retries admitted provisionally, until their attempt is entered. */
  private readonly claims: WeakMap<StageCall, RetryClaim> | undefined;
  /** With a ledger that claims: a provisionally admitted retry waits for the ledger's decision. */
  readonly enter: ((call: StageCall, nowMs: number) => Admission) | undefined;
  readonly afterQueue: ((call: StageCall, nowMs: number, value: unknown) => Admission) | undefined;

  private decided(call: StageCall, nowMs: number, granted: boolean): Admission {
    if (granted) return ADMIT;
    this.onRefused?.(call.budgetKey, nowMs);
    call.refuse('budget', undefined, undefined);
    return REFUSE;
  }

  /** With `recordsOutcomes` only: each attempt's outcome feeds `shrinkOnErrors`. */
  readonly exit: ((call: StageCall, nowMs: number, result: AttemptResult) => void) | undefined;

  private record(call: StageCall, nowMs: number, result: AttemptResult): void {
    if (result === RESULT_FAILED) this.budgets.recordOutcome(call.budgetKey, nowMs, false);
    else if (result === RESULT_OK) this.budgets.recordOutcome(call.budgetKey, nowMs, true);
  }

  private readonly onRefused: ((key: string, nowMs: number) => void) | undefined;

  start(call: StageCall, nowMs: number): void {
    this.budgets.recordRequest(call.budgetKey, nowMs);
  }

  admitRetry(call: StageCall, nowMs: number): GiveUpReason | undefined {
    // Paced retries leave at the callee's measured rate, not ours: nothing to spend.
    if (call.retryPaced) return undefined;
    const claims = this.claims;
    if (claims !== undefined) {
      const claim = (this.budgets.claimRetry as NonNullable<BudgetLedger['claimRetry']>)(call.budgetKey, nowMs);
      if (claim === true) return undefined;
      if (claim !== false) {
        claims.set(call, claim);
        return undefined;
      }
    } else if (this.budgets.tryRetry(call.budgetKey, nowMs)) return undefined;
    this.onRefused?.(call.budgetKey, nowMs);
    return 'budget';
  }
}
