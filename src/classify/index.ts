// kindly-calls/classify: decide whether a failure is worth retrying — HTTP statuses, network
// errors, idempotent methods — the same rules `downstream()` uses by default.
export { type ClassifyErrorOptions, classifyError } from './classify-error.js';
export { type ClassifyStatusOptions, classifyStatus, DEFAULT_RETRYABLE_STATUSES, isInFlightConflict } from './http-status.js';
export { IDEMPOTENT_METHODS, isIdempotentMethod } from './methods.js';
export { classifyNetworkError } from './network-error.js';
export type { Classification, Outcome } from './outcome.js';
