import { classifyError } from '../classify/classify-error.js';
import { classifyStatus, isInFlightConflict } from '../classify/http-status.js';
import { isIdempotentMethod } from '../classify/methods.js';
import type { Classification } from '../classify/outcome.js';
import { HttpStatusError, isGiveUpError } from '../errors/errors.js';
import {
  type BodyHintExtractor,
  DEFAULT_BODY_HINT_EXTRACTORS,
  extractBodyHint,
  MAX_BODY_HINT_CHARS,
} from '../hints/body-hints.js';
import { readWaitHint } from '../hints/wait-hint.js';
import { OptionsValidator } from '../options/validate.js';
import type { CallContext } from '../runtime/attempt.js';
import { currentDeadlineScope } from '../runtime/deadline-context.js';
import type { CallOptions, Downstream, Fallback } from '../runtime/downstream.js';
import type { Clock } from '../time/clock.js';
import { ATTEMPT_HEADER } from './attempt-header.js';
import { connectTimeoutFetch, type FetchFunction } from './connect-timeout.js';
import { formatRequestTimeout, REQUEST_TIMEOUT_HEADER } from './deadline-header.js';
import { isRequestBodyNotReplayableError, RequestBodyNotReplayableError } from './errors.js';
import { chooseIdempotencyKey, IDEMPOTENCY_KEY_HEADER } from './idempotency-key.js';
import { pageEnvironment, waitUntilOnline, waitUntilVisible } from './online.js';
import { DEFAULT_SECRET_QUERY_PARAMS, redactUrl } from './redact.js';
import { DEFAULT_MAX_BUFFERED_BODY, type PreparedBody, prepareBody } from './request-body.js';
import { DRAIN_LIMIT, type Drain, drainBody, peekText, rebuildResponse, withoutUrl } from './response-body.js';

/** kindly's options for HTTP calls, set once with `createFetch` or per call in the init. */
export interface KindlyFetchOptions {
  /**
   * When the call gives up on an HTTP status, reject with the `GiveUpError` (its `cause` is an
   * `HttpStatusError` whose `response` is readable) instead of resolving with the last
   * response as `fetch` would. Network errors always reject.
   * @default false
   */
  throwHttpErrors?: boolean;
  /**
   * Streamed request bodies (`ReadableStream`, async iterables, Node streams) are read into
   * memory up to this many bytes so that they can be sent again; a longer stream is sent once
   * and a retry it would need fails with `RequestBodyNotReplayableError`.
   * @default DEFAULT_MAX_BUFFERED_BODY (1 MiB)
   */
  maxBufferedBody?: number;
  /**
   * Query parameters whose values never appear in errors or events (compared
   * case-insensitively). Replaces the default list.
   * @default DEFAULT_SECRET_QUERY_PARAMS
   */
  secretQueryParams?: readonly string[];
  /**
   * Send `x-retry-attempt` and `x-request-timeout-ms` (SPEC S5, S7). By default they are sent
   * except on a cross-origin request from a web page, where a custom header would turn a
   * simple request into a CORS preflight that the callee may refuse.
   * @default true on Node and for same-origin requests in a page; false for cross-origin requests in a page
   */
  propagateHeaders?: boolean;
  /**
   * `true`: give every call whose method is not idempotent (POST, PATCH) an
   * `Idempotency-Key`, generated once per call and identical on every attempt (SPEC S8.2).
   * A string (per call only): use that key. A key the request already carries always wins.
   * @default false
   */
  idempotencyKey?: boolean | string;
  /** In a browser, while `navigator.onLine` is false, wait for the `online` event before each attempt. @default true */
  waitForOnline?: boolean;
  /** In a browser, wait while the page is hidden before each attempt. @default false */
  pauseWhileHidden?: boolean;
  /** Statuses worth retrying; replaces the default set. @default DEFAULT_RETRYABLE_STATUSES */
  retryableStatuses?: readonly number[];
  /**
   * Read a wait hint from a failed response's body when its headers carry none (JSON or text
   * bodies up to 64 KiB; the body stays readable). `[]` turns it off.
   * @default DEFAULT_BODY_HINT_EXTRACTORS
   */
  bodyHintExtractors?: readonly BodyHintExtractor[];
  /**
   * ms allowed for the TCP/TLS connect phase (Node, needs the optional `undici@7`). Without
   * it the platform's own connect timeout applies (undici: 10 s); the attempt timeout and the
   * deadline bound the whole attempt in any case.
   */
  connectTimeout?: number;
  /** The fetch implementation each attempt calls. @default globalThis.fetch */
  fetch?: FetchFunction;
}

