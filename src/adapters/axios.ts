import { classifyStatus, isInFlightConflict } from '../classify/http-status.js';
import type { Classification } from '../classify/outcome.js';
import { readHeaders, readProperty, readString } from '../classify/safe-read.js';
import { HttpStatusError, isGiveUpError } from '../errors/errors.js';
import { HttpRequestError, isRequestBodyNotReplayableError } from '../http/errors.js';
import { IDEMPOTENCY_KEY_HEADER, requestIdempotency } from '../http/idempotency-key.js';
import { laneKeyOf } from '../http/lane-key.js';
import { notReplayable, type OneShotRequest, stopRetryOfOneShot } from '../http/one-shot.js';
import { checkPropagateHeaders, type PropagateHeaders, propagatesTo, setAttemptHeaders } from '../http/propagation.js';
import { DEFAULT_SECRET_QUERY_PARAMS, redactHeaderRecord, redactUrl, redactUrlIn } from '../http/redact.js';
import { OptionsValidator } from '../options/validate.js';
import type { CallContext } from '../runtime/attempt.js';
import type { CallOptions, Downstream } from '../runtime/downstream.js';
import { linkSignals } from '../runtime/link-signals.js';

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
  /** axios' legacy `CancelToken`: cancels the whole call, like `signal`. */
  cancelToken?: unknown;
  /** axios' `settle` rejects a response whose status this refuses. */
  validateStatus?: unknown;
  adapter?: unknown;
  /** axios' per-request timeout in ms (0: none): each attempt's timeout for this request. */
  timeout?: unknown;
}

/** The parts of an axios response the adapter reads. */
interface AxiosResponseLike {
  status: number;
  statusText?: string;
  headers?: unknown;
  data?: unknown;
  config?: unknown;
}

export type AxiosAdapterLike = (config: AxiosConfigLike) => Promise<AxiosResponseLike>;

/** An axios instance (`axios` itself or `axios.create()`), structurally. */
export interface AxiosInstanceLike {
  defaults: { adapter?: unknown };
}

