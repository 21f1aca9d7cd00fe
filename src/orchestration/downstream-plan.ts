/**
 * How a downstream's options become its call plan and its pipeline — written once, used by
 * both drivers: `Downstream` (src/runtime) and the simulator's `SimDownstream` (src/sim). Pure:
 * policies are built here or handed in; nothing here reads a clock or does I/O.
 */
import { enabledOptions, type OptionsValidator } from '../options/validate.js';
import { CircuitBreaker, type CircuitBreakerOptions } from '../policies/circuit-breaker.js';
import { DERIVED_TIMEOUT_DEFAULTS, type DerivedTimeoutOptions } from '../policies/derived-timeout.js';
import type { LatencyPolicies } from '../policies/latency-policies.js';
import type { Pacer, PacerOptions } from '../policies/pacer.js';
import { KeyedRetryBudgets, type RetryBudgetOptions } from '../policies/retry-budget.js';
import { type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import type { Random } from '../random/random.js';
import { built, checkOptional, type LimitUse, type OptionalPolicies, type PacingUse } from './optional-policies.js';
import { Pipeline } from './pipeline.js';
import type { Stage } from './stage.js';
import { BreakerStage } from './stages/breaker-stage.js';
import { type BudgetLedger, BudgetStage } from './stages/budget-stage.js';
import { BulkheadStage, type SlotLimiter } from './stages/bulkhead-stage.js';

/** The defaults of a downstream's options, declared once (a test pins them). */
export const DOWNSTREAM_DEFAULTS = {
  attemptTimeoutMs: 10_000,
  idempotent: true,
  maxKeys: 1_000,
} as const;

const NO_RETRY = new RetryPolicy({ maxAttempts: 1 });

/**
 * The retry policy of the `retry` option: a single attempt with `false`; unbounded attempts
 * are also bounded by the total timeout. Throws the policy's `InvalidOptionsError`.
 */
export function retryPolicyOf(retry: RetryOptions | false | undefined, totalTimeoutMs: number | undefined): RetryPolicy {
  if (retry === false) return NO_RETRY;
  const options = retry ?? {};
  const bounded =
    options.maxAttempts === Number.POSITIVE_INFINITY && options.maxElapsedMs === undefined && totalTimeoutMs !== undefined
      ? { ...options, maxElapsedMs: totalTimeoutMs }
      : options;
  return new RetryPolicy(bounded);
}

/** The options both drivers build the same policies from. */
export interface CorePolicyOptions {
  retry?: RetryOptions | false;
  totalTimeoutMs?: number;
  budget?: RetryBudgetOptions | false;
  maxKeys?: number;
  breaker?: CircuitBreakerOptions | boolean;
  pacing?: PacerOptions | boolean;
}

/** The retry policy, the keyed budgets and the enabled breaker and pacing options, checked once. */
export interface CorePolicies {
  retry: RetryPolicy | undefined;
  budgets: KeyedRetryBudgets | undefined;
  maxKeys: number;
  breaker: CircuitBreakerOptions | undefined;
  pacing: PacerOptions | undefined;
}

/**
 * Checks and builds what both drivers have: the retry policy, the per-key budgets, and the
 * breaker's and pacer's options (a policy is built from each to check them). Problems are
 * recorded on `v`, labelled by option, so the caller's error lists every one at once.
 */
export function corePolicies(
  v: OptionsValidator,
  options: CorePolicyOptions,
  random: Random,
  optional: OptionalPolicies,
): CorePolicies {
  const retry = v.nested('retry', () => retryPolicyOf(options.retry, options.totalTimeoutMs));
  v.integer('maxKeys', options.maxKeys, 1);
  const maxKeys = options.maxKeys ?? DOWNSTREAM_DEFAULTS.maxKeys;
  const budgets =
    options.budget === false
      ? undefined
      : v.nested('budget', () => new KeyedRetryBudgets({ budget: options.budget || {}, maxKeys }));
  const breaker = enabledOptions(options.breaker);
  const pacing = enabledOptions(options.pacing);
  if (breaker !== undefined) v.nested('breaker', () => new CircuitBreaker(breaker, random));
  if (pacing !== undefined) checkOptional(v, optional, 'pacing', 'pacing', (kit) => kit.pacer(pacing));
  return { retry, budgets, maxKeys, breaker, pacing };
}

/**
 * The downstream's fixed attempt timeout: none (`Infinity`) with `false`; a derived timeout's
 * ceiling (its timeout until latency is known); else the number, or the default.
 */
export function attemptTimeoutOf(option: number | false | DerivedTimeoutOptions | undefined): number {
  if (option === false) return Number.POSITIVE_INFINITY;
  if (typeof option === 'object' && option !== null) return option.ceilingMs ?? DERIVED_TIMEOUT_DEFAULTS.ceilingMs;
  return option ?? DOWNSTREAM_DEFAULTS.attemptTimeoutMs;
}

/**
 * The budget stage of the `budget` option over `ledger` (none without a ledger): every call
 * deposits when it starts, every retry withdraws, and with `shrinkOnErrors` every attempt's
 * outcome is recorded.
 */
export function budgetStageOf(
  ledger: BudgetLedger | undefined,
  budget: RetryBudgetOptions | false | undefined,
  onRefused?: (key: string, nowMs: number) => void,
): BudgetStage | undefined {
  if (ledger === undefined) return undefined;
  return new BudgetStage(ledger, {
    recordsOutcomes: budget !== false && Boolean(budget?.shrinkOnErrors),
    onRefused,
  });
}

/** What one lane's pipeline is made of; absent parts are not configured. */
export interface LaneParts {
  /** The downstream's budget stage (shared by every lane). */
  budget?: Stage | undefined;
  breaker?: CircuitBreaker | undefined;
  pacer?: Pacer | undefined;
  /** How the pacer is used: first attempts paced too, told of each wait, where slots are booked. */
  pacing?: PacingUse;
  bulkhead?: SlotLimiter | undefined;
  /** The adaptive concurrency limit, derived attempt timeout and hedging policy (any of them), inside the bulkhead. */
  latency?: LatencyPolicies | undefined;
  /** How the latency stage reports a refusal and where an attempt waits for a slot of the limit. */
  limit?: LimitUse;
  /** What builds the pacing, hedging and latency stages (those parts need it). */
  optional: OptionalPolicies;
  /** The retry budgets hedges draw on (the budget stage's ledger). */
  hedgeBudget?: BudgetLedger | undefined;
}

/**
 * The pipeline in its one fixed order: budget → hedging → breaker → pacing → bulkhead →
 * latency (adaptive limit, derived timeout). Hedging takes no part in an attempt's admission;
 * it decides when to hedge and, asked innermost first, after the slots, grants each hedge.
 */
export function lanePipeline(parts: LaneParts): Pipeline {
  const stages: Stage[] = [];
  if (parts.budget !== undefined) stages.push(parts.budget);
  const { pacing, latency } = parts.optional;
  const hedging = parts.latency?.hedging;
  if (hedging !== undefined) stages.push(built(latency, 'hedging').hedgingStage(hedging, parts.hedgeBudget));
  if (parts.breaker !== undefined) stages.push(new BreakerStage(parts.breaker));
  if (parts.pacer !== undefined) stages.push(built(pacing, 'pacing').stage(parts.pacer, parts.pacing));
  if (parts.bulkhead !== undefined) stages.push(new BulkheadStage(parts.bulkhead));
  if (parts.latency !== undefined) stages.push(built(latency, 'latency policies').stage(parts.latency, parts.limit));
  return stages.length === 0 ? Pipeline.EMPTY : new Pipeline(stages);
}
