import { DeadlineExceededError, type GiveUpReason, isGiveUpError } from '../errors/errors.js';
import { RETRY_EXHAUSTED_HEADER } from '../hints/dont-retry.js';
import type { HeaderSource } from '../hints/headers.js';
import { OptionsValidator } from '../options/validate.js';
import type { DeadlineScope } from '../runtime/deadline-context.js';
import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/system-clock.js';
import { readPreviousAttempts } from './attempt-header.js';
import { DEFAULT_MAX_TIMEOUT_MS, readInboundBudget } from './deadline-header.js';

/** Options of the server middleware (node:http, Express, Fastify). */
export interface ServerContextOptions {
  /**
   * The most time a request may take, in ms: a request without a deadline header gets this
   * budget, and a header can only shorten it (untrusted input never extends work).
   * @default DEFAULT_MAX_TIMEOUT_MS (30_000)
   */
  maxTimeoutMs?: number;
  /**
   * Mark a failure response (status ≥ 500 or 429) `x-retry-exhausted: 1` when a kindly call
   * made while handling the request gave up for one of `exhaustedReasons`, so that
   * a kindly client upstream does not multiply the retries already made here.
   * @default true
   */
  markExhausted?: boolean;
  /** @default EXHAUSTED_REASONS */
  exhaustedReasons?: readonly GiveUpReason[];
  /** @default the system clock */
  clock?: Clock;
  /**
   * `nodeHttpHandler` (node:http): told about an error that escaped the handler, after the
   * middleware answered for it (503 when a kindly call inside gave up, else 500; the answer
   * never carries the error's text). Express and Fastify report such errors their own way.
   * May be async. A reporter that throws or rejects is ignored: it never changes the answer
   * nor takes the server down.
   * @default writes the error to stderr, as Express does
   */
  onError?: (error: unknown) => void;
}

/**
 * Give-up reasons after which retrying from upstream would only multiply load: retries ran
 * out (`max-attempts`), the retry budget is empty (`budget`), the breaker is open
 * (`circuit-open`), or the dependency itself said not to retry (`dont-retry`).
 * @default ['max-attempts', 'budget', 'circuit-open', 'dont-retry']
 */
export const EXHAUSTED_REASONS: readonly GiveUpReason[] = Object.freeze(['max-attempts', 'budget', 'circuit-open', 'dont-retry']);

export const SERVER_DEFAULTS = {
  maxTimeoutMs: DEFAULT_MAX_TIMEOUT_MS,
  markExhausted: true,
} as const;

const KEYS = ['maxTimeoutMs', 'markExhausted', 'exhaustedReasons', 'clock', 'onError'] as const;

/** What the middleware knows about one inbound request; `req.kindly` / `getRequestContext(req)`. */
export interface RequestContext {
  /**
   * Aborts at the request's deadline (reason: `DeadlineExceededError`) or when the client goes
   * away before the response is complete (reason: an `AbortError` DOMException).
   */
  readonly signal: AbortSignal;
  /** Absolute deadline in the middleware clock's monotonic ms. */
  readonly deadline: number;
  /** The budget granted to this request, in ms (after clamping to `maxTimeoutMs`). */
  readonly timeoutMs: number;
  /** The budget the client asked for, before clamping, if it sent a usable header. */
  readonly requestedTimeoutMs: number | undefined;
  /** Attempts the client made before this one (`x-retry-attempt` and compatible headers). */
  readonly previousAttempts: number;
  /** The first give-up reason of a kindly call made for this request, if any. */
  readonly gaveUp: GiveUpReason | undefined;
  /** Whether any kindly call made for this request gave up for one of `exhaustedReasons`. */
  readonly exhausted: boolean;
  /** ms left before the deadline (≤ 0 once it passed). */
  timeLeft(): number;
}

/** The resolved, validated middleware settings, shared by every request. */
export interface ServerSettings {
  maxTimeoutMs: number;
  markExhausted: boolean;
  exhaustedReasons: ReadonlySet<string>;
  clock: Clock;
  onError: (error: unknown) => void;
}

