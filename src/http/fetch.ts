import { type BodyHintExtractor, DEFAULT_BODY_HINT_EXTRACTORS } from '../hints/body-hints.js';
import { OptionsValidator } from '../options/validate.js';
import { callDeadline } from '../orchestration/deadline.js';
import { currentDeadlineScope, type DeadlineScope } from '../runtime/deadline-context.js';
import type { CallOptions, Downstream, Fallback } from '../runtime/downstream.js';
import { linkSignals } from '../runtime/link-signals.js';
import type { Clock } from '../time/clock.js';
import { connectTimeoutFetch, type FetchFunction } from './connect-timeout.js';
import { FetchCall, type FetchPlan } from './fetch-call.js';
import { IDEMPOTENCY_KEY_HEADER, requestIdempotency } from './idempotency-key.js';
import { laneKeyOf } from './lane-key.js';
import { pageEnvironment } from './online.js';
import { checkPropagateHeaders, type PropagateHeaders, propagatesTo } from './propagation.js';
import { DEFAULT_SECRET_QUERY_PARAMS, redactUrl } from './redact.js';
import { DEFAULT_MAX_BUFFERED_BODY, type PreparedBody, prepareBody, preparedAsIs } from './request-body.js';

/** kindly's options for HTTP calls, set once with `createFetch` or per call in the init. */
export interface CreateFetchOptions {
  /**
   * When the call gives up on an HTTP status, reject with the `GiveUpError` (its `cause` is an
   * `HttpStatusError` whose `response` is readable: same status and body, no URL, no
   * `Set-Cookie`) instead of resolving with the last response as `fetch` would. Network
   * errors always reject.
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
   * Who gets `x-retry-attempt` and `x-request-timeout-ms`: `true`, `false`, or
   * `{ hosts: ['payments.internal', '*.svc.cluster.local'] }`. By default only requests made
   * inside a deadline scope (a request served by kindly's middleware) carry them, and in a
   * page only same-origin ones: third-party APIs never see them. See {@link PropagateHeaders}.
   * @default inside a deadline scope only (same origin only in a page)
   */
  propagateHeaders?: PropagateHeaders;
  /**
   * `true`: give every call whose method is not idempotent (POST, PATCH) an
   * `Idempotency-Key`, generated once per call and identical on every attempt.
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
   * bodies up to 64 KiB that arrive within BODY_HINT_WAIT_MS; the body stays readable). `[]`
   * turns it off.
   * @default DEFAULT_BODY_HINT_EXTRACTORS
   */
  bodyHintExtractors?: readonly BodyHintExtractor[];
  /**
   * ms allowed for the TCP/TLS connect phase (Node, needs the optional `undici@7`). Without
   * it the platform's own connect timeout applies (undici: 10 s); the attempt timeout and the
   * deadline bound the whole attempt in any case. Rounded up to a step (1, 1.2, 1.5, 2, 2.5, 3,
   * 4, 5, 6 or 8 × 10ⁿ ms), each step one connection pool, at most 8 kept.
   */
  connectTimeoutMs?: number;
  /**
   * ms allowed for reading the body of a response handed back (success, or the last failed
   * response on give-up), counted from its arrival; past it, reading the body rejects with
   * `BodyTimeoutError` and the connection is closed. Whatever this says, a call with a
   * deadline (`timeoutMs`, the downstream's `totalTimeoutMs`, an inherited deadline) must have
   * read its body by then: reading rejects with `DeadlineExceededError` at the deadline. The
   * attempt timeout bounds the wait for the response headers, not the body.
   * @default none (only the call's deadline, when it has one)
   */
  bodyTimeoutMs?: number;
  /** The fetch implementation each attempt calls. @default globalThis.fetch */
  fetch?: FetchFunction;
}

