import type { GiveUpReason } from '../../errors/errors.js';
import { type AttemptResult, RESULT_FAILED, RESULT_OK, type Stage, type StageCall } from '../stage.js';

/** The keyed retry budgets a `BudgetStage` draws on (`KeyedRetryBudgets`, or a store-backed one). */
export interface BudgetLedger {
  recordRequest(key: string, nowMs: number): void;
  tryRetry(key: string, nowMs: number): boolean;
  recordOutcome(key: string, nowMs: number, ok: boolean): void;
}

/**
 * The retry budget: every call deposits once when it starts; every retry must withdraw
 * (step 4 of the retry decision). With `shrinkOnErrors`, each attempt's outcome is recorded.
 */
export class BudgetStage implements Stage {
  readonly name = 'budget';
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
    if (this.budgets.tryRetry(call.budgetKey, nowMs)) return undefined;
    this.onRefused?.(call.budgetKey, nowMs);
    return 'budget';
  }
}
