import { parseDecimal, sanitizeHintMs, trimOws } from './hint-ms.js';

/**
 * Reads a wait hint (ms) out of an error response body, or returns `undefined`.
 *
 * `body` is what {@link extractBodyHint} hands over: the parsed JSON value when the body was
 * JSON text, otherwise the text itself, or whatever object the HTTP client already parsed
 * (axios' `response.data`). An extractor may throw or return garbage: `extractBodyHint`
 * catches the throw and discards any result that is not a number ≥ 0; a huge one (even
 * `Infinity`) is capped at `MAX_HINT_MS`, exactly as a huge `Retry-After` header is.
 *
 * To add one for an API that writes `{ "cooldown": { "seconds": 30 } }`:
 * ```ts
 * const cooldown: BodyHintExtractor = (body) => {
 *   const seconds = (body as { cooldown?: { seconds?: unknown } } | null)?.cooldown?.seconds;
 *   return typeof seconds === 'number' ? seconds * 1000 : undefined;
 * };
 * extractBodyHint(body, now, [cooldown, ...DEFAULT_BODY_HINT_EXTRACTORS]);
 * ```
 */
export type BodyHintExtractor = (body: unknown, nowMs: number) => number | undefined;

/**
 * Only this much of a body is looked at (64 KiB): text beyond it is not parsed as JSON nor
 * scanned, so a huge error page costs bounded time. Error bodies that carry hints are small.
 */
export const MAX_BODY_HINT_CHARS = 64 * 1024;

/** Fields read as seconds, in this order, at the top level and then under `error`. */
const SECONDS_FIELDS = ['retry_after', 'retryAfter'] as const;
/** Fields read as milliseconds; tried before the seconds fields, being more precise. */
const MS_FIELDS = ['retry_after_ms', 'retryAfterMs'] as const;

/**
 * JSON fields: `retry_after_ms` / `retryAfterMs` (ms), then `retry_after` / `retryAfter`
 * (seconds, fractions allowed: Discord sends `{"retry_after": 64.57}`), looked up on the body
 * and then one level down under `error` (`{ "error": { "retry_after": 30 } }`).
 * Values may be numbers or numeric strings (`"30"`, `"1.5"`); negatives are ignored.
 */
export const jsonFieldHint: BodyHintExtractor = (body) => {
  for (const holder of [body, field(body, 'error')]) {
    if (!isRecord(holder)) continue;
    for (const key of MS_FIELDS) {
      const ms = numberOf(field(holder, key));
      if (ms !== undefined) return ms;
    }
    for (const key of SECONDS_FIELDS) {
      const seconds = numberOf(field(holder, key));
      if (seconds !== undefined) return seconds * 1000;
    }
  }
  return undefined;
};

/**
 * Google APIs' `google.rpc.RetryInfo` error detail:
 * `{ "error": { "details": [ { "@type": "type.googleapis.com/google.rpc.RetryInfo",
 * "retryDelay": "30s" } ] } }` (also with `details` at the top level, as gRPC-gateway writes).
 * `retryDelay` is a protobuf Duration: `"1.5s"` in JSON, or `{ seconds, nanos }`.
 */
export const googleRetryInfoHint: BodyHintExtractor = (body) => {
  for (const holder of [field(body, 'error'), body]) {
    const details = field(holder, 'details');
    if (!Array.isArray(details)) continue;
    const count = Math.min(details.length, 16);
    for (let i = 0; i < count; i++) {
      const detail: unknown = details[i];
      const type = field(detail, '@type');
      if (typeof type !== 'string' || !type.endsWith('google.rpc.RetryInfo')) continue;
      const ms = protobufDurationMs(field(detail, 'retryDelay'));
      if (ms !== undefined) return ms;
    }
  }
  return undefined;
};

/** Text fields a message-style hint is looked for in, when the body is an object. */
const MESSAGE_FIELDS = ['message', 'error', 'detail', 'description', 'error_description'] as const;