/** `fetch`'s init, plus kindly's options and this call's limits. */
export interface FetchThroughInit extends RequestInit, CreateFetchOptions {
  /** Absolute deadline, in the downstream clock's monotonic ms. */
  deadline?: number;
  /** Whole-call timeout in ms (all attempts and waits). */
  timeoutMs?: number;
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
  'connectTimeoutMs',
  'bodyTimeoutMs',
  'fetch',
] as const;
const CALL_KEYS = ['deadline', 'timeoutMs', 'idempotent', 'verify', 'fallback', 'key', 'budgetKey'] as const;
const KINDLY_KEYS: ReadonlySet<string> = new Set<string>([...OPTION_KEYS, ...CALL_KEYS]);

/**
 * `fetch` through a downstream's pipeline: retries with backoff and wait hints,
 * attempt timeouts, the deadline, and every protection policy of `downstream`.
 *
 * - Statuses ≥ 400 are failures, classified by the default classifier; a success (< 400) resolves.
 *   When the call gives up on a status (retries exhausted, not retryable, told not to retry,
 *   deadline) it resolves with the **last response**, body intact, as `fetch` would — unless
 *   `throwHttpErrors`. A network failure rejects with the `GiveUpError` (its `cause` is an
 *   `HttpRequestError`: the attempt's error with secrets removed); a caller abort rejects with
 *   `signal.reason`.
 * - Idempotency by method: GET, HEAD, OPTIONS, PUT, DELETE, TRACE are retried after an
 *   `unknown` outcome; POST and PATCH only with an `Idempotency-Key` (or `idempotent: true`).
 *   A `failed` outcome (refused, 429, 503) is retried whatever the method.
 * - A 409 on a request carrying an idempotency key means "the original is still in flight"
 *   and is retried after backoff.
 * - Attempts to services that take part (see `propagateHeaders`: by default, calls made
 *   inside a deadline scope) carry `x-retry-attempt: <attempts before this one>` and, when
 *   the attempt has a deadline, `x-request-timeout-ms: <ms left>`.
 * - The body of a failed response that is retried is read (≤ 64 KiB, so the connection is
 *   reused) or cancelled; one that a fallback replaces is cancelled: no socket is leaked.
 * - In a browser, no attempt is spent while offline (`waitForOnline`).
 */
export function fetchThrough(downstream: Downstream, input: RequestInfo | URL, init?: FetchThroughInit): Promise<Response> {
  return send(downstream, input, init ?? undefined, undefined);
}

/**
 * A `fetch`-compatible function that sends every request through `downstream`'s pipeline,
 * with `options` as defaults for each call (a call's init overrides them). The options are
 * checked once, here.
 */
export function createFetch(
  downstream: Downstream,
  options?: CreateFetchOptions,
): (input: RequestInfo | URL, init?: FetchThroughInit) => Promise<Response> {
  if (options === undefined) return (input, init) => send(downstream, input, init ?? undefined, undefined);
  validate(options, 'createFetch', true);
  const defaults: CreateFetchOptions = { ...options };
  return (input, init) => send(downstream, input, init ?? undefined, defaults);
}

function send(
  downstream: Downstream,
  input: RequestInfo | URL,
  init: FetchThroughInit | undefined,
  defaults: CreateFetchOptions | undefined,
): Promise<Response> {
  try {
    if (init === undefined && typeof input === 'string') {
      const again = lastPlain?.reusableFor(downstream, input, defaults);
      if (again !== undefined) return new FetchCall(again, plainDeadline(downstream)).run();
    }
    if (init !== undefined && needsValidation(init)) validate(init, 'fetch', false);
    const plan = planCall(downstream, normalize(input, init), init, defaults);
    if (plan instanceof Promise) return plan.then((p) => new FetchCall(p).run());
    if (init === undefined && typeof input === 'string' && PlainPlan.fits(plan)) lastPlain = new PlainPlan(plan, defaults);
    return new FetchCall(plan).run();
  } catch (error) {
    return Promise.reject(error);
  }
}

