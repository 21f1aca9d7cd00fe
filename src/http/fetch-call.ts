import { classifyError } from '../classify/classify-error.js';
import { classifyStatus, isInFlightConflict } from '../classify/http-status.js';
import type { Classification } from '../classify/outcome.js';
import { DeadlineExceededError, HttpStatusError, isGiveUpError, isHttpStatusError } from '../errors/errors.js';
import { isResponsePending, makeResponseWhenRead } from '../errors/lazy-response.js';
import { withoutStack } from '../errors/without-stack.js';
import { type BodyHintExtractor, extractBodyHint, MAX_BODY_HINT_CHARS } from '../hints/body-hints.js';
import { readWaitHint } from '../hints/wait-hint.js';
import { AttemptContext, type CallContext, type InternalCallOptions, RUNS_NO_USER_CODE } from '../runtime/attempt.js';
import type { CallOptions, Downstream } from '../runtime/downstream.js';
import { describeHttpAttempt } from '../telemetry/http-attempt.js';
import type { Clock } from '../time/clock.js';
import { onAbort } from '../time/on-abort.js';
import { AttemptSignal, type BodyDeadline } from './attempt-signal.js';
import type { FetchFunction } from './connect-timeout.js';
import { BodyTimeoutError, isRequestBodyNotReplayableError } from './errors.js';
import { notReplayable, type OneShotRequest, stopRetryOfOneShot } from './one-shot.js';
import { waitUntilOnline, waitUntilVisible } from './online.js';
import { setAttemptHeaders } from './propagation.js';
import { redactUrl, secretValues } from './redact.js';
import type { PreparedBody } from './request-body.js';
import { requestErrorFrom } from './request-error.js';
import {
  BODY_HINT_WAIT_MS,
  DRAIN_LIMIT,
  DRAIN_WAIT_MS,
  type Drain,
  drainBody,
  HELD_BODY_MS,
  lostBody,
  type PeekedBody,
  peekBody,
  rebuildResponse,
  settledDrain,
  withoutSecrets,
} from './response-body.js';

/** Everything one fetch call decided before its first attempt (see `fetch.ts`). */
export interface FetchPlan {
  downstream: Downstream;
  url: string;
  method: string;
  /** `fetch`'s init without kindly's keys, headers and body (set per attempt). */
  init: RequestInit;
  /** The request's headers, copied once; `undefined` when it has none (each attempt then sends a plain record). */
  headers: Headers | undefined;
  body: PreparedBody;
  fetch: FetchFunction;
  /** The caller's signal, else the inbound request's: after the attempt, it alone may stop the body. */
  callerSignal: AbortSignal | undefined;
  /** The call's deadline in monotonic ms (`Infinity`: none); it bounds reading the body too. */
  deadline: number;
  bodyTimeoutMs: number | undefined;
  hasIdempotencyKey: boolean;
  propagate: boolean;
  /** Whether the attempt's trace context (kindly-calls/otel, the user's propagator) may go out. */
  propagateTrace: boolean;
  throwHttpErrors: boolean;
  retryableStatuses: readonly number[] | undefined;
  extractors: readonly BodyHintExtractor[];
  secretParams: readonly string[];
  /** Only for a body that cannot be sent again (the description is built only then). */
  oneShot: OneShotRequest | undefined;
  /**
   * The attempt calls no code of the user's (the platform's `fetch`, as it was when kindly
   * loaded, or the connect-timeout fetch): it needs no deadline scope of its own.
   */
  runsNoUserCode: boolean;
  /** `init` has no key of its own: each attempt's init is a fixed-shape literal, not a spread. */
  bareInit: boolean;
  /** What `Downstream.call` receives, without the hooks. */
  callOptions: CallOptions<Response>;
  /** The same with `FetchCall`'s hooks: made by the first request of the plan, then shared (`undefined` until then). */
  hooked: (CallOptions<Response> & InternalCallOptions) | undefined;
  /** In a page: wait while offline (`online`) or hidden (`visible`) before each attempt. */
  waitFor: { online: boolean; visible: boolean } | undefined;
}

/** What kindly remembers about one failed response. */
class FailedResponse {
  /** Set when the attempt is retried: the body read (and the connection freed) or dropped. */
  drained: Drain | undefined = undefined;

