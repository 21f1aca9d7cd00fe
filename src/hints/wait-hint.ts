import { type HeaderSource, headerValue } from './headers.js';
import {
  GRPC_RETRY_PUSHBACK_HEADER,
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
import { parseRetryAfter, RETRY_AFTER_HEADER } from './retry-after.js';

/** A wait the callee asked for: at least `ms` milliseconds, and which field said so. */
export interface WaitHint {
  readonly ms: number;
  /**
   * The field it came from: `retry-after`, `ratelimit`, `ratelimit-policy` (an exhausted
   * `RateLimit` item whose reset came from the policy's window), `ratelimit-reset`,
   * `x-ratelimit-reset` or `grpc-retry-pushback-ms`.
   */
  readonly source: WaitHintSource;
}

export type WaitHintSource =
  | 'retry-after'
  | 'ratelimit'
  | 'ratelimit-policy'
  | 'ratelimit-reset'
  | 'x-ratelimit-reset'
  | 'grpc-retry-pushback-ms';

export interface WaitHintOptions {
  /**
   * The response was a rejection for load (429 or 503). Makes a lone reset field
   * (`RateLimit-Reset`, `X-RateLimit-Reset` without a remaining count) count as a wait.
   * @default false
   */
  throttled?: boolean;
}

/**
 * The callee's wait hint from response headers, in ms from `nowMs`, or `undefined`.
 *
 * Precedence — the first field that yields a wait wins; a malformed field is
 * skipped and the next one is tried:
 *
 * 1. `Retry-After` — delay-seconds or HTTP-date ({@link parseRetryAfter});
 * 2. `RateLimit` (+ `RateLimit-Policy` for a missing reset) — a wait only for an
 *    exhausted quota, `r=0` ({@link readRateLimit});
 * 3. `RateLimit-Reset`, then
 * 4. `X-RateLimit-Reset` — seconds, epoch seconds or epoch ms, detected by size.
 *    A reset field is the time the quota refills, which is a wait only when the quota is
 *    what stopped us. The rule: the reset is a wait when its own family's remaining count
 *    (`RateLimit-Remaining` / `X-RateLimit-Remaining`) is `0`; when that count is present
 *    and above 0 it is not (the quota did not cause this failure); when the count is absent
 *    or malformed it is a wait only if `options.throttled` (429/503) is set.
 * 5. `X-RateLimit-Remaining: 0` — alone it gives no duration, only a throttle signal
 *    ({@link readThrottleSignal}); its place here is as the gate of step 4.
 * 6. `grpc-retry-pushback-ms` — non-negative integer ms (a negative one is a "don't retry",
 *    see `readDontRetry`, never a wait).
 *
 * The result is a minimum: the retry layer waits max(hint, backoff) and clamps it to the
 * deadline and `maxRetryAfterMs`. Never throws; `ms` is always finite, whole and ≥ 0.
 */
export function readWaitHint(headers: HeaderSource, nowMs: number, options?: WaitHintOptions): WaitHint | undefined {
  const retryAfter = headerValue(headers, RETRY_AFTER_HEADER);
  if (retryAfter !== undefined) {
    const ms = parseRetryAfter(retryAfter, nowMs);
    if (ms !== undefined) return { ms, source: 'retry-after' };
  }

  const rateLimit = headerValue(headers, RATELIMIT_HEADER);
  if (rateLimit !== undefined) {
    const ms = readRateLimit(rateLimit);
    if (ms !== undefined) return { ms, source: 'ratelimit' };
    const policy = headerValue(headers, RATELIMIT_POLICY_HEADER);
    const fromPolicy = policy === undefined ? undefined : readRateLimit(rateLimit, policy);
    if (fromPolicy !== undefined) return { ms: fromPolicy, source: 'ratelimit-policy' };
  }

  const throttled = options?.throttled === true;
  const reset = headerValue(headers, RATELIMIT_RESET_HEADER);
  if (reset !== undefined && resetIsWait(headers, RATELIMIT_REMAINING_HEADER, throttled)) {
    const ms = readRateLimitReset(reset, nowMs);
    if (ms !== undefined) return { ms, source: 'ratelimit-reset' };
  }

  const xReset = headerValue(headers, X_RATELIMIT_RESET_HEADER);
  if (xReset !== undefined && resetIsWait(headers, X_RATELIMIT_REMAINING_HEADER, throttled)) {
    const ms = readXRateLimitReset(xReset, nowMs);
    if (ms !== undefined) return { ms, source: 'x-ratelimit-reset' };
  }

  const pushback = headerValue(headers, GRPC_RETRY_PUSHBACK_HEADER);
  if (pushback !== undefined) {
    const ms = readGrpcRetryPushback(pushback);
    if (ms !== undefined) return { ms, source: 'grpc-retry-pushback-ms' };
  }
  return undefined;
}

/**
 * Do the headers say a rate-limit quota is used up — `RateLimit` with `r=0` (or
 * `remaining=0`), `RateLimit-Remaining: 0` or `X-RateLimit-Remaining: 0`? A pacing signal
 * even on responses that carry no duration.
 */
export function readThrottleSignal(headers: HeaderSource): boolean {
  const rateLimit = headerValue(headers, RATELIMIT_HEADER);
  if (rateLimit !== undefined && isRateLimitExhausted(rateLimit)) return true;
  return remainingOf(headers, RATELIMIT_REMAINING_HEADER) === 0 || remainingOf(headers, X_RATELIMIT_REMAINING_HEADER) === 0;
}

function resetIsWait(headers: HeaderSource, remainingHeader: string, throttled: boolean): boolean {
  const remaining = remainingOf(headers, remainingHeader);
  return remaining === undefined ? throttled : remaining === 0;
}

function remainingOf(headers: HeaderSource, name: string): number | undefined {
  const value = headerValue(headers, name);
  return value === undefined ? undefined : readRateLimitRemaining(value);
}