/**
 * The plan of the last plain request — a URL string and no init, outside any deadline scope,
 * not in a page — kept for the next request to the same URL through the same downstream and
 * options. Such a plan depends on nothing else but the time (its only deadline is the
 * downstream's `totalTimeoutMs`, counted by each request: `plainDeadline`), and nothing
 * changes it once made (a `FetchCall` only reads its plan), so requests in a row share it
 * instead of each running the planning's thirty-odd small functions and a dozen objects
 * again. In a loop that planning costs ~1 µs; between real requests, which push kindly's code
 * and data out of the CPU's caches, several times that (docs/benchmarks.md).
 */
class PlainPlan {
  /** The platform's `fetch` when the plan was made: whether the attempt runs user code depends on it. */
  private readonly globalFetch: unknown;
  /** The plan as shared: no deadline of its own, so the downstream counts the call's from its start. */
  private readonly plan: FetchPlan;

  constructor(
    made: FetchPlan,
    private readonly defaults: CreateFetchOptions | undefined,
  ) {
    this.globalFetch = (globalThis as { fetch?: unknown }).fetch;
    const o = made.callOptions;
    // Field by field, in `callOptionsOf`'s order: the same shape as every other call's options.
    const callOptions: CallOptions<Response> = {
      idempotent: o.idempotent,
      key: o.key,
      signal: o.signal,
      deadline: undefined,
      timeoutMs: o.timeoutMs,
      verify: o.verify,
      fallback: o.fallback,
      budgetKey: o.budgetKey,
    };
    this.plan = { ...made, deadline: Number.POSITIVE_INFINITY, callOptions, hooked: undefined };
  }

  /** Whether a plan just made for a plain request may serve the next ones. */
  static fits(plan: FetchPlan): boolean {
    return (
      plan.callerSignal === undefined &&
      plan.body.replayable &&
      plan.body.body === undefined &&
      !plan.hasIdempotencyKey &&
      currentDeadlineScope() === undefined &&
      !maybePage()
    );
  }

  /** The plan, when a plain request to `url` would get the same one now. */
  reusableFor(downstream: Downstream, url: string, defaults: CreateFetchOptions | undefined): FetchPlan | undefined {
    const plan = this.plan;
    if (plan.url !== url || plan.downstream !== downstream || this.defaults !== defaults) return undefined;
    if (currentDeadlineScope() !== undefined || maybePage()) return undefined;
    if ((globalThis as { fetch?: unknown }).fetch !== this.globalFetch) return undefined;
    return plan;
  }
}

let lastPlain: PlainPlan | undefined;

/** A plain request's deadline, as `fetchDeadline` works it out without an init or a scope. */
function plainDeadline(downstream: Downstream): number {
  const timeoutMs = downstream.totalTimeoutMs;
  return timeoutMs === undefined
    ? Number.POSITIVE_INFINITY
    : callDeadline(downstream.clock.monotonic(), undefined, undefined, timeoutMs);
}

/** Cheaper than `pageEnvironment()` and never wrong the other way: a global `addEventListener` may be a page. */
function maybePage(): boolean {
  return typeof (globalThis as { addEventListener?: unknown }).addEventListener === 'function';
}

/**
 * Everything decided once per call, before the first attempt: options, key, body, deadline.
 * Synchronous unless a body must be buffered or a connect-timeout fetch loaded (an await
 * per request is a promise and a tick that bare `fetch` does not pay).
 */