export function resolveServerOptions(options: ServerContextOptions | undefined, subject: string): ServerSettings {
  const v = new OptionsValidator(subject);
  v.knownKeys(options, KEYS);
  const o = options ?? {};
  v.duration('maxTimeoutMs', o.maxTimeoutMs, { min: 0 }).func('onError', o.onError);
  v.boolean('markExhausted', o.markExhausted).array('exhaustedReasons', o.exhaustedReasons);
  v.done();
  return {
    maxTimeoutMs: o.maxTimeoutMs ?? SERVER_DEFAULTS.maxTimeoutMs,
    markExhausted: o.markExhausted ?? SERVER_DEFAULTS.markExhausted,
    exhaustedReasons: new Set(o.exhaustedReasons ?? EXHAUSTED_REASONS),
    clock: o.clock ?? systemClock,
    onError: o.onError ?? reportToStderr,
  };
}

function reportToStderr(error: unknown): void {
  console.error('kindly: a request handler failed:', error);
}

/** The slice of `IncomingMessage` the middleware reads. */
export interface InboundRequest {
  headers: HeaderSource;
}

/** The slice of `ServerResponse` the middleware uses. */
export interface OutboundResponse {
  statusCode: number;
  readonly headersSent: boolean;
  readonly writableFinished: boolean;
  setHeader(name: string, value: string): unknown;
  writeHead(...args: never[]): unknown;
  once(event: 'close', listener: () => void): unknown;
}

/**
 * The status the middleware answers with when an error escapes the handler: 503 when a kindly
 * call made for the request gave up (the dependency is what failed; the `x-retry-exhausted`
 * mark follows the usual rule), 500 for anything else.
 */
export function handlerErrorStatus(context: RequestContext, error: unknown): 503 | 500 {
  return isGiveUpError(error) || context.gaveUp !== undefined ? 503 : 500;
}

/** The slice of `ServerResponse` used to answer for a failed handler. */
interface AnswerableResponse extends OutboundResponse {
  readonly writableEnded: boolean;
  end(body?: string): unknown;
  destroy(error?: Error): unknown;
}

/**
 * Answers for an error that escaped a node:http handler, so that it never becomes an
 * unhandled rejection (a crash) nor a reset seen upstream: 503 or 500 (see
 * `handlerErrorStatus`) with a plain body that does not quote the error; a response already
 * under way is cut off (its status was sent). Never throws.
 */
export function answerHandlerError(
  res: AnswerableResponse,
  context: RequestContext,
  error: unknown,
  settings: ServerSettings,
): void {
  // Answered first, then reported: a slow reporter (one that ships the error synchronously)
  // must not hold the caller's answer back.
  answerFor(res, context, error);
  try {
    const reported: unknown = settings.onError(error);
    // An async reporter fails by rejecting, which would otherwise end the process as an
    // unhandled rejection: swallowed the same as a throw.
    if (isThenable(reported)) reported.then(undefined, ignoreReporterFailure);
  } catch {
    // A failing reporter must not take the server down either.
  }
}

function answerFor(res: AnswerableResponse, context: RequestContext, error: unknown): void {
  try {
    if (res.writableEnded) return;
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const status = handlerErrorStatus(context, error);
    (res.writeHead as (status: number, headers: Record<string, string>) => unknown)(status, {
      'content-type': 'text/plain; charset=utf-8',
    });
    res.end(status === 503 ? 'Service Unavailable' : 'Internal Server Error');
  } catch {
    res.destroy();
  }
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === 'object' || typeof value === 'function') &&
    typeof (value as PromiseLike<unknown>).then === 'function'
  );
}

function ignoreReporterFailure(): void {
  // The server answers for the handler's error whether or not its report went through.
}

const contexts = new WeakMap<object, ServerRequestContext>();

class ServerRequestContext implements RequestContext {
  readonly signal: AbortSignal;
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly requestedTimeoutMs: number | undefined;
  readonly previousAttempts: number;
  gaveUp: GiveUpReason | undefined;
  exhausted = false;
  /** What `runWithDeadline` receives: kindly calls in the handler inherit all three. */
  readonly scope: DeadlineScope;
  private readonly controller = new AbortController();
  private cancelTimer: (() => void) | undefined;

