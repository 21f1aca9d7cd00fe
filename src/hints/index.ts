// kindly-calls/hints: read what a callee says about when to come back — Retry-After, RateLimit
// fields, gRPC pushback, "do not retry" headers and wait hints in error bodies. Every value is
// untrusted: parsers return undefined for anything malformed and clamp what they accept.
export {
  type BodyHintExtractor,
  DEFAULT_BODY_HINT_EXTRACTORS,
  extractBodyHint,
  googleRetryInfoHint,
  jsonFieldHint,
  MAX_BODY_HINT_CHARS,
  messageHint,
} from './body-hints.js';
export { ENVOY_OVERLOADED_HEADER, RETRY_EXHAUSTED_HEADER, readDontRetry } from './dont-retry.js';
export { type HeaderRecord, type HeaderRecordValue, type HeaderSource, type HeadersLike, headerValue } from './headers.js';
export { MAX_HINT_MS } from './hint-ms.js';
export { parseHttpDate } from './http-date.js';
export {
  EPOCH_MS_THRESHOLD,
  EPOCH_SECONDS_THRESHOLD,
  GRPC_RETRY_PUSHBACK_HEADER,
  isGrpcPushbackStop,
  isRateLimitExhausted,
  RATELIMIT_HEADER,
  RATELIMIT_POLICY_HEADER,
  RATELIMIT_REMAINING_HEADER,
  RATELIMIT_RESET_HEADER,
  readGrpcRetryPushback,
  readRateLimit,
  readRateLimitRemaining,
  readRateLimitReset,
  readXRateLimitReset,
  X_RATELIMIT_REMAINING_HEADER,
  X_RATELIMIT_RESET_HEADER,
} from './rate-limit-fields.js';
export { parseRetryAfter, RETRY_AFTER_HEADER } from './retry-after.js';
export { readThrottleSignal, readWaitHint, type WaitHint, type WaitHintOptions, type WaitHintSource } from './wait-hint.js';
