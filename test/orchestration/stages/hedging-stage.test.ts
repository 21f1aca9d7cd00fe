import { describe, expect, it } from 'vitest';
import { HedgingStage } from '../../../src/orchestration/stages/hedging-stage.js';
import { HedgingPolicy } from '../../../src/policies/hedging.js';
import { KeyedRetryBudgets } from '../../../src/policies/retry-budget.js';
import { stageCall } from './stage-call.js';

const hedgeCall = (fields = {}) => ({ ...stageCall(fields), hedge: 1 });

describe('HedgingStage', () => {
  it('every call deposits its share of a hedge; only idempotent calls are hedged, after the delay', () => {
    const policy = new HedgingPolicy({ delayMs: 20, maxExtraLoad: 0.5 });
    const stage = new HedgingStage(policy);
    stage.start(stageCall(), 0);
    expect(stage.hedgeDelayMs(stageCall(), 0)).toBe(20);
    expect(stage.hedgeDelayMs(stageCall({ idempotent: false }), 0)).toBeUndefined();
    // One call deposited half a hedge: not enough for one.
    expect(stage.enterHedge(hedgeCall(), 20)).toBe(false);
    stage.start(stageCall(), 20);
    expect(stage.enterHedge(hedgeCall(), 20)).toBe(true);
  });

  it('the retry budget is asked last: an empty one refuses the hedge', () => {
    const policy = new HedgingPolicy({ delayMs: 20, maxExtraLoad: 1 });
    const budget = new KeyedRetryBudgets({ budget: { ratio: 0, reservePerSecond: 0 } });
    const stage = new HedgingStage(policy, { budget });
    stage.start(stageCall(), 0);
    expect(stage.enterHedge(hedgeCall(), 20)).toBe(false);
  });
});
