import { describe, expect, it } from 'vitest';
import { RESULT_FAILED, RESULT_OK } from '../../../src/orchestration/stage.js';
import { BudgetStage } from '../../../src/orchestration/stages/budget-stage.js';
import { KeyedRetryBudgets } from '../../../src/policies/retry-budget.js';
import { stageCall } from './stage-call.js';

describe('BudgetStage', () => {
  it('deposits once per call, on the call’s budget key; refuses a retry once the budget is spent and says so', () => {
    const budgets = new KeyedRetryBudgets({ budget: { ratio: 0.5, reservePerSecond: 0 } });
    const refusals: string[] = [];
    const stage = new BudgetStage(budgets, { onRefused: (key, now) => refusals.push(`${key}@${now}`) });
    const call = stageCall({ budgetKey: 'payments' });
    for (let i = 0; i < 4; i++) stage.start(call, 0);
    expect(budgets.has('payments')).toBe(true);
    expect(stage.admitRetry(call, 1)).toBeUndefined();
    expect(stage.admitRetry(call, 1)).toBeUndefined();
    expect(stage.admitRetry(call, 1)).toBe('budget');
    expect(refusals).toEqual(['payments@1']);
  });

  it('a retry the pacer will hold (marked retryPaced by the pacing stage) spends no token and is never refused', () => {
    const budgets = new KeyedRetryBudgets({ budget: { ratio: 0.5, reservePerSecond: 0 } });
    const stage = new BudgetStage(budgets);
    const call = stageCall();
    stage.start(call, 0);
    stage.start(call, 0);
    call.retryPaced = true;
    for (let i = 0; i < 10; i++) expect(stage.admitRetry(call, 1)).toBeUndefined();
    // The one token of 2 × 0.5 is still there for an unpaced retry, and then it is spent.
    call.retryPaced = false;
    expect(stage.admitRetry(call, 1)).toBeUndefined();
    expect(stage.admitRetry(call, 1)).toBe('budget');
  });

  it('records outcomes only when told to (shrinkOnErrors), and a success needs a clock read only then', () => {
    const shrinking = new KeyedRetryBudgets({ budget: { shrinkOnErrors: true } });
    const stage = new BudgetStage(shrinking, { recordsOutcomes: true });
    expect(stage.observesSuccess).toBe(true);
    expect(new BudgetStage(shrinking).observesSuccess).toBe(false);
    expect(new BudgetStage(shrinking).exit).toBeUndefined();
    const call = stageCall({ classification: { outcome: 'failed', retryable: true } });
    stage.start(call, 0);
    for (let i = 0; i < 50; i++) stage.exit?.(call, i, RESULT_FAILED);
    const shrunk = shrinking.get('api').effectiveRatio(50);
    for (let i = 0; i < 500; i++) stage.exit?.(call, 50, RESULT_OK);
    expect(shrinking.get('api').effectiveRatio(50)).toBeGreaterThan(shrunk);
  });
});