/**
 * Prose: "blocked for 30 seconds", "try again in 2 minutes", "retry after 500ms",
 * "please wait 10 s", "Please try again in 1m30s". A phrase (`try again`, `retry`, `wait`,
 * `blocked`, `come back`), optionally `in` / `after` / `for`, then a duration: a number and a
 * unit (ms, s, m, h, d in short or long form), several pairs allowed when written together
 * (`1h2m3.5s`). A number without a unit ("retry after 30") is ambiguous and ignored.
 * Reads the body text, or the fields `message`, `error`, `error.message`, `detail`,
 * `description`, `error_description` of an object body.
 */
export const messageHint: BodyHintExtractor = (body) => {
  if (typeof body === 'string') return durationInText(body);
  if (!isRecord(body)) return undefined;
  for (const key of MESSAGE_FIELDS) {
    const value = field(body, key);
    const text = typeof value === 'string' ? value : key === 'error' ? field(value, 'message') : undefined;
    if (typeof text !== 'string') continue;
    const ms = durationInText(text);
    if (ms !== undefined) return ms;
  }
  return undefined;
};

/** The built-in extractors, tried in this order; the first usable answer wins. */
export const DEFAULT_BODY_HINT_EXTRACTORS: readonly BodyHintExtractor[] = Object.freeze([
  jsonFieldHint,
  googleRetryInfoHint,
  messageHint,
]);

/**
 * The first usable wait hint (ms) the extractors find in `body`, or `undefined`.
 *
 * `body` may be text (JSON text is parsed — safely, and only within
 * {@link MAX_BODY_HINT_CHARS}), bytes (`Uint8Array`/`ArrayBuffer`, decoded as UTF-8), or an
 * already-parsed value. Every extractor result passes the same gate as header hints
 * (`sanitizeHintMs`): not a number ≥ 0 ⇒ skipped; otherwise rounded up to a whole ms and
 * capped at `MAX_HINT_MS` (a value that overflowed to `Infinity` included). Never throws.
 */
export function extractBodyHint(
  body: unknown,
  nowMs: number,
  extractors: readonly BodyHintExtractor[] = DEFAULT_BODY_HINT_EXTRACTORS,
): number | undefined {
  let value: unknown;
  try {
    value = prepare(body);
  } catch {
    return undefined;
  }
  if (value === undefined || value === null) return undefined;
  const list = Array.isArray(extractors) ? extractors : DEFAULT_BODY_HINT_EXTRACTORS;
  for (let i = 0; i < list.length; i++) {
    try {
      const extractor: unknown = list[i];
      if (typeof extractor !== 'function') continue;
      const ms = sanitizeHintMs((extractor as BodyHintExtractor)(value, nowMs));
      if (ms !== undefined) return ms;
    } catch {
      // An extractor that throws on this body simply has no answer; the next one is tried.
    }
  }
  return undefined;
}

function prepare(body: unknown): unknown {
  let text: string | undefined;
  if (typeof body === 'string') text = body;
  else if (body instanceof Uint8Array) text = decode(body);
  else if (body instanceof ArrayBuffer) text = decode(new Uint8Array(body));
  if (text === undefined) return body;
  if (text.length > MAX_BODY_HINT_CHARS) return text.slice(0, MAX_BODY_HINT_CHARS);
  const first = text.trimStart().charCodeAt(0);
  if (first !== 123 /* { */ && first !== 91 /* [ */) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes.subarray(0, MAX_BODY_HINT_CHARS));
}

