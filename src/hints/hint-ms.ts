/**
 * The largest wait any hint parser returns, in ms: `Number.MAX_SAFE_INTEGER` (≈ 285,616 years).
 * A callee may send `Retry-After: 99999999999999999999`; we keep its meaning ("very long")
 * instead of rejecting it, but stop where integer arithmetic stops being exact, so that
 * `now + hint` and comparisons against deadlines never lose precision or reach Infinity.
 * The retry layer then clamps the hint with `maxRetryAfterMs` / the deadline.
 */
export const MAX_HINT_MS = Number.MAX_SAFE_INTEGER;

/**
 * The one gate every hint passes through, whatever its source (header, body, an error's
 * `retryAfterMs`): a non-negative number of ms, rounded up to a whole ms (rounding down could
 * bring a client back a moment too early), and capped at {@link MAX_HINT_MS}. A value too
 * large to represent (`{"retry_after": 1e308}` × 1000 is `Infinity`) means what a huge
 * `Retry-After` header means — "very long" — and saturates the same way, so that the retry
 * layer's `maxRetryAfterMs` stops it (`hint-too-long`) instead of the hint being ignored.
 * Anything else (NaN, negative, −Infinity, non-numbers) ⇒ `undefined`.
 */
export function sanitizeHintMs(value: unknown): number | undefined {
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) return undefined;
  return Math.min(MAX_HINT_MS, Math.ceil(value));
}

/** `seconds × 1000`, sanitised (see {@link sanitizeHintMs}). */
export function secondsToHintMs(seconds: number): number | undefined {
  return sanitizeHintMs(seconds * 1000);
}

/**
 * Reads a run of ASCII digits (the whole string, `1*DIGIT`) as a non-negative integer, or
 * `undefined` for anything else. Long runs saturate instead of reaching Infinity: past 16
 * significant digits the value exceeds {@link MAX_HINT_MS} in any unit we use, so it comes
 * back as `MAX_HINT_MS + 1` (still finite) for the caller's cap to catch.
 */
export function parseDigits(text: string): number | undefined {
  const length = text.length;
  if (length === 0) return undefined;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return undefined;
  }
  // Leading zeros are allowed by 1*DIGIT; strip them before judging the magnitude.
  let start = 0;
  while (start < length - 1 && text.charCodeAt(start) === 48) start++;
  if (length - start > 16) return MAX_HINT_MS + 1;
  return Number(text.slice(start));
}

/**
 * Reads `1*DIGIT [ "." 1*DIGIT ]` (no sign, no exponent, no spaces) as a non-negative number,
 * or `undefined`. Used only for the non-standard fields that send fractions (Discord's
 * `X-RateLimit-Reset: 1470173023.123`); the standard fields are integers only.
 */
export function parseDecimal(text: string): number | undefined {
  const dot = text.indexOf('.');
  if (dot === -1) return parseDigits(text);
  const whole = parseDigits(text.slice(0, dot));
  const fractionText = text.slice(dot + 1);
  if (whole === undefined || parseDigits(fractionText) === undefined) return undefined;
  if (whole > MAX_HINT_MS) return whole;
  // Only the first 9 fraction digits matter at ms resolution for any unit we use.
  return whole + Number(`0.${fractionText.slice(0, 9)}`);
}

/** Strips optional whitespace (OWS = SP / HTAB, RFC 9110 §5.6.3) from both ends. */
export function trimOws(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isOws(text.charCodeAt(start))) start++;
  while (end > start && isOws(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 32 || c === 9;
}
