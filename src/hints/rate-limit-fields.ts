import { MAX_HINT_MS, parseDecimal, parseDigits, sanitizeHintMs, secondsToHintMs, trimOws } from './hint-ms.js';
import { integerOf, type Member, nameOf, parseDictionary, parseList } from './structured-field.js';

/** Field names, lower-case as every header reader here expects. */
export const RATELIMIT_HEADER = 'ratelimit';
export const RATELIMIT_POLICY_HEADER = 'ratelimit-policy';
export const RATELIMIT_RESET_HEADER = 'ratelimit-reset';
export const RATELIMIT_REMAINING_HEADER = 'ratelimit-remaining';
export const X_RATELIMIT_RESET_HEADER = 'x-ratelimit-reset';
export const X_RATELIMIT_REMAINING_HEADER = 'x-ratelimit-remaining';
export const GRPC_RETRY_PUSHBACK_HEADER = 'grpc-retry-pushback-ms';

/**
 * A reset value at or above this is an absolute time in epoch **seconds**, not a delay:
 * 10⁹ s as a delay would be 31.7 years, while as a date it is 2001-09-09. GitHub and Twitter
 * send epoch seconds in `X-RateLimit-Reset`; GitLab does in `RateLimit-Reset`.
 */
export const EPOCH_SECONDS_THRESHOLD = 1e9;

/** A reset value at or above this is an absolute time in epoch **milliseconds** (10¹² ms = 2001-09-09). */
export const EPOCH_MS_THRESHOLD = 1e12;

/**
 * Reads the IETF `RateLimit` field (draft-ietf-httpapi-ratelimit-headers) into ms to wait,
 * when it says a quota is exhausted. Two shapes are understood:
 *
 * - current drafts (-08 and later), a List of quota policies:
 *   `RateLimit: "default";r=0;t=10` — `r` remaining quota units, `t` seconds until the quota
 *   resets. Every item with `r=0` blocks us, so the wait is the largest `t` among them.
 *   An exhausted item without `t` borrows the window `w` of the same-named policy in
 *   `RateLimit-Policy` (`"default";q=100;w=10`) when one is given — the longest the quota can
 *   take to refill — and otherwise says nothing.
 * - earlier drafts (-03 to -07), a Dictionary: `RateLimit: limit=100, remaining=0, reset=10`;
 *   with `remaining=0`, `reset` seconds is the wait.
 *
 * A quota with remaining units is not a wait (`undefined`); neither is a field that is not a
 * valid Structured Field (RFC 9651 rejects such a field whole), nor a negative `t`/`reset`.
 */
export function readRateLimit(rateLimit: string, rateLimitPolicy?: string): number | undefined {
  const members = readRateLimitMembers(rateLimit);
  if (members === undefined) return undefined;
  if (members.shape === 'dictionary') {
    const remaining = integerOf(find(members.items, 'remaining'));
    const reset = integerOf(find(members.items, 'reset'));
    if (remaining !== 0 || reset === undefined || reset < 0) return undefined;
    return secondsToHintMs(reset);
  }
  let windows: Map<string, number | undefined> | undefined;
  let wait: number | undefined;
  for (const item of members.items) {
    if (integerOf(item.params.get('r')) !== 0) continue;
    let seconds = integerOf(item.params.get('t'));
    if (seconds === undefined && rateLimitPolicy !== undefined) {
      windows ??= policyWindows(rateLimitPolicy);
      const name = nameOf(item.value);
      seconds = name === undefined ? undefined : windows.get(name);
    }
    if (seconds === undefined || seconds < 0) continue;
    wait = Math.max(wait ?? 0, seconds);
  }
  return wait === undefined ? undefined : secondsToHintMs(wait);
}

/**
 * `RateLimit-Policy`'s windows `w` by policy name, read once: the first policy of a name
 * counts, as a search from the front would find it. (Searched once per exhausted item
 * instead, a field of n unmatched names took n² steps: 16,000 of them, 2.9 s.)
 */
function policyWindows(rateLimitPolicy: string): Map<string, number | undefined> {
  const windows = new Map<string, number | undefined>();
  for (const policy of parseList(rateLimitPolicy) ?? []) {
    const name = nameOf(policy.value);
    if (name !== undefined && !windows.has(name)) windows.set(name, integerOf(policy.params.get('w')));
  }
  return windows;
}

/**
 * Does the `RateLimit` field say a quota is used up (`r=0`, or `remaining=0` in the older
 * shape)? A throttle signal even when it gives no reset time.
 */
export function isRateLimitExhausted(rateLimit: string): boolean {
  const members = readRateLimitMembers(rateLimit);
  if (members === undefined) return false;
  if (members.shape === 'dictionary') return integerOf(find(members.items, 'remaining')) === 0;
  return members.items.some((item) => integerOf(item.params.get('r')) === 0);
}

