import { classifyStatus, isInFlightConflict } from '../classify/http-status.js';
import { isIdempotentMethod } from '../classify/methods.js';
import type { Classification } from '../classify/outcome.js';
import { readProperty, readString } from '../classify/safe-read.js';
import { HttpStatusError, isGiveUpError } from '../errors/errors.js';
import { ATTEMPT_HEADER } from '../http/attempt-header.js';
import { formatRequestTimeout, REQUEST_TIMEOUT_HEADER } from '../http/deadline-header.js';
import { HttpRequestError, isRequestBodyNotReplayableError, RequestBodyNotReplayableError } from '../http/errors.js';
import { chooseIdempotencyKey, IDEMPOTENCY_KEY_HEADER } from '../http/idempotency-key.js';
import { laneKeyOf } from '../http/lane-key.js';
import { checkPropagateHeaders, type PropagateHeaders, propagatesTo } from '../http/propagation.js';
import { DEFAULT_SECRET_QUERY_PARAMS, redactHeaderRecord, redactUrl, redactUrlIn } from '../http/redact.js';
import { OptionsValidator } from '../options/validate.js';
import type { CallContext } from '../runtime/attempt.js';
import type { CallOptions, Downstream } from '../runtime/downstream.js';

/** The parts of axios' `AxiosHeaders` the adapter uses. */
interface HeadersLike {
  get(name: string): unknown;
  set(name: string, value: string): unknown;
  has(name: string): boolean;
}

/** The parts of axios' request config the adapter reads (structural: no type dependency on axios). */
export interface AxiosConfigLike {
  method?: string;
  url?: string;
  baseURL?: string;
  headers: HeadersLike;
  data?: unknown;
  signal?: unknown;
  adapter?: unknown;
}

/** The parts of an axios response the adapter reads. */
interface AxiosResponseLike {
  status: number;
  statusText?: string;
  headers?: unknown;
  data?: unknown;
}

export type AxiosAdapterLike = (config: AxiosConfigLike) => Promise<AxiosResponseLike>;

/** An axios instance (`axios` itself or `axios.create()`), structurally. */
export interface AxiosInstanceLike {
  defaults: { adapter?: unknown };
}

/** Options of {@link kindlyAxios}. */
export interface KindlyAxiosOptions {
  /**
   * Give every request whose method is not idempotent (POST, PATCH) an `Idempotency-Key`,
   * generated once per request and identical on every attempt. A key the request already
   * carries is always kept, and makes the request count as idempotent.
   * @default false
   */
  idempotencyKey?: boolean;
  /**
   * Who gets `x-retry-attempt` and `x-request-timeout-ms`: `true`, `false`, or
   * `{ hosts: [...] }`. By default only requests made inside a deadline scope (a request
   * served by kindly's middleware), and in a page only same-origin ones. See {@link PropagateHeaders}.
   * @default inside a deadline scope only (same origin only in a page)
   */
  propagateHeaders?: PropagateHeaders;
  /** Query parameters never written into errors or events. @default DEFAULT_SECRET_QUERY_PARAMS */
  secretQueryParams?: readonly string[];
  /**
   * The adapter that sends each attempt. By default, the instance's own (resolved with
   * axios' `getAdapter`, loaded on first use).
   */
  adapter?: AxiosAdapterLike;
}

const KEYS = ['idempotencyKey', 'propagateHeaders', 'secretQueryParams', 'adapter'] as const;

/**
 * Sends every request of an axios instance through `downstream`'s pipeline, by
 * wrapping its adapter — the layer where axios itself makes one HTTP exchange, below
 * interceptors and response transforms, so those still run once per request.
 *
 * - Classification from the response status (retryable: 408, 429, 500, 502, 503, 504; never
 *   401/403/404), `Retry-After` and the other hints from the response headers, body hints
 *   from the response data, network codes from the error.
 * - Idempotency by method: POST and PATCH are retried after an `unknown` outcome only with an
 *   `Idempotency-Key` header (see `idempotencyKey`); `failed` outcomes always may be.
 * - When retrying gives up on a status, the request rejects with axios' own `AxiosError` of
 *   the last attempt (`error.response` as usual). A network failure rejects with kindly's
 *   `GiveUpError`, whose `cause` is an `HttpRequestError` — a copy of axios' error without its
 *   `config` (which holds the Authorization header).
 * - Stream bodies (`data` a Node stream) cannot be replayed: they are sent once, and a retry
 *   they would need fails with `RequestBodyNotReplayableError`.
 *
 * Returns the instance.
 */