/** `fetch`'s init, plus kindly's options and this call's limits. */
export interface KindlyRequestInit extends RequestInit, KindlyFetchOptions {
  /** Absolute deadline, in the downstream clock's monotonic ms. */
  deadline?: number;
  /** Whole-call timeout in ms (all attempts and waits). */
  timeout?: number;
  /**
   * Whether repeating the request after an `unknown` outcome is safe. Default: by method —
   * GET, HEAD, OPTIONS, PUT, DELETE, TRACE yes; POST, PATCH only with an `Idempotency-Key`.
   */
  idempotent?: boolean;
  /** See `CallOptions.verify`: asked before retrying a non-idempotent request whose outcome is unknown. */
  verify?: CallOptions<Response>['verify'];
  /** Used instead of failing when the call gives up or is rejected fast. */
  fallback?: Fallback<Response>;
  /** The breaker / bulkhead / pacer lane. @default the URL's host (`api.example.com:8443`) */
  key?: string;
  /** The retry budget drawn on. @default the downstream's name */
  budgetKey?: string;
}

export const FETCH_DEFAULTS = {
  throwHttpErrors: false,
  maxBufferedBody: DEFAULT_MAX_BUFFERED_BODY,
  waitForOnline: true,
  pauseWhileHidden: false,
  idempotencyKey: false,
} as const;

const OPTION_KEYS = [
  'throwHttpErrors',
  'maxBufferedBody',
  'secretQueryParams',
  'propagateHeaders',
  'idempotencyKey',
  'waitForOnline',
  'pauseWhileHidden',
  'retryableStatuses',
  'bodyHintExtractors',
  'connectTimeout',
  'fetch',
] as const;
const CALL_KEYS = ['deadline', 'timeout', 'idempotent', 'verify', 'fallback', 'key', 'budgetKey'] as const;
const KINDLY_KEYS: ReadonlySet<string> = new Set<string>([...OPTION_KEYS, ...CALL_KEYS]);

/**
 * Hooks the fetch layer hands to `Downstream.call` (see the report to the lead: they belong
 * in `CallOptions`). `classify` reads what only the request knows; `beforeAttempt` holds an
 * attempt back while the browser is offline, before it is counted.
 */
interface HttpCallHooks {
  classify?: (error: unknown, nowMs: number) => Classification | undefined;
  beforeAttempt?: (info: {
    attempt: number;
    signal: AbortSignal | undefined;
    deadline: number | undefined;
  }) => void | PromiseLike<void>;
}

/** What kindly remembers about one failed response. */
interface FailedResponse {
  response: Response;
  status: number;
  /** A wait hint found in the body, when the headers had none. */
  bodyHintMs: number | undefined;
  /** Set when the attempt is retried: the body read (and the connection freed) or dropped. */
  drained: Drain | undefined;
}