  constructor(
    /** The response as the caller would get it; `undefined` until asked for, after a peek that read the whole body. */
    private standIn: Response | undefined,
    /** That peek, which makes the response from the bytes it read. */
    private readonly peeked: PeekedBody | undefined,
    /** The error that stands for it; its `response` is the copy: same status and body, no URL, no secret header. */
    private readonly error: HttpStatusError,
    readonly status: number,
    /** A wait hint found in the body, when the headers had none. */
    readonly bodyHintMs: number | undefined,
    /** The attempt's link to the caller's signal and the body's deadline, released once the body is done with. */
    readonly link: AttemptSignal | undefined,
  ) {}

  /** The whole body, when looking for a hint read it to its end: nothing is left on the wire. */
  get whole(): Uint8Array | undefined {
    return this.peeked?.whole;
  }

  /**
   * The response as the caller would get it (URL and every header). After a peek that read
   * the whole body, made when first asked for: most failed responses are retried and dropped
   * unread, and a `Response` with its body stream is most of what a rejected attempt costs
   * kindly (`docs/benchmarks.md`, what a rejected answer costs).
   */
  get response(): Response {
    this.standIn ??= (this.peeked as PeekedBody).response;
    return this.standIn;
  }

  /** Whether `value` is this failure's response or its copy (making neither). */
  holds(value: unknown): boolean {
    if (this.standIn !== undefined && value === this.standIn) return true;
    return !isResponsePending(this.error) && value === this.error.response;
  }
}

/**
 * One `fetch` call through a downstream: each attempt (`attempt`), what only this request
 * knows when classifying (`classify`), and what happens to a failed response — drained before
 * a retry, handed back on give-up, or let go (`run`). One small method per stage.
 */
export class FetchCall {
  /** Failed responses, by the `HttpStatusError` that stands for them. */
  private failures: WeakMap<object, FailedResponse> | undefined;
  /** Classifications of the `HttpRequestError` copies, read from the original errors. */
  private copied: WeakMap<object, Classification> | undefined;
  /** The latest failed response the call still holds: drained before a retry, handed back, or cancelled. */
  private lastFailure: FailedResponse | undefined;
  private secrets: string[] | undefined;
  private readonly clock: Clock;
  private readonly bodyLimited: boolean;

  /**
   * `deadline`: the call's, in monotonic ms (`Infinity`: none); a plan shared by requests in a
   * row has none of its own, each request brings it.
   */
  constructor(
    private readonly plan: FetchPlan,
    private readonly deadline: number = plan.deadline,
  ) {
    this.clock = plan.downstream.clock;
    this.bodyLimited = deadline !== Number.POSITIVE_INFINITY || plan.bodyTimeoutMs !== undefined;
  }

  /**
   * Runs the call: the last response on give-up (unless `throwHttpErrors`), rejects otherwise.
   * A `then` on the call's promise rather than an async frame: ~500 B less per request, and
   * on Node 20 every byte a request allocates is paid again in scavenges (docs/benchmarks.md).
   */
  run(): Promise<Response> {
    let pending: Promise<Response>;
    try {
      pending = this.plan.downstream.call((ctx) => this.attempt(ctx), this.callOptions());
    } catch (error) {
      return this.giveUpNow(error);
    }
    return pending.then(
      (value) => this.answered(value),
      (error: unknown) => this.afterGiveUp(error),
    );
  }

  /** A call that threw instead of returning a promise (a call wrapper's bug): as a rejection. */
  private giveUpNow(error: unknown): Promise<Response> {
    try {
      return Promise.resolve(this.afterGiveUp(error));
    } catch (thrown) {
      return Promise.reject(thrown);
    }
  }

  private answered(value: Response): Response {
    // A failed response still held here was answered by the fallback: let its connection go.
    const last = this.takeLastFailure();
    if (last !== undefined && !last.holds(value)) discard(last);
    return value;
  }

