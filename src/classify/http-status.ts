import type { Classification } from './outcome.js';

/**
 * Statuses retried by default: 408 Request Timeout, 429 Too Many Requests,
 * 500 Internal Server Error, 502 Bad Gateway, 503 Service Unavailable, 504 Gateway Timeout.
 * Every other 4xx, and 501/505, is not retried.
 * @default [408, 429, 500, 502, 503, 504]
 */
export const DEFAULT_RETRYABLE_STATUSES: readonly number[] = Object.freeze([408, 429, 500, 502, 503, 504]);

export interface ClassifyStatusOptions {
  /** Replaces (does not extend) the retryable set. @default DEFAULT_RETRYABLE_STATUSES */
  retryableStatuses?: ReadonlySet<number> | readonly number[];
}

const DEFAULT_SET: ReadonlySet<number> = new Set(DEFAULT_RETRYABLE_STATUSES);

/**
 * kindly's reading of an HTTP status, or `undefined` for a status that is not a failure
 * (< 400) or not a status at all (not an integer in 100–999).
 *
 * | status                  | outcome   | retryable (default) | flags           |
 * |-------------------------|-----------|---------------------|-----------------|
 * | 429, 503                | `failed`  | yes                 | `throttled`     |
 * | 408                     | `failed`  | yes                 |                 |
 * | 500, 502, 504           | `unknown` | yes                 |                 |
 * | 501, 505                | `failed`  | no                  |                 |
 * | other 5xx (≥ 500)       | `unknown` | no                  |                 |
 * | other 4xx               | `failed`  | no                  |                 |
 *
 * Outcome: a 4xx is an explicit refusal, so the request was not carried out;
 * 429 and 503 are rejections for load ("come back later"), hence also the `throttled`
 * pacing signal whatever the retryable set says. 408 means the server gave up waiting for
 * the request, so it did not process it. A 5xx may come after the work was done (a crash
 * while answering, a gateway timing out on a slow backend), so it is `unknown` — except 501
 * (Not Implemented: an unknown method) and 505 (HTTP Version Not Supported), which by definition refuse
 * the request before doing anything with it.
 *
 * `retryable` is membership in `options.retryableStatuses` (default
 * {@link DEFAULT_RETRYABLE_STATUSES}). 409 is not retryable here; the fetch layer retries a
 * 409 only for a request carrying an idempotency key ({@link isInFlightConflict}).
 */
export function classifyStatus(status: number, options?: ClassifyStatusOptions): Classification | undefined {
  if (!Number.isInteger(status) || status < 400 || status > 999) return undefined;
  const retryable = isRetryableStatus(status, options?.retryableStatuses);
  const throttled = status === 429 || status === 503;
  const failed = status < 500 || throttled || status === 501 || status === 505;
  const classification: Classification = { outcome: failed ? 'failed' : 'unknown', retryable, status };
  if (throttled) classification.throttled = true;
  return classification;
}

/**
 * Does this 409 mean "the original request with this idempotency key is still in flight"
 * (draft-ietf-httpapi-idempotency-key-header §2.6)? Only then is a 409 worth retrying after
 * backoff; without a key a 409 is an ordinary conflict.
 */
export function isInFlightConflict(status: number, hasIdempotencyKey: boolean): boolean {
  return status === 409 && hasIdempotencyKey === true;
}

function isRetryableStatus(status: number, statuses: ReadonlySet<number> | readonly number[] | undefined): boolean {
  if (statuses === undefined) return DEFAULT_SET.has(status);
  return Array.isArray(statuses) ? statuses.includes(status) : (statuses as ReadonlySet<number>).has(status);
}
