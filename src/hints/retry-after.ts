import { MAX_HINT_MS, parseDigits, sanitizeHintMs, trimOws } from './hint-ms.js';
import { parseHttpDate } from './http-date.js';

/** The field name, lower-case as every header reader here expects. */
export const RETRY_AFTER_HEADER = 'retry-after';

/**
 * Parses a `Retry-After` value (RFC 9110 §10.2.3) into milliseconds to wait from `nowMs`.
 *
 * `Retry-After = HTTP-date / delay-seconds`, `delay-seconds = 1*DIGIT`:
 * - delay-seconds ⇒ `seconds × 1000`; leading zeros allowed; `0` means "now" (0 ms).
 *   Enormous values keep their meaning ("very long") and are capped at {@link MAX_HINT_MS}
 *   instead of overflowing; the retry layer clamps further (`maxRetryAfterMs`, deadline).
 * - HTTP-date in any of its three formats (see {@link parseHttpDate}) ⇒
 *   `max(0, date − nowMs)`: a date in the past means "now".
 * - Surrounding OWS (spaces, tabs) is ignored.
 *
 * Everything else — empty, negative (`-1`), fractional (`1.5`), signed (`+5`), units (`5s`),
 * lists (`5, 5`), garbage — is `undefined`, **never** 0: an unusable hint must fall back to
 * the backoff schedule, not to an immediate retry. Never throws.
 */
export function parseRetryAfter(value: string, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = trimOws(value);
  const seconds = parseDigits(text);
  if (seconds !== undefined) return Math.min(MAX_HINT_MS, seconds * 1000);
  if (!Number.isFinite(nowMs)) return undefined;
  const date = parseHttpDate(text, nowMs);
  if (date === undefined) return undefined;
  return sanitizeHintMs(Math.max(0, date - nowMs));
}