  /**
   * The call's options, hooks included: built once per plan (`FetchPlan.hooked`), not per
   * request. The hooks are functions of the module that find the call an error belongs to
   * (`owners`), so they close over nothing of one request; a plan shared by requests in a row
   * shares its options too. Field by field, not spread: a spread copy is a slow (dictionary)
   * object here, and the downstream reads every field of it per call.
   */
  private callOptions(): CallOptions<Response> & InternalCallOptions {
    const plan = this.plan;
    if (plan.hooked !== undefined) return plan.hooked;
    const p = plan.callOptions;
    const waitFor = plan.waitFor;
    const clock = this.clock;
    plan.hooked = {
      [RUNS_NO_USER_CODE]: plan.runsNoUserCode,
      idempotent: p.idempotent,
      key: p.key,
      signal: p.signal,
      deadline: p.deadline,
      timeoutMs: p.timeoutMs,
      verify: p.verify,
      fallback: p.fallback,
      budgetKey: p.budgetKey,
      beforeAttempt:
        waitFor === undefined
          ? undefined
          : ({ signal, deadline }) => waitUntilReady(waitFor.online, waitFor.visible, signal, deadline, clock),
      classify: classifyOwned,
      onAttemptError: drainOwned,
      onDiscard: discardOwned,
    };
    return plan.hooked;
  }

  /** `onAttemptError` for an error of this call's: a failed response that will be retried is drained. */
  drainBeforeRetry(error: object): void {
    const failure = this.failures?.get(error);
    if (failure === undefined) return;
    if (failure.whole !== undefined) {
      failure.drained = settledDrain(failure.whole);
      return;
    }
    const drained = drainBody(failure.response, DRAIN_LIMIT);
    failure.drained = drained;
    // A body held unread is let go after HELD_BODY_MS, whether or not its retry has started.
    void drained.bytes.then(() => {
      if (drained.held) this.clock.schedule(HELD_BODY_MS, () => drained.cancel());
    });
  }

  /** `onDiscard` for an error of this call's (hedging: it lost the race): let its connection go. */
  discardFailed(error: object): void {
    const failure = this.failures?.get(error);
    if (failure === undefined) return;
    if (this.lastFailure === failure) this.lastFailure = undefined;
    discard(failure);
  }

  /** This call's reading of what only it knows; `undefined`: the downstream's. */
  classify(error: unknown, nowMs: number): Classification | undefined {
    if (typeof error !== 'object' || error === null) return undefined;
    const copy = this.copied?.get(error);
    if (copy !== undefined) return copy;
    const failure = this.failures?.get(error);
    if (failure === undefined) return undefined;
    const { retryableStatuses, downstream } = this.plan;
    const keyed409 = isInFlightConflict(failure.status, this.plan.hasIdempotencyKey);
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
  }

  /**
   * One attempt: the previous failed body let go, the request sent, the response judged.
   * Promise chains rather than async frames, as in `run`: this runs once per attempt.
   */
  private attempt(ctx: CallContext): Promise<Response> {
    // Only after a failed response: waiting for it costs a first attempt a promise and a tick.
    if (this.lastFailure !== undefined) return this.releasePrevious(ctx).then(() => this.send(ctx));
    return this.send(ctx);
  }

  private send(ctx: CallContext): Promise<Response> {
    const { plan } = this;
    // Never reached through the one-shot guard; in case a classifier upstream of it changes its mind.
    if (!plan.body.replayable && ctx.attempt > 1) {
      return Promise.reject(notReplayable(plan.oneShot as OneShotRequest, ctx.attempt, 'failed', undefined));
    }
    const link =
      plan.callerSignal === undefined && !this.bodyLimited
        ? undefined
        : new AttemptSignal(ctx instanceof AttemptContext ? ctx : ctx.signal, plan.callerSignal);
    let sent: Promise<Response>;
    try {
      // The same promise when `fetch` returns a native one; a user's fetch may return any thenable.
      sent = Promise.resolve(plan.fetch(plan.url, this.attemptInit(ctx, link)));
    } catch (error) {
      return Promise.reject(this.notSent(error, ctx, link));
    }
    return sent.then(
      (response) => this.received(response, ctx, link),
      (error: unknown) => {
        throw this.notSent(error, ctx, link);
      },
    );
  }