/**
 * Reads `RateLimit-Reset` (earlier drafts: delay-seconds, a non-negative integer) into ms.
 * Some servers (GitLab) send an epoch time here instead, so the same detection as
 * {@link readXRateLimitReset} applies: ≥ {@link EPOCH_MS_THRESHOLD} is epoch ms,
 * ≥ {@link EPOCH_SECONDS_THRESHOLD} epoch seconds, anything smaller a delay in seconds.
 * A reset time already past means "now" (0). Fractions, signs and garbage ⇒ `undefined`.
 *
 * This is the quota's reset time, which is a wait only when the quota is exhausted:
 * {@link readWaitHint} decides that; this function only reads the number.
 */
export function readRateLimitReset(value: string, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const number = parseDigits(trimOws(value));
  return number === undefined ? undefined : resetToMs(number, nowMs);
}

/**
 * Reads the de-facto `X-RateLimit-Reset` into ms: a delay in seconds, or an epoch time in
 * seconds or milliseconds, told apart by size (see {@link readRateLimitReset}). Unlike the
 * standard fields, a decimal fraction is accepted (Discord sends `1470173023.123`); the
 * result is rounded up to a whole ms. A reset time already past means "now" (0).
 */
export function readXRateLimitReset(value: string, nowMs: number): number | undefined {
  if (typeof value !== 'string') return undefined;
  const number = parseDecimal(trimOws(value));
  return number === undefined ? undefined : resetToMs(number, nowMs);
}

/**
 * Reads `X-RateLimit-Remaining` or `RateLimit-Remaining`: a non-negative integer (huge values
 * saturate at {@link MAX_HINT_MS}), else `undefined`. `0` means the quota is used up — a
 * throttle signal; with a reset field it turns that field into a wait.
 */
export function readRateLimitRemaining(value: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  const number = parseDigits(trimOws(value));
  return number === undefined ? undefined : Math.min(number, MAX_HINT_MS);
}

/**
 * Reads gRPC's `grpc-retry-pushback-ms` (gRFC A6): a non-negative decimal integer is the
 * delay in ms before the next attempt. A negative value means "do not retry" — see
 * {@link isGrpcPushbackStop}; it is not a wait, so it reads as `undefined` here.
 */
export function readGrpcRetryPushback(value: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = trimOws(value);
  const number = parseDigits(text);
  if (number !== undefined) return sanitizeHintMs(number);
  // "-0" is the integer 0 as gRPC's own parsers read it: a zero delay, not a stop.
  return text.charCodeAt(0) === 45 && parseDigits(text.slice(1)) === 0 ? 0 : undefined;
}

/**
 * Is `grpc-retry-pushback-ms` negative (`-` then digits) — the server's "do not retry"?
 * gRFC A6 also treats an unparseable value as "do not retry"; kindly does not (a
 * malformed fields are ignored), so that a garbled header cannot switch retrying off.
 */
export function isGrpcPushbackStop(value: string): boolean {
  if (typeof value !== 'string') return false;
  const text = trimOws(value);
  if (text.charCodeAt(0) !== 45 /* - */) return false;
  const magnitude = parseDigits(text.slice(1));
  return magnitude !== undefined && magnitude > 0;
}

/**
 * reset → ms from now:
 *   n ≥ 10¹² ⇒ max(0, n − now)            (epoch ms)
 *   n ≥ 10⁹  ⇒ max(0, n × 1000 − now)     (epoch s)
 *   else     ⇒ n × 1000                   (delay s)
 */
function resetToMs(n: number, nowMs: number): number | undefined {
  if (n < EPOCH_SECONDS_THRESHOLD) return secondsToHintMs(n);
  if (!Number.isFinite(nowMs)) return undefined;
  const at = n >= EPOCH_MS_THRESHOLD ? n : n * 1000;
  return sanitizeHintMs(Math.max(0, at - nowMs));
}

type RateLimitMembers = { shape: 'list' | 'dictionary'; items: Member[] };

/**
 * The current shape is a List whose items carry an `r` parameter; the older one a Dictionary
 * with a `remaining` member. A token-named policy (`default;r=0;t=10`) also parses as a
 * Dictionary, so the List reading is tried first.
 */
function readRateLimitMembers(rateLimit: string): RateLimitMembers | undefined {
  if (typeof rateLimit !== 'string') return undefined;
  const list = parseList(rateLimit);
  if (list?.some((item) => item.params.has('r'))) return { shape: 'list', items: list };
  const dictionary = parseDictionary(rateLimit);
  if (dictionary !== undefined && find(dictionary, 'remaining') !== undefined) {
    return { shape: 'dictionary', items: dictionary };
  }
  return undefined;
}

/** The last member with this key (RFC 9651: a repeated dictionary key overwrites). */
function find(members: readonly Member[], key: string) {
  for (let i = members.length - 1; i >= 0; i--) {
    const member = members[i];
    if (member !== undefined && member.key === key) return member.value;
  }
  return undefined;
}