export function kindlyAxios<T extends AxiosInstanceLike>(instance: T, downstream: Downstream, options?: KindlyAxiosOptions): T {
  const v = new OptionsValidator('kindlyAxios');
  v.knownKeys(options, KEYS).func('adapter', options?.adapter);
  v.check(typeof instance?.defaults === 'object' && instance.defaults !== null, 'Expected an axios instance (with `defaults`)');
  v.check(
    options?.idempotencyKey === undefined || typeof options.idempotencyKey === 'boolean',
    `Expected \`idempotencyKey\` to be a boolean, got ${String(options?.idempotencyKey)}`,
  );
  checkPropagateHeaders(v, options?.propagateHeaders);
  v.done();
  const original = options?.adapter ?? instance.defaults.adapter;
  let resolved: Promise<AxiosAdapterLike> | undefined;
  const resolve = (config: AxiosConfigLike): Promise<AxiosAdapterLike> => {
    if (typeof original === 'function') return Promise.resolve(original as AxiosAdapterLike);
    resolved ??= import('axios').then((axios) => {
      const getAdapter = (axios as unknown as { getAdapter: (a: unknown, c: unknown) => AxiosAdapterLike }).getAdapter;
      return getAdapter(original, config);
    });
    return resolved;
  };
  const settings = {
    idempotencyKey: options?.idempotencyKey ?? false,
    propagate: options?.propagateHeaders,
    secrets: options?.secretQueryParams ?? DEFAULT_SECRET_QUERY_PARAMS,
  };
  instance.defaults.adapter = async (config: AxiosConfigLike) => send(await resolve(config), config, downstream, settings);
  return instance;
}

interface Settings {
  idempotencyKey: boolean;
  propagate: PropagateHeaders | undefined;
  secrets: readonly string[];
}

async function send(
  adapter: AxiosAdapterLike,
  config: AxiosConfigLike,
  downstream: Downstream,
  settings: Settings,
): Promise<AxiosResponseLike> {
  const method = (config.method ?? 'get').toUpperCase();
  const existing = config.headers.get(IDEMPOTENCY_KEY_HEADER);
  const key = chooseIdempotencyKey(method, typeof existing === 'string' ? existing : undefined, settings.idempotencyKey);
  if (key !== undefined && existing !== key) config.headers.set(IDEMPOTENCY_KEY_HEADER, key);
  const hasKey = key !== undefined;
  const replayable = !isStream(config.data);
  const url = fullUrl(config);
  const propagate = propagatesTo(url, settings.propagate);

  // What kindly's pipeline sees instead of axios' errors, and the axios error each stands for.
  const axiosErrors = new WeakMap<object, unknown>();
  const classifications = new WeakMap<object, Classification>();
  const statuses = new WeakMap<object, number>();

  /** This request's reading of the errors it made (see fetch's HttpCallHooks); undefined: the downstream's. */
  const classifyHere = (error: unknown): Classification | undefined => {
    if (typeof error !== 'object' || error === null) return undefined;
    const copied = classifications.get(error);
    if (copied !== undefined) return copied;
    const status = statuses.get(error);
    if (status !== undefined && isInFlightConflict(status, hasKey)) return { ...downstream.classify(error), retryable: true };
    return undefined;
  };

  const notReplayable = (attempt: number, outcome: 'failed' | 'unknown', cause: unknown) =>
    new RequestBodyNotReplayableError(`${method} ${redactUrl(url, settings.secrets)}`, undefined, {
      outcome,
      attempts: attempt,
      downstream: downstream.name,
      cause,
    });

  /** A stream body cannot be sent again: when the pipeline would retry, stop with a clear error. */
  const oneShot = (error: KindlyErrorLike, original: unknown, attempt: number): unknown => {
    if (replayable) return error;
    const c = classifyHere(error) ?? downstream.classify(error);
    if (!c.retryable || c.dontRetry) return error;
    const wrapped = notReplayable(attempt, c.outcome, error);
    axiosErrors.set(wrapped, original);
    return wrapped;
  };

  const operation = async (ctx: CallContext): Promise<AxiosResponseLike> => {
    // Never reached through oneShot; a guard in case a classifier upstream of it changes its mind.
    if (!replayable && ctx.attempt > 1) throw notReplayable(ctx.attempt, 'failed', undefined);
    const headers = copyHeaders(config.headers);
    if (propagate) {
      headers.set(ATTEMPT_HEADER, String(ctx.attempt - 1));
      if (ctx.deadline !== undefined) headers.set(REQUEST_TIMEOUT_HEADER, formatRequestTimeout(ctx.timeLeft()));
    }
    try {
      return await adapter({ ...config, headers, signal: ctx.signal });
    } catch (error) {
      if (isCancellation(error)) throw error;
      const response = readResponse(error);
      // A response whose status is no failure (a 200 whose body was cut off) failed on the
      // network: classified by its error code, like a failure without a response.
      const reading = response === undefined ? undefined : classifyStatus(response.status);
      if (response !== undefined && reading !== undefined) {
        const statusError = new HttpStatusError(response.status, {
          outcome: reading.outcome,
          attempts: ctx.attempt,
          downstream: downstream.name,
          // A copy without `config` and `request` (they carry the request's headers), and
          // without `Set-Cookie` among the response headers.
          response: {
            status: response.status,
            statusText: response.statusText,
            headers: redactHeaderRecord(response.headers, settings.secrets),
            data: response.data,
          },
        });
        axiosErrors.set(statusError, error);
        statuses.set(statusError, response.status);
        throw oneShot(statusError, error, ctx.attempt);
      }
      const classification = downstream.classify(error);
      const code = readString(error, 'code');
      const message = redactUrlIn(readString(error, 'message') ?? 'request failed', url, settings.secrets);
      const copy = new HttpRequestError(method, redactUrl(url, settings.secrets), code, message, {
        outcome: classification.outcome,
        attempts: ctx.attempt,
        downstream: downstream.name,
      });
      classifications.set(copy, classification);
      throw oneShot(copy, error, ctx.attempt);
    }
  };

  const callOptions: CallOptions<AxiosResponseLike> & {
    classify?: (error: unknown, nowMs: number) => Classification | undefined;
  } = {
    idempotent: isIdempotentMethod(method) || hasKey,
    key: laneKeyOf(url),
    classify: classifyHere,
    onAttemptError: (error, { willRetry }) => {
      if (willRetry) discard(readProperty(readProperty(error, 'response'), 'data'));
    },
  };
  const signal = config.signal;
  if (isAbortSignal(signal)) callOptions.signal = signal;

  try {
    return await downstream.call(operation, callOptions);
  } catch (error) {
    if (!isGiveUpError(error)) throw error;
    const cause = error.cause;
    const last = axiosErrorOf(cause, axiosErrors);
    // Gave up on a status: axios' own error, as without kindly (interceptors read `error.response`).
    if (last !== undefined && readResponse(last) !== undefined) throw last;
    throw error;
  }
}

