import type { HedgingPolicy } from '../../policies/hedging.js';
import type { HedgeCall, Stage, StageCall } from '../stage.js';
import type { BudgetLedger } from './budget-stage.js';

/** What the hedging policy draws on besides itself. */
export interface HedgingParts {
  /** Each hedge withdraws a retry from it (asked last). */
  budget?: BudgetLedger | undefined;
}

/**
 * Hedging, as a stage placed just inside the budget: every call deposits its share of a
 * hedge when it starts; an idempotent call's attempt may be hedged after `hedgeDelayMs`; and a
 * hedge, once the stages inside this one gave it a slot (bulkhead, adaptive limit), is
 * granted by the policy — not `maxHedges` yet, under `maxExtraLoad`, and a retry token from
 * the budget, in that order, so that a refused hedge never spends a token. Trouble is the
 * business of the stages inside this one, asked before it: the breaker refuses hedges while
 * it is not closed, the pacing stage while the callee is being paced.
 */
export class HedgingStage implements Stage {
  readonly name = 'hedging';
  readonly observesSuccess = false;

  constructor(
    readonly policy: HedgingPolicy,
    private readonly parts: HedgingParts = {},
  ) {}

  start(_call: StageCall, nowMs: number): void {
    this.policy.recordRequest(nowMs);
  }

  hedgeDelayMs(call: StageCall, nowMs: number): number | undefined {
    return call.idempotent ? this.policy.delayMs(nowMs) : undefined;
  }

  enterHedge(hedge: HedgeCall, nowMs: number): boolean {
    const budget = this.parts.budget;
    const refusal = this.policy.decide({
      nowMs,
      idempotent: hedge.idempotent,
      hedgesSent: hedge.hedge - 1,
      trouble: false,
      retryBudget: budget === undefined ? undefined : () => budget.tryRetry(hedge.budgetKey, nowMs),
    });
    return refusal === undefined;
  }
}
