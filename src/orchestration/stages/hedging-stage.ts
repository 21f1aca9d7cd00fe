import type { CircuitBreaker } from '../../policies/circuit-breaker.js';
import type { HedgingPolicy } from '../../policies/hedging.js';
import type { HedgeCall, Stage, StageCall } from '../stage.js';
import type { BudgetLedger } from './budget-stage.js';

/** What the hedging policy consults besides itself: whether the callee is in trouble, and the retry budget. */
export interface HedgingParts {
  /** A breaker that is not closed means trouble: no hedges. */
  breaker?: CircuitBreaker | undefined;
  /** A pacer that is throttling means trouble: no hedges. */
  pacer?: { throttling(nowMs: number): boolean } | undefined;
  /** Each hedge withdraws a retry from it (asked last). */
  budget?: BudgetLedger | undefined;
}

/**
 * Hedging, as a stage placed just inside the budget: every call deposits its share of a
 * hedge when it starts; an idempotent call's attempt may be hedged after `hedgeDelayMs`; and a
 * hedge, once the stages inside this one gave it a slot (bulkhead, adaptive limit), is
 * granted by the policy — not `maxHedges` yet, the callee not in trouble (breaker closed,
 * pacer calm), under `maxExtraLoad`, and a retry token from the budget, in that order, so
 * that a refused hedge never spends a token.
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
    const { breaker, pacer, budget } = this.parts;
    const trouble = (breaker !== undefined && breaker.state(nowMs) !== 'closed') || pacer?.throttling(nowMs) === true;
    const refusal = this.policy.decide({
      nowMs,
      idempotent: hedge.idempotent,
      hedgesSent: hedge.hedge - 1,
      trouble,
      retryBudget: budget === undefined ? undefined : () => budget.tryRetry(hedge.budgetKey, nowMs),
    });
    return refusal === undefined;
  }
}