  constructor(
    req: InboundRequest,
    private readonly clock: Clock,
    settings: ServerSettings,
  ) {
    const budget = readInboundBudget(req.headers, settings.maxTimeoutMs);
    this.signal = this.controller.signal;
    this.timeoutMs = budget.timeoutMs;
    this.requestedTimeoutMs = budget.requestedMs;
    this.deadline = clock.monotonic() + budget.timeoutMs;
    this.previousAttempts = readPreviousAttempts(req.headers);
    this.scope = {
      deadline: this.deadline,
      signal: this.signal,
      onGiveUp: (reason) => {
        this.gaveUp ??= reason as GiveUpReason;
        if (settings.exhaustedReasons.has(reason)) this.exhausted = true;
      },
    };
    const expire = () => {
      this.cancelTimer = undefined;
      this.controller.abort(new DeadlineExceededError({ outcome: 'unknown' }));
    };
    if (budget.timeoutMs <= 0) expire();
    else this.cancelTimer = clock.schedule(budget.timeoutMs, expire);
  }

  timeLeft(): number {
    return this.deadline - this.clock.monotonic();
  }

  /** The response is complete or the connection closed: stop the timer; abort if the client left early. */
  finish(clientLeft: boolean): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    if (clientLeft && !this.signal.aborted) {
      this.controller.abort(new DOMException('The client closed the connection before the response was complete', 'AbortError'));
    }
  }
}

/**
 * Sets up kindly for one inbound request: reads the deadline headers (clamped), starts the
 * deadline timer, watches for the client leaving, and (with `markExhausted`) arranges for a
 * failure response to carry `x-retry-exhausted: 1` when a kindly call inside gave up for an
 * exhausted-retries reason. Returns the context; run the handler inside
 * `runWithDeadline(context.scope, …)`.
 *
 * The mark is added in `writeHead` — which Node calls for implicit headers too — of this one
 * response object, so it works under Express and Fastify alike.
 */
export function beginRequest(
  req: InboundRequest & object,
  res: OutboundResponse,
  settings: ServerSettings,
): ServerRequestContext {
  const context = new ServerRequestContext(req, settings.clock, settings);
  contexts.set(req, context);
  res.once('close', () => context.finish(!res.writableFinished));
  if (settings.markExhausted) {
    const writeHead = res.writeHead as (this: OutboundResponse, ...args: unknown[]) => unknown;
    res.writeHead = function markedWriteHead(this: OutboundResponse, ...args: unknown[]) {
      const status = typeof args[0] === 'number' ? args[0] : this.statusCode;
      if (context.exhausted && (status >= 500 || status === 429) && !this.headersSent) {
        this.setHeader(RETRY_EXHAUSTED_HEADER, '1');
      }
      return writeHead.apply(this, args);
    } as OutboundResponse['writeHead'];
  }
  return context;
}

/**
 * kindly's context for a request handled by one of its middlewares, or `undefined`. Accepts
 * Node's `IncomingMessage`, Express' `req`, or Fastify's `request` (through `request.raw`).
 */
export function getRequestContext(req: object): RequestContext | undefined {
  const direct = contexts.get(req);
  if (direct !== undefined) return direct;
  const raw = (req as { raw?: unknown }).raw;
  return typeof raw === 'object' && raw !== null ? contexts.get(raw) : undefined;
}

/** The deadline scope of a request a kindly middleware saw (for re-entering it after body parsing). */
export function requestScope(req: object): DeadlineScope | undefined {
  return contexts.get(req)?.scope;
}

/**
 * The request's AbortSignal: aborts at its (clamped) deadline and when the client disconnects.
 * Pass it to work that is not a kindly call (a database query, a file read); kindly calls
 * inherit it by themselves. `undefined` for a request no kindly middleware saw.
 */
export function getRequestSignal(req: object): AbortSignal | undefined {
  return getRequestContext(req)?.signal;
}