type KindlyErrorLike = HttpStatusError | HttpRequestError;

function axiosErrorOf(cause: unknown, map: WeakMap<object, unknown>): unknown {
  if (typeof cause !== 'object' || cause === null) return undefined;
  const direct = map.get(cause);
  if (direct !== undefined) return direct;
  return isRequestBodyNotReplayableError(cause) ? axiosErrorOf(cause.cause, map) : undefined;
}

function copyHeaders(headers: HeadersLike): HeadersLike {
  const Ctor = (headers as { constructor?: unknown }).constructor;
  if (typeof Ctor === 'function' && Ctor !== Object) return new (Ctor as new (from: unknown) => HeadersLike)(headers);
  const copy: Record<string, unknown> = { ...(headers as unknown as Record<string, unknown>) };
  return {
    get: (name) => copy[name] ?? copy[name.toLowerCase()],
    set: (name, value) => {
      copy[name] = value;
    },
    has: (name) => name in copy || name.toLowerCase() in copy,
  };
}

function fullUrl(config: AxiosConfigLike): string {
  const url = config.url ?? '';
  const base = config.baseURL;
  if (base === undefined || /^[a-z][a-z\d+\-.]*:\/\//i.test(url)) return url;
  return `${base.replace(/\/+$/, '')}/${url.replace(/^\/+/, '')}`;
}

function readResponse(error: unknown): AxiosResponseLike | undefined {
  const response = readProperty(error, 'response');
  return typeof readProperty(response, 'status') === 'number' ? (response as AxiosResponseLike) : undefined;
}

function isCancellation(error: unknown): boolean {
  const name = readString(error, 'name');
  const code = readString(error, 'code');
  return name === 'CanceledError' || name === 'AbortError' || code === 'ERR_CANCELED';
}

function isStream(data: unknown): boolean {
  if (typeof data !== 'object' || data === null) return false;
  return (
    typeof (data as { pipe?: unknown }).pipe === 'function' ||
    typeof (data as { getReader?: unknown }).getReader === 'function' ||
    typeof (data as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function'
  );
}

/** Lets go of a failed response's stream body (`responseType: 'stream'`) before a retry. */
function discard(data: unknown): void {
  try {
    if (typeof (data as { destroy?: unknown })?.destroy === 'function') (data as { destroy(): void }).destroy();
    else if (typeof (data as { cancel?: unknown })?.cancel === 'function') {
      (data as { cancel(): Promise<void> }).cancel().catch(() => undefined);
    }
  } catch {
    // Nothing to free.
  }
}
