export { type ClassifyErrorOptions, classifyError } from './classify-error.js';
export { type ClassifyStatusOptions, classifyStatus, DEFAULT_RETRYABLE_STATUSES, isInFlightConflict } from './http-status.js';
export { IDEMPOTENT_METHODS, isIdempotentMethod } from './methods.js';
export { classifyNetworkError } from './network-error.js';
export type { Classification, Outcome } from './outcome.js';