/**
 * `fetch` through a downstream's pipeline (SPEC S8.1): retries with backoff and wait hints,
 * attempt timeouts, the deadline, and every protection policy of `downstream`.
 *
 * - Statuses ≥ 400 are failures, classified as in SPEC S3.2; a success (< 400) resolves.
 *   When the call gives up on a status (retries exhausted, not retryable, told not to retry,
 *   deadline) it resolves with the **last response**, body intact, as `fetch` would — unless
 *   `throwHttpErrors`. A network failure rejects with the `GiveUpError` (its `cause` is the
 *   last attempt's error); a caller abort rejects with `signal.reason`.
 * - Idempotency by method: GET, HEAD, OPTIONS, PUT, DELETE, TRACE are retried after an
 *   `unknown` outcome; POST and PATCH only with an `Idempotency-Key` (or `idempotent: true`).
 *   A `failed` outcome (refused, 429, 503) is retried whatever the method.
 * - A 409 on a request carrying an idempotency key means "the original is still in flight"
 *   and is retried after backoff (SPEC S8.2).
 * - Every attempt carries `x-retry-attempt: <attempts before this one>` and, when the call has
 *   a deadline, `x-request-timeout-ms: <ms left>` (see `propagateHeaders`).
 * - The body of a failed response that is retried is read (≤ 64 KiB, so the connection is
 *   reused) or cancelled: no socket is leaked.
 * - In a browser, no attempt is spent while offline (`waitForOnline`).
 */
