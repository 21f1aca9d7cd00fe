// kindly-calls/policies: the sans-IO building blocks `downstream()` is made of — retry decisions,
// backoff, budgets, breaker, bulkhead, pacing, adaptive concurrency, hedging, latency quantiles —
// and their defaults, for users who compose their own call loop or test a policy alone.

export { BACKOFF_DEFAULTS, Backoff, type BackoffOptions, type BackoffShape, type Jitter } from '../backoff/backoff.js';
export {
  ADAPTIVE_CONCURRENCY_DEFAULTS,
  AdaptiveConcurrencyLimit,
  type AdaptiveConcurrencyOptions,
  LIMIT_REJECTED,
  type LimitSample,
} from './adaptive-concurrency.js';
export { BULKHEAD_DEFAULTS, type BulkheadOptions, type BulkheadRefusal, BulkheadSlots } from './bulkhead-slots.js';
export {
  BREAKER_ALLOWED,
  BREAKER_REJECTED,
  type BreakerMode,
  type BreakerState,
  CIRCUIT_BREAKER_DEFAULTS,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitBreakerSnapshot,
  DEFAULT_BREAKER_FAILURE_PREDICATE,
} from './circuit-breaker.js';
export { DeliveryRate } from './delivery-rate.js';
export {
  DERIVED_TIMEOUT_DEFAULTS,
  DerivedTimeout,
  type DerivedTimeoutOptions,
  TIMED_OUT_SAMPLE_FACTOR,
} from './derived-timeout.js';
export { HEDGING_DEFAULTS, type HedgeInput, type HedgeRefusal, type HedgingOptions, HedgingPolicy } from './hedging.js';
export { LATENCY_QUANTILES_DEFAULTS, LatencyQuantiles, type LatencyQuantilesOptions } from './latency-quantiles.js';
export { PACER_DEFAULTS, Pacer, type PacerOptions, type PacerSignal } from './pacer.js';
export {
  KEYED_RETRY_BUDGETS_DEFAULTS,
  KeyedRetryBudgets,
  type KeyedRetryBudgetsOptions,
  RETRY_BUDGET_DEFAULTS,
  RetryBudget,
  type RetryBudgetOptions,
  SHRINK_ON_ERRORS_DEFAULTS,
  type ShrinkOnErrorsOptions,
} from './retry-budget.js';
export {
  background,
  interactive,
  RETRY_DEFAULTS,
  type RetryDecision,
  type RetryInput,
  type RetryOptions,
  RetryPolicy,
} from './retry-decision.js';
