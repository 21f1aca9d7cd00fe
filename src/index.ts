// kindly's root entry: what a user of `downstream()` needs — the factory, its options and
// call options, the errors it throws, deadline scopes, events and stats. Building blocks live
// on named subpaths so that this entry stays small and loads no HTTP, simulator or adapter code:
//   kindly-calls/policies  the sans-IO policies (RetryPolicy, CircuitBreaker, Pacer, …) and defaults
//   kindly-calls/hints     reading wait hints (Retry-After, RateLimit, gRPC pushback, bodies)
//   kindly-calls/classify  classifying errors and statuses, idempotent methods
//   kindly-calls/testing   VirtualClock and SeededRandom for deterministic tests
export type { BackoffOptions, BackoffShape, Jitter } from './backoff/backoff.js';
export type { Classification, Outcome } from './classify/outcome.js';
export {
  AttemptTimeoutError,
  BulkheadRejectedError,
  CircuitOpenError,
  ConcurrencyLimitError,
  DeadlineExceededError,
  GiveUpError,
  type GiveUpReason,
  HttpStatusError,
  isAttemptTimeoutError,
  isBulkheadRejectedError,
  isCircuitOpenError,
  isConcurrencyLimitError,
  isDeadlineExceededError,
  isGiveUpError,
  isHttpStatusError,
  isKindlyError,
  KindlyError,
} from './errors/errors.js';
export { InvalidOptionsError, isInvalidOptionsError } from './options/validate.js';
export type { AdaptiveConcurrencyOptions } from './policies/adaptive-concurrency.js';
export type { BulkheadOptions } from './policies/bulkhead-slots.js';
export type { BreakerState, CircuitBreakerOptions, CircuitBreakerSnapshot } from './policies/circuit-breaker.js';
export type { DerivedTimeoutOptions } from './policies/derived-timeout.js';
export type { HedgingOptions } from './policies/hedging.js';
export type { PacerOptions } from './policies/pacer.js';
export type { RetryBudgetOptions } from './policies/retry-budget.js';
export { background, interactive, type RetryOptions } from './policies/retry-decision.js';
export type { Random } from './random/random.js';
export type { CallContext, Operation } from './runtime/attempt.js';
export { currentDeadlineScope, type DeadlineScope, runWithDeadline } from './runtime/deadline-context.js';
export {
  type CallOptions,
  DOWNSTREAM_DEFAULTS,
  Downstream,
  type DownstreamOptions,
  type DownstreamSnapshot,
  downstream,
  type Fallback,
  type FallbackInfo,
} from './runtime/downstream.js';
export { HedgeLostError } from './runtime/hedged-attempt.js';
export type { FleetStore } from './store/fleet-store.js';
export { EVENTS, type KindlyEvent, type KindlyEventType } from './telemetry/events.js';
export type { StatsSnapshot } from './telemetry/stats.js';
export type { Cancel, Clock } from './time/clock.js';