export async function fetchThrough(
  downstream: Downstream,
  input: RequestInfo | URL,
  init?: KindlyRequestInit,
): Promise<Response> {
  const options: KindlyRequestInit = init ?? {};
  validate(options, 'fetch', false);
  const request = normalize(input, options);
  const method = request.method.toUpperCase();
  const secrets = options.secretQueryParams ?? DEFAULT_SECRET_QUERY_PARAMS;
  const throwHttpErrors = options.throwHttpErrors ?? FETCH_DEFAULTS.throwHttpErrors;
  const limit = options.maxBufferedBody ?? FETCH_DEFAULTS.maxBufferedBody;
  const retryableStatuses = options.retryableStatuses;
  const extractors = options.bodyHintExtractors ?? DEFAULT_BODY_HINT_EXTRACTORS;
  const propagate = options.propagateHeaders ?? sameOriginOrServer(request.url);
  const clock = downstream.clock;

  const baseHeaders = new Headers(request.init.headers);
  const key = chooseIdempotencyKey(method, baseHeaders.get(IDEMPOTENCY_KEY_HEADER), options.idempotencyKey);
  if (key !== undefined) baseHeaders.set(IDEMPOTENCY_KEY_HEADER, key);
  const hasKey = key !== undefined;
  const idempotent = options.idempotent ?? (isIdempotentMethod(method) || hasKey);

  const prepared: PreparedBody = await prepareBody(request.init.body, limit);
  const underlying = await chooseFetch(options);
  const bodySignal = request.signal ?? currentDeadlineScope()?.signal;
  const failures = new WeakMap<object, FailedResponse>();
  /** The failed response of the previous attempt, whose body is being drained. */
  let retried: FailedResponse | undefined;

  /** This call's reading of what only it knows (see HttpCallHooks); undefined: the downstream's. */
  const classifyHere = (error: unknown, nowMs: number): Classification | undefined => {
    const failure = failures.get(error as object);
    if (failure === undefined) return undefined;
    const keyed409 = isInFlightConflict(failure.status, hasKey);
    if (!keyed409 && failure.bodyHintMs === undefined && retryableStatuses === undefined) return undefined;
    const base =
      retryableStatuses === undefined ? downstream.classify(error) : classifyError(error, nowMs, { retryableStatuses });
    const c: Classification = { ...base };
    if (keyed409) c.retryable = true;
    if (c.hintMs === undefined && failure.bodyHintMs !== undefined) {
      c.hintMs = failure.bodyHintMs;
      c.hintSource = 'body';
    }
    return c;
  };

  const notReplayable = (attempt: number, outcome: 'failed' | 'unknown', cause: unknown) =>
    new RequestBodyNotReplayableError(`${request.init.method ?? 'GET'} ${redactUrl(request.url, secrets)}`, limit, {
      outcome,
      attempts: attempt,
      downstream: downstream.name,
      cause,
    });

  /**
   * A one-shot body cannot be sent again: when the pipeline would retry this failure (same
   * classification as it will use), stop it with a clear error instead.
   */
  const oneShot = (error: unknown, attempt: number): unknown => {
    if (prepared.replayable) return error;
    const c = classifyHere(error, clock.now()) ?? downstream.classify(error);
    if (!c.retryable || c.dontRetry) return error;
    return notReplayable(attempt, c.outcome, error);
  };

  const operation = async (ctx: CallContext): Promise<Response> => {
    // Let the previous attempt's connection go back to the pool before asking for one, or the
    // pool opens a second connection while the first is still busy with the old body. The wait
    // is bounded by this attempt's own timeout: a stalled body is then cancelled instead.
    const previous = retried?.drained;
    retried = undefined;
    if (previous !== undefined) await drained(previous, ctx.signal);
    // Never reached through oneShot; a guard in case a classifier upstream of it changes its mind.
    if (!prepared.replayable && ctx.attempt > 1) throw notReplayable(ctx.attempt, 'failed', undefined);
    const headers = new Headers(baseHeaders);
    if (propagate) {
      headers.set(ATTEMPT_HEADER, String(ctx.attempt - 1));
      if (ctx.deadline !== undefined) headers.set(REQUEST_TIMEOUT_HEADER, formatRequestTimeout(ctx.timeLeft()));
    }
    const attemptInit: RequestInit & { duplex?: 'half' } = {
      ...request.init,
      headers,
      signal: attemptSignal(ctx.signal, bodySignal),
    };
    if (prepared.body === undefined || prepared.body === null) delete attemptInit.body;
    else attemptInit.body = prepared.body as BodyInit;
    if (!prepared.replayable) attemptInit.duplex = 'half';

    let response: Response;
    try {
      response = await underlying(request.url, attemptInit);
    } catch (error) {
      throw oneShot(error, ctx.attempt);
    }
    const status = response.status;
    const reading = classifyStatus(status, retryableStatuses === undefined ? undefined : { retryableStatuses });
    if (reading === undefined) return response;

    const keyed409 = isInFlightConflict(status, hasKey);
    const bodyHintMs =
      (reading.retryable || keyed409) && extractors.length > 0
        ? await bodyHint(response, clock, extractors, reading.throttled)
        : undefined;
    const error = new HttpStatusError(status, {
      outcome: reading.outcome,
      attempts: ctx.attempt,
      downstream: downstream.name,
      response: withoutUrl(response),
    });
    failures.set(error, { response, status, bodyHintMs, drained: undefined });
    throw oneShot(error, ctx.attempt);
  };

  const failureOf = (error: unknown): FailedResponse | undefined => {
    if (typeof error !== 'object' || error === null) return undefined;
    return failures.get(error) ?? (isRequestBodyNotReplayableError(error) ? failureOf(error.cause) : undefined);
  };

  const callOptions: CallOptions<Response> & HttpCallHooks = {
    idempotent,
    key: options.key ?? hostOf(request.url),
    classify: classifyHere,
    onAttemptError: (error, { willRetry }) => {
      if (!willRetry) return;
      const failure = failures.get(error as object);
      if (failure === undefined) return;
      failure.drained = drainBody(failure.response, DRAIN_LIMIT);
      retried = failure;
    },
  };
  if (request.signal !== undefined) callOptions.signal = request.signal;
  if (options.deadline !== undefined) callOptions.deadline = options.deadline;
  if (options.timeout !== undefined) callOptions.timeout = options.timeout;
  if (options.verify !== undefined) callOptions.verify = options.verify;
  if (options.fallback !== undefined) callOptions.fallback = options.fallback;
  if (options.budgetKey !== undefined) callOptions.budgetKey = options.budgetKey;
  const waitOnline = options.waitForOnline ?? FETCH_DEFAULTS.waitForOnline;
  const waitVisible = options.pauseWhileHidden ?? FETCH_DEFAULTS.pauseWhileHidden;
  if ((waitOnline || waitVisible) && pageEnvironment().window !== undefined) {
    callOptions.beforeAttempt = ({ signal, deadline }) => waitUntilReady(waitOnline, waitVisible, signal, deadline, clock);
  }

  try {
    return await downstream.call(operation, callOptions);
  } catch (error) {
    if (throwHttpErrors || !isGiveUpError(error)) throw error;
    const failure = failureOf(error.cause);
    if (failure === undefined) throw error;
    // A response whose attempt was followed by a retry had its body drained to free the
    // connection; the call then stopped before that retry (deadline, verify): hand back a copy.
    if (failure.drained !== undefined) return rebuildResponse(failure.response, await failure.drained.bytes);
    return failure.response;
  }
}

