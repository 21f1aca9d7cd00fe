import {
  isAttemptTimeoutError,
  isBulkheadRejectedError,
  isCircuitOpenError,
  isDeadlineExceededError,
  isGiveUpError,
  isHttpStatusError,
  isKindlyError,
} from '../errors/errors.js';
import { pendingHeaders } from '../errors/lazy-response.js';
import { type BodyHintExtractor, DEFAULT_BODY_HINT_EXTRACTORS, extractBodyHint } from '../hints/body-hints.js';
import { readDontRetry } from '../hints/dont-retry.js';
import type { HeaderSource } from '../hints/headers.js';
import { sanitizeHintMs } from '../hints/hint-ms.js';
import { readThrottleSignal, readWaitHint } from '../hints/wait-hint.js';
import { type ClassifyStatusOptions, classifyStatus } from './http-status.js';
import { classifyNetworkError } from './network-error.js';
import type { Classification } from './outcome.js';
import { readProperty, readString } from './safe-read.js';
import { classifyUnusableUrl } from './unusable-url.js';

export interface ClassifyErrorOptions extends ClassifyStatusOptions {
  /**
   * Read a wait hint from the error body (axios `response.data`, got `response.body`) when
   * the headers gave none. `[]` turns body hints off.
   * @default DEFAULT_BODY_HINT_EXTRACTORS
   */
  bodyHintExtractors?: readonly BodyHintExtractor[];
}

/** Names of the errors that mean a bug in the calling code, which no retry fixes. */
const PROGRAMMING_ERRORS: ReadonlySet<string> = new Set(['TypeError', 'ReferenceError', 'SyntaxError', 'RangeError']);

/**
 * The default classifier for anything an operation throws. Checked in this order; the first
 * rule that recognises the value decides:
 *
 * 1. kindly's own errors:
 *    `AttemptTimeoutError` ⇒ `unknown`, retryable, `timeout`;
 *    `CircuitOpenError`, `BulkheadRejectedError` ⇒ `failed`, retryable, `hintMs` = its `retryAfterMs`;
 *    `HttpStatusError` ⇒ as its status (rule 2), hints read from its `response`;
 *    `DeadlineExceededError` ⇒ its outcome, not retryable, `timeout` (no time is left);
 *    `GiveUpError` (a nested kindly call gave up) ⇒ its outcome, not retryable, `dontRetry`:
 *    only the layer next to the failure retries;
 *    any other kindly error ⇒ its outcome, not retryable (a local decision, final).
 * 2. an HTTP status on the value — `status`, `statusCode`, `response.status` or
 *    `response.statusCode` (fetch `Response`, axios, got, ky) — ⇒ {@link classifyStatus},
 *    plus the wait hint ({@link readWaitHint}, `throttled` for 429/503), the don't-retry
 *    markers ({@link readDontRetry}) and the throttle signal from `response.headers` (or the
 *    value's own `headers`), and, failing a header hint, a body hint from `response.data` /
 *    `response.body` when that is text, bytes or a plain object (never a stream).
 *    A status below 400 falls through to the next rules.
 * 3. a caller abort — name `AbortError`, code `ABORT_ERR`, or axios' `ERR_CANCELED` /
 *    `CanceledError` ⇒ `unknown`, not retryable (an abort is never retried). Checked
 *    before network codes so that an abort always wins.
 * 4. a URL that can never be fetched — invalid, an unsupported scheme (`ftp:`, `ws:`), a port
 *    fetch refuses (`:1`, `:6000`) — ⇒ `failed`, not retryable ({@link classifyUnusableUrl});
 *    then network errors ⇒ {@link classifyNetworkError}.
 * 5. name `TimeoutError` (`AbortSignal.timeout()`, got) ⇒ `unknown`, retryable, `timeout`.
 * 6. programming errors — `TypeError` (other than the fetch network shapes of rule 4),
 *    `ReferenceError`, `SyntaxError`, `RangeError` ⇒ `failed`, not retryable.
 * 7. anything else, including non-Error values ⇒ `unknown`, retryable.
 *
 * Never throws, whatever it is given: every property read is guarded (throwing getters,
 * Proxies, null-prototype objects), and a value that still defeats it is rule 7.
 */
export function classifyError(error: unknown, nowMs: number, options?: ClassifyErrorOptions): Classification {
  return (
    guarded(() => classifyKindly(error, nowMs, options)) ??
    guarded(() => classifyHttp(error, nowMs, options)) ??
    guarded(() => classifyAbort(error)) ??
    guarded(() => classifyUnusableUrl(error)) ??
    guarded(() => classifyNetworkError(error)) ??
    guarded(() => classifyByName(error)) ?? { outcome: 'unknown', retryable: true }
  );
}

/**
 * Each rule runs on its own, so a value that defeats one rule (a Proxy whose trap throws on
 * a symbol read) is still seen by the next instead of dropping straight to the last rule.
 */
function guarded(rule: () => Classification | undefined): Classification | undefined {
  try {
    return rule();
  } catch {
    return undefined;
  }
}