  /** What an attempt whose request failed (network, abort, a refused header) rejects with. */
  private notSent(error: unknown, ctx: CallContext, link: AttemptSignal | undefined): unknown {
    link?.release();
    // The attempt already ended (its timeout, the deadline, the caller): this value goes nowhere.
    if (ctx.signal.aborted) return error;
    return this.oneShot(this.safeCopy(error, ctx.attempt), ctx.attempt);
  }

  /** The response arrived: handed over when it is a success, else judged as a failure. */
  private received(response: Response, ctx: CallContext, link: AttemptSignal | undefined): Response | Promise<never> {
    const { plan } = this;
    ctx.telemetry?.setAttribute('http.response.status_code', response.status);
    const retryableStatuses = plan.retryableStatuses;
    const reading = classifyStatus(response.status, retryableStatuses === undefined ? undefined : { retryableStatuses });
    if (reading === undefined) {
      link?.handOver(response, this.bodyDeadline());
      return response;
    }
    return this.failed(response, reading, ctx, link).then((error) => {
      throw error;
    });
  }

  /**
   * Lets the previous attempt's connection go back to the pool before asking for one, or the
   * pool opens a second connection while the first is still busy with the old body; a body
   * still arriving after the backoff and DRAIN_WAIT_MS more is cancelled instead, and so is
   * one too large to drain (held until now in case the call stopped and handed it back).
   */
  private async releasePrevious(ctx: CallContext): Promise<void> {
    const previous = this.takeLastFailure();
    if (previous === undefined) return;
    const drained = previous.drained;
    if (drained === undefined) discard(previous);
    else {
      if (!drained.settled) await settle(drained, ctx.signal, this.clock);
      drained.cancel(); // a body read to its end has nothing left to cancel
    }
    previous.link?.release();
  }

  private attemptInit(ctx: CallContext, link: AttemptSignal | undefined): RequestInit & { duplex?: 'half' } {
    const { plan } = this;
    let headers: Headers | Record<string, string>;
    if (plan.headers === undefined) {
      const record: Record<string, string> = {};
      if (plan.propagate) setAttemptHeaders((name, value) => (record[name] = value), ctx);
      headers = record;
    } else {
      // The first attempt sends the call's Headers as is, a retry a copy.
      const copy = ctx.attempt === 1 ? plan.headers : new Headers(plan.headers);
      if (plan.propagate) setAttemptHeaders((name, value) => copy.set(name, value), ctx);
      headers = copy;
    }
    // Only while kindly-calls/otel instruments the downstream: span attributes and `traceparent`.
    if (ctx.telemetry !== undefined) {
      const target = headers;
      const set = (name: string, value: string) => {
        if (target instanceof Headers) target.set(name, value);
        else target[name] = value;
      };
      describeHttpAttempt(
        ctx.telemetry,
        plan.method,
        redactUrl(plan.url, plan.secretParams),
        plan.propagateTrace ? set : undefined,
      );
    }
    const signal = link === undefined ? ctx.signal : link.signal;
    const body = plan.body;
    const sent = body.body === undefined || body.body === null ? undefined : (body.body as BodyInit);
    // The common request (nothing in the init but what kindly sets) gets the floor's own shape,
    // `{ headers, signal }`: no spread copy per attempt.
    if (plan.bareInit && sent === undefined && body.replayable) return { headers, signal };
    const init: RequestInit & { duplex?: 'half' } = plan.bareInit ? { headers, signal } : { ...plan.init, headers, signal };
    if (sent !== undefined) init.body = sent;
    if (!body.replayable) init.duplex = 'half';
    return init;
  }