/**
 * A `fetch`-compatible function that sends every request through `downstream`'s pipeline,
 * with `options` as defaults for each call (a call's init overrides them).
 */
export function createFetch(
  downstream: Downstream,
  options?: KindlyFetchOptions,
): (input: RequestInfo | URL, init?: KindlyRequestInit) => Promise<Response> {
  if (options !== undefined) validate(options, 'createFetch', true);
  const defaults = options ?? {};
  return (input, init) => fetchThrough(downstream, input, init === undefined ? defaults : { ...defaults, ...init });
}

function validate(options: KindlyRequestInit, subject: string, onlyOptions: boolean): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`${subject}: expected an options object`);
  const v = new OptionsValidator(subject);
  if (onlyOptions) v.knownKeys(options, OPTION_KEYS);
  v.duration('maxBufferedBody', options.maxBufferedBody)
    .duration('connectTimeout', options.connectTimeout, { min: 1 })
    .duration('timeout', options.timeout, { min: 0 })
    .func('fetch', options.fetch)
    .func('verify', options.verify)
    .func('fallback', options.fallback);
  if (options.deadline !== undefined)
    v.check(
      typeof options.deadline === 'number' && !Number.isNaN(options.deadline),
      `Expected \`deadline\` to be a number, got ${String(options.deadline)}`,
    );
  for (const name of ['throwHttpErrors', 'propagateHeaders', 'waitForOnline', 'pauseWhileHidden', 'idempotent'] as const) {
    const value = options[name];
    v.check(value === undefined || typeof value === 'boolean', `Expected \`${name}\` to be a boolean, got ${String(value)}`);
  }
  const key = options.idempotencyKey;
  v.check(
    key === undefined || typeof key === 'boolean' || (!onlyOptions && typeof key === 'string' && key.length > 0),
    onlyOptions
      ? `Expected \`idempotencyKey\` to be a boolean (a fixed key belongs to one call, not to every call), got ${String(key)}`
      : `Expected \`idempotencyKey\` to be true, false or a non-empty string, got ${String(key)}`,
  );
  for (const name of ['key', 'budgetKey'] as const) {
    const value = options[name];
    v.check(value === undefined || typeof value === 'string', `Expected \`${name}\` to be a string, got ${String(value)}`);
  }
  for (const name of ['secretQueryParams', 'retryableStatuses', 'bodyHintExtractors'] as const) {
    const value = options[name];
    v.check(value === undefined || Array.isArray(value), `Expected \`${name}\` to be an array, got ${String(value)}`);
  }
  v.done();
}

interface NormalizedRequest {
  url: string;
  /** `fetch`'s init, without kindly's keys, headers not yet copied. */
  init: RequestInit;
  /** The caller's signal (init's, else the Request's). */
  signal: AbortSignal | undefined;
  method: string;
}

/**
 * Turns `(input, init)` into a URL and one init, the way `fetch` combines them: a `Request`'s
 * fields are the defaults, the init's fields override them. Working from URL + init (never
 * re-sending a `Request` object) keeps one code path for every attempt and for every fetch
 * implementation.
 */