function planCall(
  downstream: Downstream,
  request: NormalizedRequest,
  init: FetchThroughInit | undefined,
  defaults: CreateFetchOptions | undefined,
): FetchPlan | Promise<FetchPlan> {
  const method = request.method.toUpperCase();
  const secretParams = init?.secretQueryParams ?? defaults?.secretQueryParams ?? DEFAULT_SECRET_QUERY_PARAMS;
  const limit = init?.maxBufferedBody ?? defaults?.maxBufferedBody ?? FETCH_DEFAULTS.maxBufferedBody;

  // One Headers per call when the request has headers (or gets a key). Without any, each
  // attempt sends a plain record, which fetch reads once instead of copying a Headers of ours
  // (measured: docs/benchmarks.md).
  let headers = request.headers === undefined ? undefined : requestHeaders(request.headers);
  const { key, idempotent } = requestIdempotency(
    method,
    headers?.get(IDEMPOTENCY_KEY_HEADER),
    init?.idempotencyKey ?? defaults?.idempotencyKey,
    init?.idempotent,
  );
  if (key !== undefined) (headers ??= new Headers()).set(IDEMPOTENCY_KEY_HEADER, key);

  const scope = currentDeadlineScope();
  const deadline = fetchDeadline(downstream, init, scope);
  const asIs = preparedAsIs(request.body);
  const page = pageEnvironment().window !== undefined;
  const connectTimeout = init?.connectTimeoutMs ?? defaults?.connectTimeoutMs;
  const chosen = init?.fetch ?? defaults?.fetch ?? (connectTimeout !== undefined && !page ? undefined : platformFetch);
  const decided: Decided = {
    method,
    secretParams,
    limit,
    headers,
    key,
    idempotent,
    scope,
    deadline,
    page,
    body: asIs,
    fetch: chosen,
  };
  if (asIs !== undefined && chosen !== undefined) return finishPlan(downstream, request, init, defaults, decided);
  return completePlan(downstream, request, init, defaults, decided, connectTimeout);
}

/**
 * What `planCall` decided, and the body and fetch function once known. (No closure over
 * `planCall`'s locals: one would cost every request a context object, awaited or not.)
 */
interface Decided {
  method: string;
  secretParams: readonly string[];
  limit: number;
  headers: Headers | undefined;
  key: string | undefined;
  idempotent: boolean;
  scope: DeadlineScope | undefined;
  deadline: number;
  page: boolean;
  body: PreparedBody | undefined;
  fetch: FetchFunction | undefined;
}

/** The awaited part of `planCall`: a stream buffered (so it can be sent again) within the call's deadline, a connect-timeout fetch loaded. */
async function completePlan(
  downstream: Downstream,
  request: NormalizedRequest,
  init: FetchThroughInit | undefined,
  defaults: CreateFetchOptions | undefined,
  d: Decided,
  connectTimeout: number | undefined,
): Promise<FetchPlan> {
  if (d.body === undefined) {
    d.body = await buffer(request.body, d.limit, request.signal, d.scope?.signal, d.deadline, downstream.clock, downstream.name);
  }
  if (d.fetch === undefined) d.fetch = await connectTimeoutFetch(connectTimeout as number);
  return finishPlan(downstream, request, init, defaults, d);
}

/** The plan, once its body and its fetch function are known. */
function finishPlan(
  downstream: Downstream,
  request: NormalizedRequest,
  init: FetchThroughInit | undefined,
  defaults: CreateFetchOptions | undefined,
  d: Decided,
): FetchPlan {
  const { method, secretParams, limit, headers, key, idempotent, scope, deadline, page } = d;
  const body = d.body as PreparedBody;
  const fetch = d.fetch as FetchFunction;
  const name = downstream.name;
  const waitOnline = init?.waitForOnline ?? defaults?.waitForOnline ?? FETCH_DEFAULTS.waitForOnline;
  const waitVisible = init?.pauseWhileHidden ?? defaults?.pauseWhileHidden ?? FETCH_DEFAULTS.pauseWhileHidden;
  return {
    downstream,
    url: request.url,
    method,
    init: request.init,
    bareInit: request.bare,
    headers,
    body,
    fetch,
    callerSignal: request.signal ?? scope?.signal,
    deadline,
    bodyTimeoutMs: init?.bodyTimeoutMs ?? defaults?.bodyTimeoutMs,
    hasIdempotencyKey: key !== undefined,
    propagate: propagatesTo(request.url, init?.propagateHeaders ?? defaults?.propagateHeaders),
    // Trace context goes wherever the user's propagator sends it, except that an explicit
    // `propagateHeaders` rules, and a page sends it same-origin only (CORS preflight).
    propagateTrace:
      (init?.propagateHeaders ?? defaults?.propagateHeaders) === undefined && !page
        ? true
        : propagatesTo(request.url, init?.propagateHeaders ?? defaults?.propagateHeaders),
    throwHttpErrors: init?.throwHttpErrors ?? defaults?.throwHttpErrors ?? FETCH_DEFAULTS.throwHttpErrors,
    retryableStatuses: init?.retryableStatuses ?? defaults?.retryableStatuses,
    extractors: init?.bodyHintExtractors ?? defaults?.bodyHintExtractors ?? DEFAULT_BODY_HINT_EXTRACTORS,
    secretParams,
    oneShot: body.replayable
      ? undefined
      : { request: `${method} ${redactUrl(request.url, secretParams)}`, maxBufferedBody: limit, downstream: name },
    runsNoUserCode:
      init?.fetch === undefined &&
      defaults?.fetch === undefined &&
      (fetch !== platformFetch || globalThis.fetch === FETCH_AT_LOAD),
    callOptions: callOptionsOf(request, init, idempotent, deadline),
    hooked: undefined,
    waitFor: (waitOnline || waitVisible) && page ? { online: waitOnline, visible: waitVisible } : undefined,
  };
}

