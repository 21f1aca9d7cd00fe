// kindly's public surface. Everything a user imports comes from here (or a subpath export).
export { BACKOFF_DEFAULTS, Backoff, type BackoffOptions, type BackoffShape, type Jitter } from './backoff/backoff.js';
export * from './classify/index.js';
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
export * from './hints/index.js';
export { InvalidOptionsError, isInvalidOptionsError } from './options/validate.js';
export { BULKHEAD_DEFAULTS, Bulkhead, type BulkheadOptions } from './policies/bulkhead.js';
export * from './policies/index.js';
export { type Random, SeededRandom, systemRandom } from './random/random.js';
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
export { EVENTS, type KindlyEvent, type KindlyEventType } from './telemetry/events.js';
export type { StatsSnapshot } from './telemetry/stats.js';
export type { Cancel, Clock } from './time/clock.js';
export { SystemClock, systemClock } from './time/system-clock.js';
export { VirtualClock } from './time/virtual-clock.js';
