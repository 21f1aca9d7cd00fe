import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { ALL_OPTIONAL_POLICIES } from '../../src/orchestration/all-optional-policies.js';
import { CallMachine, STEP_ATTEMPT } from '../../src/orchestration/call-machine.js';
import { budgetStageOf, lanePipeline } from '../../src/orchestration/downstream-plan.js';
import type { Pipeline } from '../../src/orchestration/pipeline.js';
import { RESULT_FAILED, RESULT_NEUTRAL, RESULT_OK } from '../../src/orchestration/stage.js';
import { BulkheadSlots } from '../../src/policies/bulkhead-slots.js';
import { CircuitBreaker } from '../../src/policies/circuit-breaker.js';
import { LatencyPolicies, type LatencyPolicyOptions } from '../../src/policies/latency-policies.js';
import { KeyedRetryBudgets, type RetryBudgetOptions } from '../../src/policies/retry-budget.js';
import { RetryPolicy } from '../../src/policies/retry-decision.js';
import { SeededRandom } from '../../src/random/random.js';

const TIMED_OUT: Classification = { outcome: 'unknown', retryable: true, timeout: true };

/** A lane's pipeline with hedging (a fixed delay unless given) and what it is made of. */
function lane(
  setup: { latency?: Partial<LatencyPolicyOptions>; budget?: RetryBudgetOptions; bulkhead?: number; breaker?: boolean } = {},
) {
  const random = new SeededRandom(1);
  const latency = new LatencyPolicies(
    { concurrency: undefined, attemptTimeoutMs: undefined, hedging: { delayMs: 50, maxExtraLoad: 1 }, ...setup.latency },
    random,
  );
  const budgets = new KeyedRetryBudgets({ budget: setup.budget ?? {} });
  const slots = new BulkheadSlots({ maxConcurrent: setup.bulkhead ?? 10 });
  const bulkhead = { tryAcquire: () => slots.tryAcquire(), release: () => void slots.release(), join: () => undefined };
  const breaker = setup.breaker ? new CircuitBreaker({}, random) : undefined;
  const pipeline = lanePipeline({
    optional: ALL_OPTIONAL_POLICIES,
    budget: budgetStageOf(budgets, {}),
    breaker,
    bulkhead,
    latency,
    hedgeBudget: budgets,
  });
  return { latency, budgets, slots, breaker, pipeline };
}

function call(pipeline: Pipeline, options: { deadline?: number; idempotent?: boolean; attemptTimeoutMs?: number } = {}) {
  const plan = {
    name: 'api',
    retry: new RetryPolicy({ maxAttempts: 2 }),
    random: new SeededRandom(2),
    attemptTimeoutMs: options.attemptTimeoutMs ?? 1_000,
    idempotent: true,
  };
  const m = new CallMachine(plan, pipeline, 0, options.deadline ?? Number.POSITIVE_INFINITY, { idempotent: options.idempotent });
  m.start(0);
  expect(m.begin(0)).toBe(STEP_ATTEMPT);
  return m;
}

