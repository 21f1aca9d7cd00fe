import { describe, expect, it } from 'vitest';
import { ALL_OPTIONAL_POLICIES } from '../../src/orchestration/all-optional-policies.js';
import {
  attemptTimeoutOf,
  budgetStageOf,
  DOWNSTREAM_DEFAULTS,
  lanePipeline,
  retryPolicyOf,
} from '../../src/orchestration/downstream-plan.js';
import { LITE_POLICIES } from '../../src/orchestration/optional-policies.js';
import { CircuitBreaker } from '../../src/policies/circuit-breaker.js';
import { LatencyPolicies } from '../../src/policies/latency-policies.js';
import { Pacer } from '../../src/policies/pacer.js';
import { KeyedRetryBudgets } from '../../src/policies/retry-budget.js';
import { SeededRandom } from '../../src/random/random.js';

describe('downstream plan (options → policies and pipeline, shared by the runtime and the simulator)', () => {
  it('retryPolicyOf: false is one attempt; unbounded attempts are bounded by the total timeout', () => {
    expect(retryPolicyOf(false, undefined).maxAttempts).toBe(1);
    expect(retryPolicyOf(undefined, undefined).maxAttempts).toBe(3);
    const bounded = retryPolicyOf({ maxAttempts: Number.POSITIVE_INFINITY }, 5_000);
    expect(bounded.maxElapsedMs).toBe(5_000);
    expect(() => retryPolicyOf({ maxAttempts: Number.POSITIVE_INFINITY }, undefined)).toThrow(/maxElapsedMs/);
  });

  it('attemptTimeoutOf: none with false, a derived timeout’s ceiling, the number, else the default', () => {
    expect(attemptTimeoutOf(false)).toBe(Number.POSITIVE_INFINITY);
    expect(attemptTimeoutOf({ ceilingMs: 750 })).toBe(750);
    expect(attemptTimeoutOf(250)).toBe(250);
    expect(attemptTimeoutOf(undefined)).toBe(DOWNSTREAM_DEFAULTS.attemptTimeoutMs);
  });

  it('budgetStageOf: none without a ledger; outcomes recorded only with shrinkOnErrors', () => {
    const ledger = new KeyedRetryBudgets();
    expect(budgetStageOf(undefined, {})).toBeUndefined();
    expect(budgetStageOf(ledger, {})?.exit).toBeUndefined();
    expect(budgetStageOf(ledger, { shrinkOnErrors: true })?.exit).toBeTypeOf('function');
  });

  it('lanePipeline: one fixed order, budget → hedging → breaker → pacing → bulkhead → latency; nothing configured is EMPTY', () => {
    const random = new SeededRandom(1);
    const budget = budgetStageOf(new KeyedRetryBudgets(), {});
    const slots = { tryAcquire: () => true, release: () => {}, acquire: () => Promise.resolve() };
    const pipeline = lanePipeline({
      optional: ALL_OPTIONAL_POLICIES,
      latency: new LatencyPolicies({ concurrency: {}, attemptTimeoutMs: undefined, hedging: {} }, random),
      bulkhead: slots,
      pacer: new Pacer(),
      breaker: new CircuitBreaker({}, random),
      budget,
    });
    expect(pipeline.stages.map((s) => s.name)).toEqual(['budget', 'hedging', 'breaker', 'pacing', 'bulkhead', 'latency']);
    // Hedges are admitted innermost first: the slots, then trouble (pacing, breaker: free
    // checks), then the policy (which spends its extra load and draws on the budget).
    expect(pipeline.hedgeGates.map((s) => s.name)).toEqual(['latency', 'bulkhead', 'pacing', 'breaker', 'hedging']);
    expect(pipeline.hedger?.name).toBe('hedging');
    expect(lanePipeline({ optional: LITE_POLICIES }).stages).toEqual([]);
  });

  it('lanePipeline: without hedging, no stage hedges; a latency stage alone still times attempts', () => {
    const random = new SeededRandom(1);
    const pipeline = lanePipeline({
      optional: ALL_OPTIONAL_POLICIES,
      latency: new LatencyPolicies({ concurrency: undefined, attemptTimeoutMs: {}, hedging: undefined }, random),
    });
    expect(pipeline.stages.map((s) => s.name)).toEqual(['latency']);
    expect(pipeline.hedger).toBeUndefined();
    expect(pipeline.timer?.name).toBe('latency');
  });
});