  /** A response whose status is a failure: a body hint looked for, then the error that stands for it. */
  private async failed(
    arrived: Response,
    reading: NonNullable<ReturnType<typeof classifyStatus>>,
    ctx: CallContext,
    link: AttemptSignal | undefined,
  ): Promise<unknown> {
    const { plan } = this;
    const status = arrived.status;
    let bodyHintMs: number | undefined;
    let peeked: PeekedBody | undefined;
    if ((reading.retryable || isInFlightConflict(status, plan.hasIdempotencyKey)) && plan.extractors.length > 0) {
      const found = await bodyHint(arrived, this.clock, plan.extractors, reading.throttled, ctx);
      bodyHintMs = found.hintMs;
      peeked = found.peeked;
    }
    const whole = peeked?.whole;
    /** The response from now on: `undefined` while only the bytes of a whole body are kept. */
    const response = whole !== undefined ? undefined : (peeked?.response ?? arrived);
    if (ctx.signal.aborted) {
      // Ended while the hint was read; nobody will get this response.
      link?.release();
      response?.body?.cancel().catch(() => undefined);
      return ctx.signal.reason;
    }
    // A body read whole is in memory: no deadline or caller's abort has anything left to stop.
    if (response === undefined) link?.release();
    else link?.handOver(response, this.bodyDeadline());
    const error = withoutStack(
      () => new HttpStatusError(status, { outcome: reading.outcome, attempts: ctx.attempt, downstream: plan.downstream.name }),
    );
    // The error's copy of the response (no URL, no secret header) is made if anyone reads it:
    // from the bytes of a body read whole, or sharing the body still to be read. Most failed
    // responses are retried and dropped, or handed back, and nobody looks at the error's.
    // (`response` is undefined exactly when `whole` is not.)
    const { secretParams } = plan;
    makeResponseWhenRead(error, () => withoutSecrets(response ?? arrived, secretParams, whole), arrived.headers);
    const failure = new FailedResponse(response, peeked, error, status, bodyHintMs, link);
    (this.failures ??= new WeakMap()).set(error, failure);
    owners.set(error, this);
    this.lastFailure = failure;
    return this.oneShot(error, ctx.attempt);
  }

  /** What the caller gets when the pipeline rejected: the last response (give-up on a status), or the error. */
  private afterGiveUp(error: unknown): Response {
    const last = this.takeLastFailure();
    const failure = isGiveUpError(error) ? this.failureOf(error.cause) : undefined;
    // A status injected by kindly-calls/chaos ends the call as a real one would: with its response.
    if (failure === undefined && !this.plan.throwHttpErrors && isGiveUpError(error) && isInjectedStatus(error.cause)) {
      if (last !== undefined) discard(last);
      return error.cause.response as Response;
    }
    if (failure === undefined) {
      // An abort, a network failure, a fallback that threw: nobody gets the last response.
      if (last !== undefined) discard(last);
      throw error;
    }
    if (this.plan.throwHttpErrors) {
      // The error's response shares the body with the caller's; a drain still running holds it.
      failure.drained?.cancel();
      throw error;
    }
    // The call stopped after a retry was planned (verify, deadline, breaker): the body was
    // being drained meanwhile. Hand it back at once — read, or what was read plus the rest
    // (also when it was too large to drain: it was held, not cancelled) — never waiting on a
    // body that may not end.
    // A body read whole is handed back as a response made from its bytes (never read before).
    if (failure.drained !== undefined && failure.whole === undefined)
      return rebuildResponse(failure.response, failure.drained.take() ?? lostBody());
    return failure.response;
  }

  private takeLastFailure(): FailedResponse | undefined {
    const last = this.lastFailure;
    this.lastFailure = undefined;
    return last;
  }

  private failureOf(error: unknown): FailedResponse | undefined {
    if (typeof error !== 'object' || error === null) return undefined;
    return this.failures?.get(error) ?? (isRequestBodyNotReplayableError(error) ? this.failureOf(error.cause) : undefined);
  }

  /** A one-shot body cannot be sent again: a failure the pipeline would retry stops here instead. */
  private oneShot(error: unknown, attempt: number): unknown {
    if (this.plan.body.replayable) return error;
    const c = this.classify(error, this.clock.now()) ?? this.plan.downstream.classify(error);
    return stopRetryOfOneShot(this.plan.oneShot as OneShotRequest, error, attempt, c);
  }

  /** The fetch implementation's error, as errors and events may carry it. */
  private safeCopy(error: unknown, attempt: number): unknown {
    const { plan } = this;
    const classification = plan.downstream.classify(error);
    this.secrets ??= secretValues(plan.url, plan.secretParams, plan.headers);
    const copy = requestErrorFrom(error, {
      method: plan.method,
      url: plan.url,
      secretParams: plan.secretParams,
      secrets: this.secrets,
      outcome: classification.outcome,
      attempts: attempt,
      downstream: plan.downstream.name,
    });
    (this.copied ??= new WeakMap()).set(copy, classification);
    owners.set(copy, this);
    return copy;
  }