/** The call's options for `Downstream.call`, from the init (the hooks are `FetchCall`'s). */
function callOptionsOf(
  request: NormalizedRequest,
  init: FetchThroughInit | undefined,
  idempotent: boolean,
  deadline: number,
): CallOptions<Response> {
  // Every field present, in one order, whatever the init says: an object built up key by key
  // (or spread) is a different shape per request, and reading one costs ~1 µs (measured).
  const earliest = Math.min(init?.deadline ?? Number.POSITIVE_INFINITY, deadline);
  return {
    idempotent,
    key: init?.key ?? laneKeyOf(request.url),
    signal: request.signal,
    // Fixed before any buffering: the whole-call timeout counts the time spent buffering the body.
    deadline: earliest === Number.POSITIVE_INFINITY ? undefined : earliest,
    timeoutMs: init?.timeoutMs,
    verify: init?.verify,
    fallback: init?.fallback,
    budgetKey: init?.budgetKey,
  };
}

/** True when `init` carries one of kindly's own keys (only then is it checked). */
function needsValidation(init: FetchThroughInit): boolean {
  if (typeof init !== 'object') return true;
  for (const name in init) if (KINDLY_KEYS.has(name)) return true;
  return false;
}

function validate(options: FetchThroughInit, subject: string, onlyOptions: boolean): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`${subject}: expected an options object`);
  const v = new OptionsValidator(subject);
  if (onlyOptions) v.knownKeys(options, OPTION_KEYS);
  v.duration('maxBufferedBody', options.maxBufferedBody)
    .duration('connectTimeoutMs', options.connectTimeoutMs, { min: 1 })
    .duration('bodyTimeoutMs', options.bodyTimeoutMs, { min: 1 })
    .duration('timeoutMs', options.timeoutMs, { min: 0 })
    .func('fetch', options.fetch)
    .func('verify', options.verify)
    .func('fallback', options.fallback);
  if (options.deadline !== undefined)
    v.check(
      typeof options.deadline === 'number' && !Number.isNaN(options.deadline),
      `Expected \`deadline\` to be a number, got ${String(options.deadline)}`,
    );
  checkPropagateHeaders(v, options.propagateHeaders);
  for (const name of ['throwHttpErrors', 'waitForOnline', 'pauseWhileHidden', 'idempotent'] as const) {
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
  /** `fetch`'s init without kindly's keys, the headers, the body and the signal (a fresh object). */
  init: RequestInit;
  /** The request's headers as given (copied later, once). */
  headers: HeadersInit | undefined;
  body: BodyInit | null | undefined;
  /** The caller's signal (init's, else the Request's). */
  signal: AbortSignal | undefined;
  method: string;
  /** `init` has no key at all. */
  bare: boolean;
}

/**
 * Turns `(input, init)` into a URL and one init, the way `fetch` combines them: a `Request`'s
 * fields are the defaults, the init's fields override them. Working from URL + init (never
 * re-sending a `Request` object) keeps one code path for every attempt and for every fetch
 * implementation. Headers, body and signal are kept apart from the rest of the init (each
 * attempt sets its own), so nothing is deleted from it later: a deleted key would turn the
 * object into a slow dictionary one.
 */