describe('CallMachine: hedges admitted by the stages', () => {
  it('hedgeDelayMs: the hedging stage says when; none for a non-idempotent call or without hedging', () => {
    expect(call(lane().pipeline).hedgeDelayMs()).toBe(50);
    expect(call(lane().pipeline, { idempotent: false }).hedgeDelayMs()).toBeUndefined();
    const unhedged = lane({ latency: { hedging: undefined, concurrency: {} } });
    expect(call(unhedged.pipeline).hedgeDelayMs()).toBeUndefined();
    // Learned delay: none until enough latencies are known.
    expect(call(lane({ latency: { hedging: {} } }).pipeline).hedgeDelayMs()).toBeUndefined();
  });

  it('an admitted hedge holds a bulkhead slot and a slot of the limit, and is timed like an attempt, within the deadline', () => {
    const l = lane({ latency: { concurrency: { initialLimit: 5 } } });
    const m = call(l.pipeline, { deadline: 600, attemptTimeoutMs: 1_000 });
    expect([l.slots.active, l.latency.limit?.inFlight]).toEqual([1, 1]);
    const hedge = m.startHedge(50, 1);
    expect(hedge).toBeDefined();
    expect([l.slots.active, l.latency.limit?.inFlight]).toEqual([2, 2]);
    expect(hedge).toMatchObject({ hedge: 1, attempt: 1, attemptStart: 50, attemptTimeoutMs: 1_000, timeoutMs: 550 });
    expect([hedge?.deadlineBound, hedge?.attemptDeadline]).toEqual([true, 600]);
    m.hedgeEnded(hedge!, 80, RESULT_OK);
    // Its slots come back; its latency (30 ms) is learned by the hedging policy.
    expect([l.slots.active, l.latency.limit?.inFlight]).toEqual([1, 1]);
    const learned = l.latency.hedging?.latency.quantile(0.5) as number;
    expect(Math.abs(learned - 30)).toBeLessThan(1.5);
  });

  it('slots first, then the policy, then the budget: a full bulkhead refuses before any token is spent', () => {
    const l = lane({ bulkhead: 1, latency: { concurrency: { initialLimit: 5 } } });
    const m = call(l.pipeline);
    expect(m.startHedge(50, 1)).toBeUndefined();
    // The limit's slot taken for the hedge was given back; the policy granted nothing.
    expect(l.latency.limit?.inFlight).toBe(1);
    expect(l.latency.hedging?.sent).toBe(0);
  });

  it('an empty retry budget refuses the hedge after the policy: slots given back, nothing learned from it', () => {
    const l = lane({ budget: { ratio: 0, reservePerSecond: 0 }, latency: { concurrency: { initialLimit: 5 } } });
    const m = call(l.pipeline);
    expect(m.startHedge(50, 1)).toBeUndefined();
    expect([l.slots.active, l.latency.limit?.inFlight]).toEqual([1, 1]);
    expect(l.latency.hedging?.latency.weight(50)).toBe(0);
  });

  it('a breaker that is not closed means trouble: no hedge (and the breaker hears nothing of it)', () => {
    const l = lane({ breaker: true });
    const m = call(l.pipeline);
    l.breaker?.isolate(10);
    expect(m.startHedge(50, 1)).toBeUndefined();
    expect(l.slots.active).toBe(1);
    l.breaker?.close(60);
    const hedge = m.startHedge(70, 1);
    expect(hedge).toBeDefined();
    expect(l.breaker?.state(70)).toBe('closed');
  });

  it('no hedge when the deadline leaves less than minAttemptTimeMs, or no attempt runs', () => {
    const l = lane();
    const m = call(l.pipeline, { deadline: 100 });
    expect(m.startHedge(99.5, 1)).toBeUndefined();
    expect(l.slots.active).toBe(1);
    m.succeeded(60);
    expect(m.startHedge(70, 1)).toBeUndefined();
  });

  it('a hedge cut by its timeout feeds the derived timeout; one that lost the race only the hedge delay', () => {
    const l = lane({ latency: { attemptTimeoutMs: { minSamples: 1, floorMs: 1 } } });
    const m = call(l.pipeline);
    const timedOut = m.startHedge(50, 1)!;
    expect(timedOut.attemptTimeoutMs).toBe(10_000);
    m.hedgeEnded(timedOut, 150, RESULT_FAILED, TIMED_OUT);
    expect(l.latency.timeouts?.latency.weight(150)).toBeGreaterThan(0);
    const other = call(l.pipeline);
    const lost = other.startHedge(150, 1)!;
    const before = l.latency.timeouts?.latency.weight(160);
    other.hedgeEnded(lost, 160, RESULT_NEUTRAL);
    expect(l.latency.timeouts?.latency.weight(160)).toBe(before);
    expect(l.latency.hedging?.latency.weight(160)).toBeGreaterThan(1.9);
  });
});
