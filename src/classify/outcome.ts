/**
 * What happened to one attempt:
 * - `ok`: it succeeded;
 * - `failed`: the callee definitely did not process it (refused, rejected locally, 429/503);
 * - `unknown`: the callee may have processed it (timeout after sending, reset, 500/502/504).
 * A `failed` write is always safe to retry; an `unknown` one only when idempotent.
 */
export type Outcome = 'ok' | 'failed' | 'unknown';

/** kindly's reading of one failed attempt. */
export interface Classification {
  outcome: 'failed' | 'unknown';
  /** Could trying again help? */
  retryable: boolean;
  /** The callee asked not to be retried (`x-retry-exhausted`, `x-envoy-overloaded`, …). */
  dontRetry?: boolean;
  /** Milliseconds the callee asked us to wait, when it said so. */
  hintMs?: number;
  /** Where the hint came from, e.g. `retry-after`; for events and debugging. */
  hintSource?: string;
  /** The attempt timed out (counts towards the timeout ratio and the breaker). */
  timeout?: boolean;
  /** The callee rejected us for load (429/503 or similar): a pacing signal. */
  throttled?: boolean;
  /** HTTP status when there was one. */
  status?: number;
  /** The error code that decided the classification (`ECONNREFUSED`, `ERR_TLS_CERT_ALTNAME_INVALID`, …). */
  code?: string;
}