/** Options of {@link axiosInterceptors}. */
export interface AxiosInterceptorsOptions {
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
 *   the last attempt (`error.response` as usual). What axios itself refuses — a status
 *   `validateStatus` does not accept (a 304, a 3xx with `maxRedirects: 0`), `maxContentLength`
 *   exceeded, too many redirects, a bad option — is not retried and rejects with axios' error.
 *   `error.config` and `response.config` are the request's own config (not the attempt's), so
 *   `client(error.config)` replays it with the caller's `signal`. A network failure rejects with kindly's
 *   `GiveUpError`, whose `cause` is an `HttpRequestError` — a copy of axios' error without its
 *   `config` (which holds the Authorization header).
 * - A status injected by kindly-calls/chaos ends the request as a real one would: settled as
 *   axios settles a response, so an `AxiosError` with that `response` (status, reason phrase,
 *   the fault's headers, no body) and the request's own `config` — or, when `validateStatus`
 *   accepts the status, the response itself.
 * - Stream bodies (`data` a Node stream) cannot be replayed: they are sent once, and a retry
 *   they would need fails with `RequestBodyNotReplayableError`.
 * - `signal` and `cancelToken` both cancel the whole call, backoff sleeps included.
 *
 * Returns the instance.
 */
export function axiosInterceptors<T extends AxiosInstanceLike>(
  instance: T,
  downstream: Downstream,
  options?: AxiosInterceptorsOptions,
): T {
  const v = new OptionsValidator('axiosInterceptors');
  v.knownKeys(options, KEYS).func('adapter', options?.adapter);
  v.check(typeof instance?.defaults === 'object' && instance.defaults !== null, 'Expected an axios instance (with `defaults`)');
  v.boolean('idempotencyKey', options?.idempotencyKey);
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

function send(
  adapter: AxiosAdapterLike,
  config: AxiosConfigLike,
  downstream: Downstream,
  settings: Settings,
): Promise<AxiosResponseLike> {
  return new AxiosCall(adapter, config, downstream, settings).run();
}

/**
 * One axios request through a downstream: each attempt (`attempt`), the copies kindly's
 * pipeline sees instead of axios' errors (`statusError`, `requestError`), and what the caller
 * gets on give-up (`run`). One small method per stage.
 */
class AxiosCall {
  private readonly method: string;
  private readonly url: string;
  private readonly hasKey: boolean;
  private readonly idempotent: boolean;
  private readonly replayable: boolean;
  private readonly propagate: boolean;
  private readonly oneShotRequest: OneShotRequest;
  /** The axios error each of kindly's copies stands for. */
  private readonly axiosErrors = new WeakMap<object, unknown>();
  /** Classifications of the network-error copies, read from axios' own errors. */
  private readonly classifications = new WeakMap<object, Classification>();
  private readonly statuses = new WeakMap<object, number>();
  /** axios' errors that axios itself refused to go on with: the caller gets them as they are. */
  private readonly refusals = new WeakSet<object>();
  /** The per-attempt configs handed to the adapter (kindly's signal and headers). */
  private readonly attemptConfigs = new WeakSet<object>();

  constructor(
    private readonly adapter: AxiosAdapterLike,
    private readonly config: AxiosConfigLike,
    private readonly downstream: Downstream,
    private readonly settings: Settings,
  ) {
    this.method = (config.method ?? 'get').toUpperCase();
    const existing = config.headers.get(IDEMPOTENCY_KEY_HEADER);
    const { key, idempotent } = requestIdempotency(
      this.method,
      typeof existing === 'string' ? existing : undefined,
      settings.idempotencyKey,
    );
    if (key !== undefined && existing !== key) config.headers.set(IDEMPOTENCY_KEY_HEADER, key);
    this.hasKey = key !== undefined;
    this.idempotent = idempotent;
    this.replayable = !isStream(config.data);
    this.url = fullUrl(config);
    this.propagate = propagatesTo(this.url, settings.propagate);
    this.oneShotRequest = {
      request: `${this.method} ${redactUrl(this.url, settings.secrets)}`,
      maxBufferedBody: undefined,
      downstream: downstream.name,
    };
  }

  async run(): Promise<AxiosResponseLike> {
    const options: CallOptions<AxiosResponseLike> = {
      idempotent: this.idempotent,
      key: laneKeyOf(this.url),
      classify: (error) => this.classify(error),
      onAttemptError: (error, { willRetry }) => {
        if (willRetry) discard(readProperty(readProperty(error, 'response'), 'data'));
      },
    };
    // axios' own per-request `timeout` is how long this request may take: it bounds each
    // attempt in place of the downstream's `attemptTimeoutMs`, which would otherwise cut a
    // request given 30 s at the 10 s default (the deadline still bounds both).
    const timeout = this.config.timeout;
    if (typeof timeout === 'number' && timeout >= 1 && timeout <= Number.MAX_SAFE_INTEGER) options.attemptTimeoutMs = timeout;
    const cancel = this.cancellation();
    if (cancel !== undefined) options.signal = cancel.signal;
    try {
      return this.handBack(await this.downstream.call((ctx) => this.attempt(ctx), options));
    } catch (error) {
      const injected = isGiveUpError(error) ? injectedStatusOf(error.cause) : undefined;
      if (injected !== undefined) return await this.settleInjected(injected);
      throw this.handBack(this.callerError(error));
    } finally {
      cancel?.dispose();
    }
  }

  /**
   * What cancels the whole call, sleeps included: the caller's `signal`, its `cancelToken`, or
   * both joined. A token is subscribed to only for this call, so a long-lived one keeps nothing.
   */
  private cancellation(): { signal: AbortSignal; dispose: () => void } | undefined {
    const signal = isAbortSignal(this.config.signal) ? this.config.signal : undefined;
    const token = cancelTokenSignal(this.config.cancelToken);
    if (token === undefined) return signal === undefined ? undefined : { signal, dispose: noop };
    if (signal === undefined) return token;
    const linked = linkSignals(signal, token.signal);
    return {
      signal: linked.signal,
      dispose: () => {
        linked.dispose();
        token.dispose();
      },
    };
  }

  /** What the caller gets for a call that failed. */
  private callerError(error: unknown): unknown {
    if (!isGiveUpError(error)) return error;
    const last = axiosErrorOf(error.cause, this.axiosErrors);
    if (last === undefined) return error;
    // Gave up on a status, or axios refused: axios' own error, as without kindly (interceptors
    // read `error.response` and `error.code`).
    if (readResponse(last) !== undefined || this.refusals.has(last as object)) return last;
    return error;
  }

  /**
   * What the caller gets for a call that gave up on a status kindly-calls/chaos injected: what
   * axios' `settle` makes of that response had the server sent it — the response when
   * `validateStatus` accepts its status, otherwise axios' own `AxiosError` with the same
   * message, code and fields as for a real one. The response has no `request` (none was sent)
   * and an empty body, read as axios reads an empty one (`''`); axios then runs its response
   * transforms and makes `AxiosHeaders` of the headers, as for any response.
   */
  private async settleInjected(injected: InjectedStatus): Promise<AxiosResponseLike> {
    const { status } = injected;
    const response = {
      status,
      statusText: injected.statusText,
      headers: injected.headers,
      data: '',
      config: this.config,
      request: undefined,
    };
    if (!this.refusesStatus(status)) return response;
    const AxiosError = await loadAxiosError();
    // axios' `settle`: ERR_BAD_REQUEST for a 4xx, ERR_BAD_RESPONSE for a 5xx.
    const code = status < 500 ? 'ERR_BAD_REQUEST' : 'ERR_BAD_RESPONSE';
    throw new AxiosError(`Request failed with status code ${status}`, code, this.config, undefined, response);
  }

  /**
   * Points `config` (of an error, a response, an error's response) back at the request's own
   * config: the attempt's holds kindly's attempt signal, which the caller cannot abort, and
   * kindly's headers, so replaying it (`client(error.config)` after a token refresh) would
   * escape the caller's cancellation.
   */
  private handBack<V>(value: V): V {
    for (const holder of [value, readProperty(value, 'response')]) {
      const config = readProperty(holder, 'config');
      if (typeof config !== 'object' || config === null || !this.attemptConfigs.has(config)) continue;
      try {
        (holder as { config: unknown }).config = this.config;
      } catch {
        // A frozen error or response: left as it is.
      }
    }
    return value;
  }

  /** This request's reading of the errors it made; `undefined`: the downstream's. */
  private classify(error: unknown): Classification | undefined {
    if (typeof error !== 'object' || error === null) return undefined;
    const copied = this.classifications.get(error);
    if (copied !== undefined) return copied;
    // An injected status is read as a real one is (a 409 with a key is an in-flight conflict).
    const status = this.statuses.get(error) ?? injectedStatusOf(error)?.status;
    if (status !== undefined && isInFlightConflict(status, this.hasKey)) {
      return { ...this.downstream.classify(error), retryable: true };
    }
    return undefined;
  }

  private async attempt(ctx: CallContext): Promise<AxiosResponseLike> {
    // Never reached through the one-shot guard; in case a classifier upstream of it changes its mind.
    if (!this.replayable && ctx.attempt > 1) throw notReplayable(this.oneShotRequest, ctx.attempt, 'failed', undefined);
    const headers = copyHeaders(this.config.headers);
    if (this.propagate) setAttemptHeaders((name, value) => headers.set(name, value), ctx);
    const config = { ...this.config, headers, signal: ctx.signal };
    this.attemptConfigs.add(config);
    try {
      return await this.adapter(config);
    } catch (error) {
      if (isCancellation(error)) throw error;
      const response = readResponse(error);
      const reading = response === undefined ? undefined : classifyStatus(response.status);
      if (reading === undefined && this.refusedByAxios(error, response)) throw this.refusal(error, response, ctx.attempt);
      // A response whose status is no failure, and that axios did not refuse (a 200 whose body
      // was cut off), failed on the network: classified by its error code, like a failure
      // without a response.
      if (response === undefined || reading === undefined)
        throw this.oneShot(this.requestError(error, ctx.attempt), error, ctx.attempt);
      const copy = this.statusError(response, reading.outcome, ctx.attempt);
      // On give-up the caller gets axios' own error for the last status.
      this.axiosErrors.set(copy, error);
      throw this.oneShot(copy, error, ctx.attempt);
    }
  }

  /**
   * What the pipeline sees for a failed status: a copy without `config` and `request` (they
   * carry the request's headers), and without `Set-Cookie` among the response headers.
   */
  private statusError(response: AxiosResponseLike, outcome: 'failed' | 'unknown', attempt: number): HttpStatusError {
    const error = new HttpStatusError(response.status, {
      outcome,
      attempts: attempt,
      downstream: this.downstream.name,
      response: {
        status: response.status,
        statusText: response.statusText,
        headers: redactHeaderRecord(response.headers, this.settings.secrets),
        data: response.data,
      },
    });
    this.statuses.set(error, response.status);
    return error;
  }

  /**
   * Did axios itself refuse to go on — not the network, not a failure status? A status its
   * `validateStatus` does not accept (a 304, a 3xx with `maxRedirects: 0`), or an error code
   * axios gives to its own checks. Sending the same request again would get the same answer.
   */
  private refusedByAxios(error: unknown, response: AxiosResponseLike | undefined): boolean {
    if (readProperty(error, 'isAxiosError') !== true) return false;
    if (response !== undefined && this.refusesStatus(response.status)) return true;
    const code = readString(error, 'code');
    // axios also says ERR_BAD_RESPONSE for a body cut off mid-stream ('stream has been
    // aborted', with the response): a network failure. Without a response, its own check
    // (`maxContentLength` exceeded).
    if (code === 'ERR_BAD_RESPONSE') return response === undefined;
    return code !== undefined && AXIOS_REFUSAL_CODES.has(code);
  }

  /** Asks `validateStatus` as axios' `settle` does. None (`null`: any status) or one that throws refuses nothing. */
  private refusesStatus(status: number): boolean {
    const validate = this.config.validateStatus;
    if (typeof validate !== 'function') return false;
    try {
      return !validate(status);
    } catch {
      return false;
    }
  }

  /**
   * What the pipeline sees for a refusal by axios: a copy without secrets, never retried, that
   * stands for axios' own error (what the caller gets). Not counted by the breaker: no
   * failure status, not retryable.
   */
  private refusal(error: unknown, response: AxiosResponseLike | undefined, attempt: number): KindlyErrorLike {
    const code = readString(error, 'code');
    // A response, a body too large or a redirect loop: the callee answered; otherwise axios
    // refused the request before it went out.
    const answered = response !== undefined || code === 'ERR_BAD_RESPONSE' || code === 'ERR_FR_TOO_MANY_REDIRECTS';
    const classification: Classification = { outcome: answered ? 'unknown' : 'failed', retryable: false };
    if (response !== undefined) classification.status = response.status;
    if (code !== undefined) classification.code = code;
    const copy =
      response === undefined
        ? this.requestError(error, attempt, classification)
        : this.statusError(response, classification.outcome, attempt);
    this.classifications.set(copy, classification);
    this.axiosErrors.set(copy, error);
    this.refusals.add(error as object);
    return copy;
  }

  /** What the pipeline sees for a network failure: axios' error without its config. */
  private requestError(
    error: unknown,
    attempt: number,
    classification: Classification = this.downstream.classify(error),
  ): HttpRequestError {
    const { secrets } = this.settings;
    const code = readString(error, 'code');
    const message = redactUrlIn(readString(error, 'message') ?? 'request failed', this.url, secrets);
    const copy = new HttpRequestError(this.method, redactUrl(this.url, secrets), code, message, {
      outcome: classification.outcome,
      attempts: attempt,
      downstream: this.downstream.name,
    });
    this.classifications.set(copy, classification);
    return copy;
  }

  /** A stream body cannot be sent again: when the pipeline would retry, stop with a clear error. */
  private oneShot(error: KindlyErrorLike, original: unknown, attempt: number): unknown {
    if (this.replayable) return error;
    const c = this.classify(error) ?? this.downstream.classify(error);
    const stopped = stopRetryOfOneShot(this.oneShotRequest, error, attempt, c);
    if (stopped !== error) this.axiosErrors.set(stopped as object, original);
    return stopped;
  }
}

type KindlyErrorLike = HttpStatusError | HttpRequestError;

/**
 * Codes axios gives its own refusals (a request it will not send, a redirect loop it stops):
 * the same request would be refused again. ERR_BAD_RESPONSE is read apart (`refusedByAxios`).
 */
const AXIOS_REFUSAL_CODES: ReadonlySet<string> = new Set([
  'ERR_BAD_REQUEST',
  'ERR_BAD_OPTION',
  'ERR_BAD_OPTION_VALUE',
  'ERR_FR_TOO_MANY_REDIRECTS',
]);

/** A status kindly-calls/chaos injected in place of an attempt: what a response would carry. */
interface InjectedStatus {
  status: number;
  statusText: string;
  headers: Record<string, string>;
}

/**
 * The status, reason phrase and headers of a status fault injected by kindly-calls/chaos (an
 * `HttpStatusError` marked `chaos: true` whose `response` is a fetch `Response`, see
 * src/chaos/fault.ts); `undefined` for anything else. Recognised by shape: this adapter runs
 * in browsers, where no chaos code is bundled, so it cannot import the class.
 */
function injectedStatusOf(error: unknown): InjectedStatus | undefined {
  if (readProperty(error, 'chaos') !== true || readString(error, 'name') !== 'HttpStatusError') return undefined;
  const status = readProperty(error, 'status');
  if (typeof status !== 'number') return undefined;
  const response = readProperty(error, 'response');
  const headers = readHeaders(readProperty(response, 'headers'));
  return { status, statusText: readString(response, 'statusText') ?? '', headers };
}

type AxiosErrorClass = new (
  message: string,
  code: string,
  config: unknown,
  request: unknown,
  response: AxiosResponseLike,
) => Error;

let axiosError: Promise<AxiosErrorClass> | undefined;

/**
 * axios' `AxiosError` class, loaded on first use: only an injected status needs one made here
 * (axios makes its own for real ones), so no other call pays for the import.
 */
function loadAxiosError(): Promise<AxiosErrorClass> {
  axiosError ??= import('axios').then((axios) => {
    const module = axios as unknown as { AxiosError?: AxiosErrorClass; default?: { AxiosError?: AxiosErrorClass } };
    return (module.AxiosError ?? module.default?.AxiosError) as AxiosErrorClass;
  });
  return axiosError;
}

/** The parts of axios' `CancelToken` the adapter uses (axios ≥ 0.22). */
interface CancelTokenLike {
  subscribe(listener: (reason: unknown) => void): void;
  unsubscribe(listener: (reason: unknown) => void): void;
}

/**
 * A signal that aborts, with axios' `CanceledError`, when `token` is cancelled (at once if it
 * already was); `dispose` unsubscribes. `undefined` when `token` is no `CancelToken`.
 */
function cancelTokenSignal(token: unknown): { signal: AbortSignal; dispose: () => void } | undefined {
  const subscribe = readProperty(token, 'subscribe');
  const unsubscribe = readProperty(token, 'unsubscribe');
  if (typeof subscribe !== 'function' || typeof unsubscribe !== 'function') return undefined;
  const t = token as CancelTokenLike;
  const controller = new AbortController();
  const listener = (reason: unknown): void => controller.abort(reason);
  t.subscribe(listener);
  return { signal: controller.signal, dispose: () => t.unsubscribe(listener) };
}

function noop(): void {}

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
