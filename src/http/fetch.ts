import { classifyError } from '../classify/classify-error.js';
import { classifyStatus, isInFlightConflict } from '../classify/http-status.js';
import { isIdempotentMethod } from '../classify/methods.js';
import type { Classification } from '../classify/outcome.js';
import { DeadlineExceededError, HttpStatusError, isGiveUpError, isHttpStatusError } from '../errors/errors.js';
import {
  type BodyHintExtractor,
  DEFAULT_BODY_HINT_EXTRACTORS,
  extractBodyHint,
  MAX_BODY_HINT_CHARS,
} from '../hints/body-hints.js';
import { readWaitHint } from '../hints/wait-hint.js';
import { OptionsValidator } from '../options/validate.js';
import type { CallContext } from '../runtime/attempt.js';
import { currentDeadlineScope, type DeadlineScope } from '../runtime/deadline-context.js';
import type { CallOptions, Downstream, Fallback } from '../runtime/downstream.js';
import { linkSignals } from '../runtime/link-signals.js';
import { describeHttpAttempt } from '../telemetry/http-attempt.js';
import type { Clock } from '../time/clock.js';
import { ATTEMPT_HEADER } from './attempt-header.js';
import { AttemptSignal, type BodyDeadline } from './attempt-signal.js';
import { connectTimeoutFetch, type FetchFunction } from './connect-timeout.js';
import { formatRequestTimeout, REQUEST_TIMEOUT_HEADER } from './deadline-header.js';
import { BodyTimeoutError, isRequestBodyNotReplayableError, RequestBodyNotReplayableError } from './errors.js';
import { chooseIdempotencyKey, IDEMPOTENCY_KEY_HEADER } from './idempotency-key.js';
import { laneKeyOf } from './lane-key.js';
import { pageEnvironment, waitUntilOnline, waitUntilVisible } from './online.js';
import { checkPropagateHeaders, type PropagateHeaders, propagatesTo } from './propagation.js';
import { DEFAULT_SECRET_QUERY_PARAMS, redactUrl, secretValues } from './redact.js';
import { DEFAULT_MAX_BUFFERED_BODY, type PreparedBody, prepareBody, preparedAsIs } from './request-body.js';
import { requestErrorFrom } from './request-error.js';
import {
  BODY_HINT_WAIT_MS,
  DRAIN_LIMIT,
  DRAIN_WAIT_MS,
  type Drain,
  drainBody,
  peekBody,
  rebuildResponse,
  withoutSecrets,
} from './response-body.js';

/** kindly's options for HTTP calls, set once with `createFetch` or per call in the init. */
export interface KindlyFetchOptions {
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
   * deadline bound the whole attempt in any case.
   */
  connectTimeout?: number;
  /**
   * ms allowed for reading the body of a response handed back (success, or the last failed
   * response on give-up), counted from its arrival; past it, reading the body rejects with
   * `BodyTimeoutError` and the connection is closed. Whatever this says, a call with a
   * deadline (`timeout`, the downstream's `totalTimeout`, an inherited deadline) must have
   * read its body by then: reading rejects with `DeadlineExceededError` at the deadline. The
   * attempt timeout bounds the wait for the response headers, not the body.
   * @default none (only the call's deadline, when it has one)
   */
  bodyTimeout?: number;
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
  'bodyTimeout',
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
  /** The response as the caller would get it (URL and every header). */
  response: Response;
  /** What the `HttpStatusError` exposes: same status and body, no URL, no secret header. */
  copy: Response;
  status: number;
  /** A wait hint found in the body, when the headers had none. */
  bodyHintMs: number | undefined;
  /** Set when the attempt is retried: the body read (and the connection freed) or dropped. */
  drained: Drain | undefined;
  /** The attempt's link to the caller's signal, released once the body is done with. */
  link: AttemptSignal | undefined;
}

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
export function fetchThrough(downstream: Downstream, input: RequestInfo | URL, init?: KindlyRequestInit): Promise<Response> {
  return send(downstream, input, init ?? undefined, undefined);
}