/** Reads `key` from an object, swallowing throwing getters and Proxy traps. */
function field(holder: unknown, key: string): unknown {
  if (!isRecord(holder)) return undefined;
  try {
    return holder[key];
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * A number ≥ 0 (JSON's `1e400` parses to `Infinity`: "very long", capped later like any huge
 * hint), or a string of digits with an optional fraction.
 */
function numberOf(value: unknown): number | undefined {
  if (typeof value === 'number') return value >= 0 ? value : undefined;
  if (typeof value === 'string') return parseDecimal(trimOws(value));
  return undefined;
}

/** Protobuf Duration in JSON (`"1.5s"`) or object form (`{ seconds: 1, nanos: 5e8 }`) → ms. */
function protobufDurationMs(value: unknown): number | undefined {
  if (typeof value === 'string') {
    const text = trimOws(value);
    if (!text.endsWith('s')) return undefined;
    const seconds = parseDecimal(text.slice(0, -1));
    return seconds === undefined ? undefined : seconds * 1000;
  }
  if (!isRecord(value) || Array.isArray(value)) return undefined;
  // A part that is absent is 0; one that is there but unusable (negative, not a number) makes
  // the whole duration unusable, and so does an object with neither: no hint, never 0 ms.
  const rawSeconds = field(value, 'seconds');
  const rawNanos = field(value, 'nanos');
  if (rawSeconds === undefined && rawNanos === undefined) return undefined;
  const seconds = rawSeconds === undefined ? 0 : numberOf(rawSeconds);
  const nanos = rawNanos === undefined ? 0 : numberOf(rawNanos);
  if (seconds === undefined || nanos === undefined) return undefined;
  return seconds * 1000 + nanos / 1e6;
}

/** Phrases after which a duration means "come back then". */
const PHRASE = /\b(?:try again|retry|wait|blocked|come back)(?:\s+(?:in|after|for))?\s+/gi;

const UNIT_MS: ReadonlyMap<string, number> = new Map([
  ...['ms', 'msec', 'msecs', 'millisecond', 'milliseconds'].map((u) => [u, 1] as const),
  ...['s', 'sec', 'secs', 'second', 'seconds'].map((u) => [u, 1_000] as const),
  ...['m', 'min', 'mins', 'minute', 'minutes'].map((u) => [u, 60_000] as const),
  ...['h', 'hr', 'hrs', 'hour', 'hours'].map((u) => [u, 3_600_000] as const),
  ...['d', 'day', 'days'].map((u) => [u, 86_400_000] as const),
]);

function durationInText(text: string): number | undefined {
  const scanned = text.length > MAX_BODY_HINT_CHARS ? text.slice(0, MAX_BODY_HINT_CHARS) : text;
  // A fresh RegExp per call: a shared /g regex carries lastIndex between callers.
  const phrase = new RegExp(PHRASE.source, PHRASE.flags);
  for (let match = phrase.exec(scanned); match !== null; match = phrase.exec(scanned)) {
    const ms = durationAt(scanned, phrase.lastIndex);
    if (ms !== undefined) return ms;
  }
  return undefined;
}

/** `<number>[ ]<unit>` repeated without spaces (`1m30s`), starting at `at`; ms or `undefined`. */
function durationAt(text: string, at: number): number | undefined {
  let total = 0;
  let parts = 0;
  let i = at;
  for (;;) {
    const numberStart = i;
    while (isDigit(text.charCodeAt(i)) && i - numberStart < 12) i++;
    if (i === numberStart) break;
    if (text.charCodeAt(i) === 46 /* . */ && isDigit(text.charCodeAt(i + 1))) {
      i++;
      while (isDigit(text.charCodeAt(i)) && i - numberStart < 20) i++;
    }
    const amount = Number(text.slice(numberStart, i));
    // One space between number and unit, only before the first unit ("30 seconds", "1m30s").
    if (parts === 0 && text.charCodeAt(i) === 32) i++;
    const unitStart = i;
    while (isLetter(text.charCodeAt(i)) && i - unitStart < 12) i++;
    const unit = UNIT_MS.get(text.slice(unitStart, i).toLowerCase());
    if (unit === undefined || isLetter(text.charCodeAt(i)) || !Number.isFinite(amount)) {
      return parts === 0 ? undefined : total;
    }
    total += amount * unit;
    parts++;
    if (!isDigit(text.charCodeAt(i))) return total;
  }
  return parts === 0 ? undefined : total;
}

function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

function isLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}