function classifyKindly(error: unknown, nowMs: number, options: ClassifyErrorOptions | undefined): Classification | undefined {
  if (!isKindlyError(error)) return undefined;
  const code = readString(error, 'code');
  if (isAttemptTimeoutError(error)) return withCode({ outcome: 'unknown', retryable: true, timeout: true }, code);
  if (isCircuitOpenError(error) || isBulkheadRejectedError(error)) {
    const classification = withCode({ outcome: 'failed', retryable: true }, code);
    const hintMs = sanitizeHintMs(readProperty(error, 'retryAfterMs'));
    if (hintMs !== undefined) {
      classification.hintMs = hintMs;
      classification.hintSource = isCircuitOpenError(error) ? 'circuit-breaker' : 'bulkhead';
    }
    return classification;
  }
  if (isHttpStatusError(error)) {
    // A response still to be made (a retried attempt's, usually never read) is left unmade:
    // its headers are at hand, and its body, a stream, is never read here.
    const headers = pendingHeaders(error);
    const response = headers === undefined ? readProperty(error, 'response') : undefined;
    const fromStatus = fromHttpStatus(
      readProperty(error, 'status'),
      response,
      headers ?? readProperty(response, 'headers'),
      nowMs,
      options,
    );
    if (fromStatus !== undefined) return fromStatus;
  }
  const outcome = readProperty(error, 'outcome') === 'failed' ? 'failed' : 'unknown';
  if (isDeadlineExceededError(error)) return withCode({ outcome, retryable: false, timeout: true }, code);
  const classification = withCode({ outcome, retryable: false }, code);
  if (isGiveUpError(error)) {
    classification.dontRetry = true;
    const hintMs = sanitizeHintMs(readProperty(error, 'retryAfterMs'));
    if (hintMs !== undefined) {
      classification.hintMs = hintMs;
      classification.hintSource = 'give-up';
    }
  }
  return classification;
}

function classifyHttp(error: unknown, nowMs: number, options: ClassifyErrorOptions | undefined): Classification | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const response = readProperty(error, 'response');
  let status = readProperty(error, 'status');
  if (typeof status !== 'number') status = readProperty(error, 'statusCode');
  if (typeof status !== 'number') status = readProperty(response, 'status');
  if (typeof status !== 'number') status = readProperty(response, 'statusCode');
  const headers = readProperty(response, 'headers') ?? readProperty(error, 'headers');
  return fromHttpStatus(status, response, headers, nowMs, options);
}

function fromHttpStatus(
  status: unknown,
  response: unknown,
  headers: unknown,
  nowMs: number,
  options: ClassifyErrorOptions | undefined,
): Classification | undefined {
  if (typeof status !== 'number') return undefined;
  const classification = classifyStatus(status, options);
  if (classification === undefined) return undefined;
  const source = isHeaderSource(headers) ? headers : undefined;
  const hint = readWaitHint(source, nowMs, { throttled: classification.throttled === true });
  if (hint !== undefined) {
    classification.hintMs = hint.ms;
    classification.hintSource = hint.source;
  } else {
    const body = bodyOf(response);
    const extractors = options?.bodyHintExtractors ?? DEFAULT_BODY_HINT_EXTRACTORS;
    const ms = body === undefined || extractors.length === 0 ? undefined : extractBodyHint(body, nowMs, extractors);
    if (ms !== undefined) {
      classification.hintMs = ms;
      classification.hintSource = 'body';
    }
  }
  if (readDontRetry(source)) classification.dontRetry = true;
  if (classification.throttled !== true && readThrottleSignal(source)) classification.throttled = true;
  return classification;
}

function classifyAbort(error: unknown): Classification | undefined {
  const name = readString(error, 'name');
  const code = readString(error, 'code');
  if (name === 'AbortError' || name === 'CanceledError' || code === 'ABORT_ERR' || code === 'ERR_CANCELED') {
    return withCode({ outcome: 'unknown', retryable: false }, code);
  }
  return undefined;
}

function classifyByName(error: unknown): Classification | undefined {
  const name = readString(error, 'name');
  if (name === undefined) return undefined;
  if (name === 'TimeoutError') return { outcome: 'unknown', retryable: true, timeout: true };
  if (PROGRAMMING_ERRORS.has(name)) return { outcome: 'failed', retryable: false };
  return undefined;
}

/** Headers objects and header records are both objects; anything else is not headers. */
function isHeaderSource(value: unknown): value is HeaderSource {
  return typeof value === 'object' && value !== null;
}

/**
 * axios' `response.data` or got's `response.body`, when it is something a body extractor can
 * read without I/O: text, bytes, or a plain object/array. A fetch `Response.body` is a stream
 * (reading it is I/O, the fetch layer's job) and is skipped.
 */
function bodyOf(response: unknown): unknown {
  for (const key of ['data', 'body']) {
    const body = readProperty(response, key);
    if (typeof body === 'string' || isReadableData(body)) return body;
  }
  return undefined;
}

function isReadableData(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  try {
    if (value instanceof Uint8Array) return true; // got's Buffer
    const prototype: unknown = Object.getPrototypeOf(value);
    return prototype === Object.prototype || prototype === null || prototype === Array.prototype;
  } catch {
    return false; // a Proxy's getPrototypeOf trap threw
  }
}

function withCode(classification: Classification, code: string | undefined): Classification {
  if (code !== undefined) classification.code = code;
  return classification;
}