/**
 * A `fetch`-compatible function that sends every request through `downstream`'s pipeline,
 * with `options` as defaults for each call (a call's init overrides them). The options are
 * checked once, here.
 */
export function createFetch(
  downstream: Downstream,
  options?: KindlyFetchOptions,
): (input: RequestInfo | URL, init?: KindlyRequestInit) => Promise<Response> {
  if (options === undefined) return (input, init) => send(downstream, input, init ?? undefined, undefined);
  validate(options, 'createFetch', true);
  const defaults: KindlyFetchOptions = { ...options };
  return (input, init) => send(downstream, input, init ?? undefined, defaults);
}

async function send(
  downstream: Downstream,
  input: RequestInfo | URL,
  init: KindlyRequestInit | undefined,
  defaults: KindlyFetchOptions | undefined,
): Promise<Response> {
  if (init !== undefined && needsValidation(init)) validate(init, 'fetch', false);
  const request = normalize(input, init);
  const method = request.method.toUpperCase();
  const secretParams = init?.secretQueryParams ?? defaults?.secretQueryParams ?? DEFAULT_SECRET_QUERY_PARAMS;
  const throwHttpErrors = init?.throwHttpErrors ?? defaults?.throwHttpErrors ?? FETCH_DEFAULTS.throwHttpErrors;
  const limit = init?.maxBufferedBody ?? defaults?.maxBufferedBody ?? FETCH_DEFAULTS.maxBufferedBody;
  const retryableStatuses = init?.retryableStatuses ?? defaults?.retryableStatuses;
  const extractors = init?.bodyHintExtractors ?? defaults?.bodyHintExtractors ?? DEFAULT_BODY_HINT_EXTRACTORS;
  const propagateSetting = init?.propagateHeaders ?? defaults?.propagateHeaders;
  const propagate = propagatesTo(request.url, propagateSetting);
  // Trace context (only sent when the user's OpenTelemetry setup has a propagator) goes
  // wherever that setup sends it, except that `propagateHeaders` still rules when set, and a
  // page sends it same-origin only (a cross-origin custom header costs a CORS preflight).
  const propagateTrace = propagateSetting === undefined && pageEnvironment().window === undefined ? true : propagate;
  const clock = downstream.clock;
  const name = downstream.name;

  // One Headers per call when the request has headers (or gets a key): the first attempt
  // sends it as is, a retry sends a copy. Without any, each attempt sends a plain record,
  // which fetch reads once instead of copying a Headers of ours (measured: docs/benchmarks.md).
  let headers = request.init.headers === undefined ? undefined : requestHeaders(request.init.headers);
  const key = chooseIdempotencyKey(
    method,
    headers?.get(IDEMPOTENCY_KEY_HEADER),
    init?.idempotencyKey ?? defaults?.idempotencyKey,
  );
  if (key !== undefined) (headers ??= new Headers()).set(IDEMPOTENCY_KEY_HEADER, key);
  const hasKey = key !== undefined;
  const idempotent = init?.idempotent ?? (isIdempotentMethod(method) || hasKey);

  const scope = currentDeadlineScope();
  // After the attempt, the body is read under the caller's signal only (as with `fetch`).
  const callerSignal = request.signal ?? scope?.signal;
  /** The call's deadline (`Infinity`: none), fixed now: it also bounds buffering and reading the body. */
  const deadline = callDeadline(downstream, init, scope);
  const bodyTimeout = init?.bodyTimeout ?? defaults?.bodyTimeout;
  const bodyLimited = deadline !== Number.POSITIVE_INFINITY || bodyTimeout !== undefined;
  let prepared: PreparedBody | undefined = preparedAsIs(request.init.body);
  /** Set when a stream was buffered: the whole-call timeout counts the buffering. */
  let bufferedDeadline: number | undefined;
  if (prepared === undefined) {
    bufferedDeadline = deadline;
    prepared = await buffer(request.init.body, limit, request.signal, scope?.signal, bufferedDeadline, clock, name);
  }
  const body = prepared;
  const fetchOption = init?.fetch ?? defaults?.fetch;
  const connectTimeout = init?.connectTimeout ?? defaults?.connectTimeout;
  const underlying: FetchFunction =
    fetchOption ??
    (connectTimeout !== undefined && pageEnvironment().window === undefined
      ? await connectTimeoutFetch(connectTimeout)
      : platformFetch);

  /** Failed responses, by the `HttpStatusError` that stands for them. */
  let failures: WeakMap<object, FailedResponse> | undefined;
  /** Classifications of the `HttpRequestError` copies, read from the original errors. */
  let copied: WeakMap<object, Classification> | undefined;
  /** The latest failed response the call still holds: drained before a retry, handed back, or cancelled. */
  let lastFailure: FailedResponse | undefined;
  let secrets: string[] | undefined;

  /** This call's reading of what only it knows (see HttpCallHooks); undefined: the downstream's. */
  const classifyHere = (error: unknown, nowMs: number): Classification | undefined => {
    if (typeof error !== 'object' || error === null) return undefined;
    const copy = copied?.get(error);
    if (copy !== undefined) return copy;
    const failure = failures?.get(error);
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

  /** By when the body of a response arriving now must have been read, and with which error. */
  const bodyDeadline = (): BodyDeadline | undefined => {
    if (!bodyLimited) return undefined;
    const byTimeout = bodyTimeout === undefined ? Number.POSITIVE_INFINITY : clock.monotonic() + bodyTimeout;
    if (byTimeout < deadline) {
      return {
        at: byTimeout,
        clock,
        reason: () => new BodyTimeoutError(bodyTimeout as number, { outcome: 'unknown', downstream: name }),
      };
    }
    return { at: deadline, clock, reason: () => new DeadlineExceededError({ outcome: 'unknown', downstream: name }) };
  };

  const notReplayable = (attempt: number, outcome: 'failed' | 'unknown', cause: unknown) =>
    new RequestBodyNotReplayableError(`${method} ${redactUrl(request.url, secretParams)}`, limit, {
      outcome,
      attempts: attempt,
      downstream: name,
      cause,
    });

  /**
   * A one-shot body cannot be sent again: when the pipeline would retry this failure (same
   * classification as it will use), stop it with a clear error instead.
   */
  const oneShot = (error: unknown, attempt: number): unknown => {
    if (body.replayable) return error;
    const c = classifyHere(error, clock.now()) ?? downstream.classify(error);
    if (!c.retryable || c.dontRetry) return error;
    return notReplayable(attempt, c.outcome, error);
  };

  /** The fetch implementation's error, as errors and events may carry it. */
  const safeCopy = (error: unknown, attempt: number): unknown => {
    const classification = downstream.classify(error);
    secrets ??= secretValues(request.url, secretParams, headers);
    const copy = requestErrorFrom(error, {
      method,
      url: request.url,
      secretParams,
      secrets,
      outcome: classification.outcome,
      attempts: attempt,
      downstream: name,
    });
    (copied ??= new WeakMap()).set(copy, classification);
    return copy;
  };

  const operation = async (ctx: CallContext): Promise<Response> => {
    const previous = lastFailure;
    lastFailure = undefined;
    if (previous !== undefined) {
      // Let the previous attempt's connection go back to the pool before asking for one, or
      // the pool opens a second connection while the first is still busy with the old body;
      // a body still arriving after the backoff and DRAIN_WAIT_MS more is cancelled instead.
      if (previous.drained === undefined) discard(previous);
      else if (!previous.drained.settled) await settle(previous.drained, ctx.signal, clock);
      previous.link?.release();
    }
    // Never reached through oneShot; a guard in case a classifier upstream of it changes its mind.
    if (!body.replayable && ctx.attempt > 1) throw notReplayable(ctx.attempt, 'failed', undefined);
    let attemptHeaders: Headers | Record<string, string>;
    if (headers === undefined) {
      attemptHeaders = {};
      if (propagate) {
        attemptHeaders[ATTEMPT_HEADER] = String(ctx.attempt - 1);
        if (ctx.deadline !== undefined) attemptHeaders[REQUEST_TIMEOUT_HEADER] = formatRequestTimeout(ctx.timeLeft());
      }
    } else {
      attemptHeaders = ctx.attempt === 1 ? headers : new Headers(headers);
      if (propagate) {
        attemptHeaders.set(ATTEMPT_HEADER, String(ctx.attempt - 1));
        if (ctx.deadline !== undefined) attemptHeaders.set(REQUEST_TIMEOUT_HEADER, formatRequestTimeout(ctx.timeLeft()));
      }
    }
    // Only while kindly-calls/otel instruments the downstream: span attributes and `traceparent`.
    if (ctx.telemetry !== undefined) {
      const target = attemptHeaders;
      const set = (name: string, value: string) => {
        if (target instanceof Headers) target.set(name, value);
        else target[name] = value;
      };
      describeHttpAttempt(ctx.telemetry, method, redactUrl(request.url, secretParams), propagateTrace ? set : undefined);
    }
    const link = callerSignal === undefined && !bodyLimited ? undefined : new AttemptSignal(ctx.signal, callerSignal);
    const attemptInit: RequestInit & { duplex?: 'half' } = {
      ...request.init,
      headers: attemptHeaders,
      signal: link === undefined ? ctx.signal : link.signal,
    };
    if (body.body === undefined || body.body === null) delete attemptInit.body;
    else attemptInit.body = body.body as BodyInit;
    if (!body.replayable) attemptInit.duplex = 'half';

    let response: Response;
    try {
      response = await underlying(request.url, attemptInit);
    } catch (error) {
      link?.release();
      // The attempt already ended (its timeout, the deadline, the caller): this value goes nowhere.
      if (ctx.signal.aborted) throw error;
      throw oneShot(safeCopy(error, ctx.attempt), ctx.attempt);
    }
    const status = response.status;
    ctx.telemetry?.setAttribute('http.response.status_code', status);
    const reading = classifyStatus(status, retryableStatuses === undefined ? undefined : { retryableStatuses });
    if (reading === undefined) {
      link?.handOver(response, bodyDeadline());
      return response;
    }

    const keyed409 = isInFlightConflict(status, hasKey);
    let bodyHintMs: number | undefined;
    if ((reading.retryable || keyed409) && extractors.length > 0) {
      const found = await bodyHint(response, clock, extractors, reading.throttled, ctx);
      bodyHintMs = found.hintMs;
      response = found.response;
    }
    if (ctx.signal.aborted) {
      // Ended while the hint was read; nobody will get this response.
      link?.release();
      response.body?.cancel().catch(() => undefined);
      throw ctx.signal.reason;
    }
    link?.handOver(response, bodyDeadline());
    const copy = withoutSecrets(response, secretParams);
    const error = new HttpStatusError(status, {
      outcome: reading.outcome,
      attempts: ctx.attempt,
      downstream: name,
      response: copy,
    });
    const failure: FailedResponse = { response, copy, status, bodyHintMs, drained: undefined, link };
    (failures ??= new WeakMap()).set(error, failure);
    lastFailure = failure;
    throw oneShot(error, ctx.attempt);
  };

  const failureOf = (error: unknown): FailedResponse | undefined => {
    if (typeof error !== 'object' || error === null) return undefined;
    return failures?.get(error) ?? (isRequestBodyNotReplayableError(error) ? failureOf(error.cause) : undefined);
  };

  const callOptions: CallOptions<Response> & HttpCallHooks = {
    idempotent,
    key: init?.key ?? laneKeyOf(request.url),
    classify: classifyHere,
    onAttemptError: (error, { willRetry }) => {
      if (!willRetry) return;
      const failure = failures?.get(error as object);
      if (failure !== undefined) failure.drained = drainBody(failure.response, DRAIN_LIMIT);
    },
    // Hedging: an answer that lost the race is never read; let its connection go.
    onDiscard: (answer) => {
      if ('value' in answer) {
        answer.value.body?.cancel().catch(() => undefined);
        return;
      }
      const failure = failures?.get(answer.error as object);
      if (failure !== undefined) {
        if (lastFailure === failure) lastFailure = undefined;
        discard(failure);
      }
    },
  };
  if (request.signal !== undefined) callOptions.signal = request.signal;
  if (init !== undefined) {
    if (init.deadline !== undefined) callOptions.deadline = init.deadline;
    if (init.timeout !== undefined) callOptions.timeout = init.timeout;
    if (init.verify !== undefined) callOptions.verify = init.verify;
    if (init.fallback !== undefined) callOptions.fallback = init.fallback;
    if (init.budgetKey !== undefined) callOptions.budgetKey = init.budgetKey;
  }
  // The whole-call timeout counts the time spent buffering the body.
  if (bufferedDeadline !== undefined && bufferedDeadline < (callOptions.deadline ?? Number.POSITIVE_INFINITY)) {
    callOptions.deadline = bufferedDeadline;
  }
  const waitOnline = init?.waitForOnline ?? defaults?.waitForOnline ?? FETCH_DEFAULTS.waitForOnline;
  const waitVisible = init?.pauseWhileHidden ?? defaults?.pauseWhileHidden ?? FETCH_DEFAULTS.pauseWhileHidden;
  if ((waitOnline || waitVisible) && pageEnvironment().window !== undefined) {
    callOptions.beforeAttempt = ({ signal, deadline }) => waitUntilReady(waitOnline, waitVisible, signal, deadline, clock);
  }

  let value: Response;
  try {
    value = await downstream.call(operation, callOptions);
  } catch (error) {
    const last = lastFailure;
    lastFailure = undefined;
    const failure = isGiveUpError(error) ? failureOf(error.cause) : undefined;
    // A status injected by kindly-calls/chaos ends the call as a real one would: with its response.
    if (failure === undefined && !throwHttpErrors && isGiveUpError(error) && isInjectedStatus(error.cause)) {
      if (last !== undefined) discard(last);
      return error.cause.response as Response;
    }
    if (failure === undefined) {
      // An abort, a network failure, a fallback that threw: nobody gets the last response.
      if (last !== undefined) discard(last);
      throw error;
    }
    if (throwHttpErrors) {
      // The error's response shares the body with the caller's; a drain still running holds it.
      failure.drained?.cancel();
      throw error;
    }
    // The call stopped after a retry was planned (verify, deadline, breaker): the body was
    // being drained meanwhile. Hand it back at once — read, or what was read plus the rest —
    // never waiting on a body that may not end.
    if (failure.drained !== undefined) return rebuildResponse(failure.response, failure.drained.take());
    return failure.response;
  }
  // A failed response still held here was answered by the fallback: let its connection go.
  const last = lastFailure;
  lastFailure = undefined;
  if (last !== undefined && value !== last.copy && value !== last.response) discard(last);
  return value;
}

/** An `HttpStatusError` that kindly-calls/chaos made up (it carries `chaos: true` and a `Response`). */
function isInjectedStatus(error: unknown): error is HttpStatusError {
  return isHttpStatusError(error) && (error as { chaos?: unknown }).chaos === true && error.response instanceof Response;
}

/** True when `init` carries one of kindly's own keys (only then is it checked). */
function needsValidation(init: KindlyRequestInit): boolean {
  if (typeof init !== 'object') return true;
  for (const name in init) if (KINDLY_KEYS.has(name)) return true;
  return false;
}

function validate(options: KindlyRequestInit, subject: string, onlyOptions: boolean): void {
  if (options === null || typeof options !== 'object') throw new TypeError(`${subject}: expected an options object`);
  const v = new OptionsValidator(subject);
  if (onlyOptions) v.knownKeys(options, OPTION_KEYS);
  v.duration('maxBufferedBody', options.maxBufferedBody)
    .duration('connectTimeout', options.connectTimeout, { min: 1 })
    .duration('bodyTimeout', options.bodyTimeout, { min: 1 })
    .duration('timeout', options.timeout, { min: 0 })
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
function normalize(input: RequestInfo | URL, options: KindlyRequestInit | undefined): NormalizedRequest {
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
  if (options !== undefined) {
    for (const name of Object.keys(options)) {
      if (!KINDLY_KEYS.has(name)) (init as Record<string, unknown>)[name] = (options as Record<string, unknown>)[name];
    }
  }
  const signal = init.signal ?? undefined;
  delete init.signal;
  return { url, init, signal, method: init.method ?? 'GET' };
}

/** Looked up at call time, so a fetch installed later (polyfill, test double) is used. */
const platformFetch: FetchFunction = (input, init) => globalThis.fetch(input, init);

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

/** The call's deadline as `Downstream.call` will compute it, fixed now (monotonic ms; `Infinity` for none). */
function callDeadline(downstream: Downstream, init: KindlyRequestInit | undefined, scope: DeadlineScope | undefined): number {
  let deadline = scope?.deadline ?? Number.POSITIVE_INFINITY;
  if (init?.deadline !== undefined && init.deadline < deadline) deadline = init.deadline;
  const timeout = init?.timeout ?? downstream.totalTimeout;
  if (timeout !== undefined) deadline = Math.min(deadline, downstream.clock.monotonic() + timeout);
  return deadline;
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

/**
 * Waits for `drain` to finish, for at most DRAIN_WAIT_MS or until `signal` aborts; then
 * cancels it.
 */
function settle(drain: Drain, signal: AbortSignal, clock: Clock): Promise<void> {
  if (signal.aborted) {
    drain.cancel();
    return Promise.resolve();
  }
  return new Promise<void>((resolve) => {
    const stop = () => {
      drain.cancel(); // settles `bytes`, which resolves this promise
    };
    const cancelTimer = clock.schedule(DRAIN_WAIT_MS, stop);
    signal.addEventListener('abort', stop);
    void drain.bytes.then(() => {
      cancelTimer();
      signal.removeEventListener('abort', stop);
      resolve();
    });
  });
}

/** Lets go of a failed response nobody will read: its drain stopped, or its body cancelled. */
function discard(failure: FailedResponse): void {
  failure.link?.release();
  if (failure.drained !== undefined) {
    failure.drained.cancel();
    return;
  }
  const body = failure.response.body;
  if (body !== null && !body.locked) body.cancel().catch(() => undefined);
}

/** On Node (no page) always; in a page only for requests to the page's own origin. */
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

/**
 * A wait hint in the body of a failed response, when its headers have none. Read only from
 * a JSON or text body of at most MAX_BODY_HINT_CHARS bytes (by `Content-Length`, when sent),
 * and only while it arrives within BODY_HINT_WAIT_MS and half the attempt's time left: a
 * slow body gives no hint rather than a timed-out attempt. Returns the response to use from
 * now on (the body peeked at, followed by the rest; see `peekBody`).
 */
async function bodyHint(
  response: Response,
  clock: Clock,
  extractors: readonly BodyHintExtractor[],
  throttled: boolean | undefined,
  ctx: CallContext,
): Promise<{ hintMs: number | undefined; response: Response }> {
  const now = clock.now();
  const none = { hintMs: undefined, response };
  if (readWaitHint(response.headers, now, { throttled: throttled === true }) !== undefined) return none;
  const type = response.headers.get('content-type') ?? '';
  if (!/json|text/i.test(type)) return none;
  const length = response.headers.get('content-length');
  if (length !== null && !(Number(length) <= MAX_BODY_HINT_CHARS)) return none;
  const waitMs = Math.min(BODY_HINT_WAIT_MS, ctx.timeLeft() / 2);
  const peeked = await peekBody(response, { maxBytes: MAX_BODY_HINT_CHARS, waitMs, clock, signal: ctx.signal });
  const text = peeked.text;
  const hintMs = text === undefined || text.length === 0 ? undefined : extractBodyHint(text, now, extractors);
  return { hintMs, response: peeked.response };
}