function normalize(input: RequestInfo | URL, options: FetchThroughInit | undefined): NormalizedRequest {
  const init: RequestInit = {};
  let url: string;
  let headers: HeadersInit | undefined;
  let body: BodyInit | null | undefined;
  let signal: AbortSignal | null | undefined;
  let bare = true;
  if (typeof input === 'string') url = input;
  else if (input instanceof URL) url = input.href;
  else {
    const r = input as Request;
    url = r.url;
    bare = false;
    init.method = r.method;
    headers = r.headers;
    if (r.body !== null) body = r.body;
    init.redirect = r.redirect;
    init.credentials = r.credentials;
    init.cache = r.cache;
    init.referrer = r.referrer;
    init.referrerPolicy = r.referrerPolicy;
    init.integrity = r.integrity;
    init.keepalive = r.keepalive;
    if (r.mode !== 'navigate') init.mode = r.mode;
    signal = r.signal;
  }
  if (options !== undefined) {
    for (const name of Object.keys(options)) {
      if (KINDLY_KEYS.has(name)) continue;
      const value = (options as Record<string, unknown>)[name];
      if (name === 'headers') headers = value as HeadersInit | undefined;
      else if (name === 'body') body = value as BodyInit | null | undefined;
      else if (name === 'signal') signal = value as AbortSignal | null | undefined;
      else {
        (init as Record<string, unknown>)[name] = value;
        bare = false;
      }
    }
  }
  return { url, init, headers, body, signal: signal ?? undefined, method: init.method ?? 'GET', bare };
}

/** Looked up at call time, so a fetch installed later (polyfill, test double) is used. */
const platformFetch: FetchFunction = (input, init) => globalThis.fetch(input, init);

/**
 * The platform's `fetch` as it was when kindly loaded. Another one installed since (a test
 * double, a wrapper) may be user code making nested kindly calls: its attempts keep their
 * deadline scope (see `runsNoUserCode` in FetchPlan).
 */
const FETCH_AT_LOAD: unknown = (globalThis as { fetch?: unknown }).fetch;

/**
 * The request's headers, copied once. A header the platform refuses (a control character in
 * a value) rejects without quoting it: the value may be a credential.
 */
function requestHeaders(headers: HeadersInit | undefined): Headers {
  try {
    return new Headers(headers);
  } catch {
    throw new TypeError(
      'fetch: the request headers are invalid (a name or value with characters HTTP does not allow); values are not shown, as they may be credentials',
    );
  }
}

/**
 * The call's deadline as `Downstream.call` will compute it (the same `callDeadline`), fixed
 * now: monotonic ms, `Infinity` for none. The clock is read only when a timeout applies.
 */
function fetchDeadline(downstream: Downstream, init: FetchThroughInit | undefined, scope: DeadlineScope | undefined): number {
  const timeoutMs = init?.timeoutMs ?? downstream.totalTimeoutMs;
  const now = timeoutMs === undefined ? 0 : downstream.clock.monotonic();
  return callDeadline(now, scope?.deadline, init?.deadline, timeoutMs);
}

/** Buffers a stream body, stopped by either signal or the deadline (nothing hangs). */
async function buffer(
  source: unknown,
  limit: number,
  own: AbortSignal | undefined,
  outer: AbortSignal | undefined,
  deadline: number,
  clock: Clock,
  downstream: string,
): Promise<PreparedBody> {
  const link = own !== undefined && outer !== undefined && own !== outer ? linkSignals(own, outer) : undefined;
  const signal = link?.signal ?? own ?? outer;
  try {
    return await prepareBody(source, limit, {
      ...(signal === undefined ? {} : { signal }),
      ...(deadline === Number.POSITIVE_INFINITY ? {} : { deadline, clock }),
      downstream,
    });
  } finally {
    link?.dispose();
  }
}