function normalize(input: RequestInfo | URL, options: KindlyRequestInit): NormalizedRequest {
  const init: RequestInit = {};
  let url: string;
  if (typeof input === 'string') url = input;
  else if (input instanceof URL) url = input.href;
  else {
    const r = input as Request;
    url = r.url;
    init.method = r.method;
    init.headers = r.headers;
    if (r.body !== null) init.body = r.body;
    init.redirect = r.redirect;
    init.credentials = r.credentials;
    init.cache = r.cache;
    init.referrer = r.referrer;
    init.referrerPolicy = r.referrerPolicy;
    init.integrity = r.integrity;
    init.keepalive = r.keepalive;
    if (r.mode !== 'navigate') init.mode = r.mode;
    init.signal = r.signal;
  }
  for (const name of Object.keys(options)) {
    if (!KINDLY_KEYS.has(name)) (init as Record<string, unknown>)[name] = (options as Record<string, unknown>)[name];
  }
  const signal = init.signal ?? undefined;
  delete init.signal;
  return { url, init, signal, method: init.method ?? 'GET' };
}

async function chooseFetch(options: KindlyFetchOptions): Promise<FetchFunction> {
  if (options.fetch !== undefined) return options.fetch;
  if (options.connectTimeout !== undefined && pageEnvironment().window === undefined) {
    return await connectTimeoutFetch(options.connectTimeout);
  }
  // Looked up at call time, so a fetch installed later (polyfill, test double) is used.
  return (input, init) => globalThis.fetch(input, init);
}

/**
 * The signal for one attempt's `fetch`. During the attempt `ctx.signal` already follows the
 * caller's signal; after the response is returned only the caller's signal matters, for
 * reading the body — so the two are combined. `AbortSignal.any` costs tens of µs, nothing
 * next to an HTTP request, and (unlike a listener of ours) it does not accumulate listeners on
 * a long-lived caller signal. Without it (old browsers) the body read follows `ctx.signal` only.
 */
function attemptSignal(attempt: AbortSignal, caller: AbortSignal | undefined): AbortSignal {
  if (caller === undefined) return attempt;
  const any = (AbortSignal as { any?: (signals: AbortSignal[]) => AbortSignal }).any;
  return typeof any === 'function' ? any.call(AbortSignal, [attempt, caller]) : attempt;
}

/** Waits for `drain` to finish, cancelling it if `signal` aborts first. */
async function drained(drain: Drain, signal: AbortSignal): Promise<void> {
  if (signal.aborted) {
    drain.cancel();
    return;
  }
  const onAbort = () => drain.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    await drain.bytes;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** The lane key of a URL: its host (with port), so one failing host does not open the breaker for another. */
function hostOf(url: string): string {
  const location = (globalThis as { location?: { href?: string } }).location;
  try {
    return new URL(url, location?.href).host;
  } catch {
    return url;
  }
}

/** On Node (no page) always; in a page only for requests to the page's own origin. */
function sameOriginOrServer(url: string): boolean {
  const location = (globalThis as { location?: { href?: string; origin?: string } }).location;
  if (location?.href === undefined || location.origin === undefined) return true;
  try {
    return new URL(url, location.href).origin === location.origin;
  } catch {
    return false;
  }
}

async function waitUntilReady(
  online: boolean,
  visible: boolean,
  signal: AbortSignal | undefined,
  deadline: number | undefined,
  clock: Clock,
): Promise<void> {
  for (;;) {
    if (deadline !== undefined && clock.monotonic() >= deadline) return;
    const wait =
      (online ? waitUntilOnline(signal, deadline, clock) : undefined) ??
      (visible ? waitUntilVisible(signal, deadline, clock) : undefined);
    if (wait === undefined) return;
    await wait;
  }
}

/** A wait hint in the body of a failed response, when its headers have none. */
async function bodyHint(
  response: Response,
  clock: Clock,
  extractors: readonly BodyHintExtractor[],
  throttled: boolean | undefined,
): Promise<number | undefined> {
  const now = clock.now();
  if (readWaitHint(response.headers, now, { throttled: throttled === true }) !== undefined) return undefined;
  const type = response.headers.get('content-type') ?? '';
  if (!/json|text/i.test(type)) return undefined;
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_BODY_HINT_CHARS) return undefined;
  const text = await peekText(response, MAX_BODY_HINT_CHARS);
  return text === undefined || text.length === 0 ? undefined : extractBodyHint(text, now, extractors);
}