  /** By when the body of a response arriving now must have been read, and with which error. */
  private bodyDeadline(): BodyDeadline | undefined {
    if (!this.bodyLimited) return undefined;
    const { clock } = this;
    const { deadline } = this;
    const { bodyTimeoutMs, downstream } = this.plan;
    const byTimeout = bodyTimeoutMs === undefined ? Number.POSITIVE_INFINITY : clock.monotonic() + bodyTimeoutMs;
    if (byTimeout < deadline) {
      const ms = bodyTimeoutMs as number;
      return {
        at: byTimeout,
        clock,
        reason: () => new BodyTimeoutError(ms, { outcome: 'unknown', downstream: downstream.name }),
      };
    }
    return { at: deadline, clock, reason: () => new DeadlineExceededError({ outcome: 'unknown', downstream: downstream.name }) };
  }
}

/**
 * The call each error a `FetchCall` made belongs to (the `HttpStatusError` standing for a
 * failed response, the copy of a fetch error without its secrets): the call options' hooks
 * are shared by every request of a plan and find their call here. Only failures are entered.
 */
const owners = new WeakMap<object, FetchCall>();

function classifyOwned(error: unknown, nowMs: number): Classification | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  return owners.get(error)?.classify(error, nowMs);
}

function drainOwned(error: unknown, info: { willRetry: boolean }): void {
  if (!info.willRetry || typeof error !== 'object' || error === null) return;
  owners.get(error)?.drainBeforeRetry(error);
}

/** Hedging: an answer that lost the race is never read; let its connection go. */
function discardOwned(answer: { value: Response } | { error: unknown }): void {
  if ('value' in answer) {
    answer.value.body?.cancel().catch(() => undefined);
    return;
  }
  const error = answer.error;
  if (typeof error === 'object' && error !== null) owners.get(error)?.discardFailed(error);
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
    const unsubscribe = onAbort(signal, stop);
    void drain.bytes.then(() => {
      cancelTimer();
      unsubscribe();
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
  if (failure.whole !== undefined) return; // read to its end already: nothing to let go
  const body = failure.response.body;
  if (body !== null && !body.locked) body.cancel().catch(() => undefined);
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

/**
 * A wait hint in the body of a failed response, when its headers have none. Read only from
 * a JSON or text body of at most MAX_BODY_HINT_CHARS bytes (by `Content-Length`, when sent),
 * and only while it arrives within BODY_HINT_WAIT_MS and half the attempt's time left: a
 * slow body gives no hint rather than a timed-out attempt. Returns the peek, when there was
 * one: its response is the one to use from now on (the body peeked at, followed by the rest;
 * see `peekBody`).
 */
async function bodyHint(
  response: Response,
  clock: Clock,
  extractors: readonly BodyHintExtractor[],
  throttled: boolean | undefined,
  ctx: CallContext,
): Promise<{ hintMs: number | undefined; peeked: PeekedBody | undefined }> {
  const now = clock.now();
  const none = { hintMs: undefined, peeked: undefined };
  if (readWaitHint(response.headers, now, { throttled: throttled === true }) !== undefined) return none;
  const type = response.headers.get('content-type') ?? '';
  if (!/json|text/i.test(type)) return none;
  const length = response.headers.get('content-length');
  if (length !== null && !(Number(length) <= MAX_BODY_HINT_CHARS)) return none;
  const waitMs = Math.min(BODY_HINT_WAIT_MS, ctx.timeLeft() / 2);
  const peeked = await peekBody(response, { maxBytes: MAX_BODY_HINT_CHARS, waitMs, clock, signal: ctx.signal });
  const text = peeked.text;
  const hintMs = text === undefined || text.length === 0 ? undefined : extractBodyHint(text, now, extractors);
  return { hintMs, peeked };
}

/** An `HttpStatusError` that kindly-calls/chaos made up (it carries `chaos: true` and a `Response`). */
function isInjectedStatus(error: unknown): error is HttpStatusError {
  return isHttpStatusError(error) && (error as { chaos?: unknown }).chaos === true && error.response instanceof Response;
}
