/**
 * Spans and histograms for kindly calls, following the OpenTelemetry semantic conventions
 * for HTTP clients: one span per logical call (INTERNAL) and, under it, one CLIENT span per
 * attempt, each retry carrying `http.request.resend_count`; waits (backoff, hints, pacing)
 * are events on the call span.
 *
 * Everything is driven by the downstream's typed events, plus one wrapper around each call
 * (`Downstream.wrapCalls`) that makes the call's and each attempt's span current, so that
 * outbound trace context and the user's own spans nest under the right attempt.
 */
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  createNoopMeter,
  type Histogram,
  type Meter,
  propagation,
  type Span,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { CallContext, Operation } from '../runtime/attempt.js';
import type { Downstream } from '../runtime/downstream.js';
import type { AttemptTelemetry, CallWrapper } from './call-wrapper.js';
import type { KindlyEvent } from './events.js';

export interface CallInstrumentationOptions {
  /** Spans per call and per attempt. Off without it. */
  tracer?: Tracer;
  /** Histograms (attempt duration, retry waits, pacing delay, call duration). Off without it. */
  meter?: Meter;
  /**
   * Injects trace context into outbound HTTP requests and gRPC metadata.
   * @default the global propagator (`propagation` of @opentelemetry/api): nothing is
   * injected unless your OpenTelemetry setup registered one
   */
  propagator?: TextMapPropagator;
  /** Prefix of kindly's own instrument names. @default 'kindly' */
  prefix?: string;
}

/**
 * Seconds. The semantic conventions' advice for `http.client.request.duration`
 * (5 ms … 10 s).
 */
export const HTTP_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
]);

/**
 * Seconds, for waits before retries and pacing delays: backoff starts around 100 ms and
 * grows to tens of seconds; hints (`Retry-After`) reach minutes.
 */
export const WAIT_BUCKETS: readonly number[] = Object.freeze([
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300,
]);

/** Seconds, for whole calls: attempts plus waits, up to the longest total timeouts. */
export const CALL_DURATION_BUCKETS: readonly number[] = Object.freeze([
  0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
]);

interface Instruments {
  http: Histogram;
  attempt: Histogram;
  retryWait: Histogram;
  pacing: Histogram;
  call: Histogram;
}

interface Storage<T> {
  getStore(): T | undefined;
  run<R>(store: T, fn: () => R): R;
}

/** The call in progress, in the OpenTelemetry context of its events. */
const CALL_KEY = createContextKey('kindly call');

/**
 * Which call an event belongs to, when no OpenTelemetry context manager propagates the
 * context: the events of one call are emitted inside its async context.
 */
const storage: Storage<CallTrace> | undefined = (() => {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const hooks = proc?.getBuiltinModule?.('node:async_hooks') as { AsyncLocalStorage: new () => Storage<CallTrace> } | undefined;
  return hooks ? new hooks.AsyncLocalStorage() : undefined;
})();

/**
 * Instruments `downstream`'s calls with spans (`tracer`) and histograms (`meter`). Returns
 * the function that stops it. Without a tracer and a meter nothing is installed, and the
 * call path does no extra work.
 */
export function instrumentCalls(downstream: Downstream, options: CallInstrumentationOptions): () => void {
  const tracer = options.tracer;
  // A meter from the API with no SDK behind it records nothing, ever (unlike tracers, the
  // API hands out no proxy that an SDK registered later takes over): treat it as absent.
  const meter = options.meter === undefined || isNoopMeter(options.meter) ? undefined : options.meter;
  if (tracer === undefined && meter === undefined) return () => undefined;
  const prefix = options.prefix ?? 'kindly';
  const propagator = options.propagator ?? propagation;
  const instruments = meter === undefined ? undefined : createInstruments(meter, prefix);
  const base: Attributes = { downstream: downstream.name };
  const listener = (event: KindlyEvent) => {
    const state = (context.active().getValue(CALL_KEY) as CallTrace | undefined) ?? storage?.getStore();
    if (state !== undefined && state.downstream === downstream) state.onEvent(event);
  };
  let live = 0;
  let unsubscribe: (() => void) | undefined;
  const wrapper: CallWrapper = {
    wrap<T>(operation: Operation<T>, run: (operation: Operation<T>) => Promise<T>): Promise<T> {
      const state = new CallTrace(downstream, tracer, instruments, propagator, base);
      // A span nobody records (no SDK, or sampled out) and no meter: nothing to do.
      if (instruments === undefined && state.span?.isRecording() !== true) return run(operation);
      // Events are listened to only while a recorded call runs: between calls (and for a
      // no-op tracer) the downstream builds no event objects.
      if (live++ === 0) unsubscribe = downstream.onAny(listener);
      const wrapped = (ctx: CallContext) => state.runAttempt(ctx, operation);
      const promise = context.with(state.context, () => {
        // The call's events find it through the OpenTelemetry context when the user's setup
        // propagates it (a context manager is registered); otherwise through kindly's own.
        if (context.active().getValue(CALL_KEY) === state || storage === undefined) return run(wrapped);
        return storage.run(state, () => run(wrapped));
      });
      const settle = () => {
        if (--live === 0) unsubscribe?.();
      };
      return promise.then(
        (value) => {
          state.end(undefined);
          settle();
          return value;
        },
        (error: unknown) => {
          state.end(error);
          settle();
          throw error;
        },
      );
    },
  };
  const unwrap = downstream.wrapCalls(wrapper);
  return () => {
    unwrap();
  };
}

let noopHistogram: (new (...args: never[]) => unknown) | undefined;

function isNoopMeter(meter: Meter): boolean {
  noopHistogram ??= (createNoopMeter().createHistogram('kindly.probe') as object).constructor as new (
    ...args: never[]
  ) => unknown;
  return meter.createHistogram('kindly.probe') instanceof noopHistogram;
}

function createInstruments(meter: Meter, prefix: string): Instruments {
  return {
    http: meter.createHistogram('http.client.request.duration', {
      unit: 's',
      description: 'Duration of HTTP client requests (one per attempt).',
      advice: { explicitBucketBoundaries: [...HTTP_DURATION_BUCKETS] },
    }),
    attempt: meter.createHistogram(`${prefix}.attempt.duration`, {
      unit: 's',
      description: 'Duration of attempts that are not HTTP requests.',
      advice: { explicitBucketBoundaries: [...HTTP_DURATION_BUCKETS] },
    }),
    retryWait: meter.createHistogram(`${prefix}.retry.wait.duration`, {
      unit: 's',
      description: 'Wait before a retry (backoff or the callee’s hint, whichever is longer).',
      advice: { explicitBucketBoundaries: [...WAIT_BUCKETS] },
    }),
    pacing: meter.createHistogram(`${prefix}.pacing.delay.duration`, {
      unit: 's',
      description: 'Time an attempt was held back by adaptive pacing.',
      advice: { explicitBucketBoundaries: [...WAIT_BUCKETS] },
    }),
    call: meter.createHistogram(`${prefix}.call.duration`, {
      unit: 's',
      description: 'Duration of logical calls: every attempt and wait.',
      advice: { explicitBucketBoundaries: [...CALL_DURATION_BUCKETS] },
    }),
  };
}

const carrierSetter = {
  set(carrier: (name: string, value: string) => void, key: string, value: string) {
    carrier(key, value);
  },
};

/** One attempt's span and the attributes the metrics need. */
class AttemptTrace implements AttemptTelemetry {
  readonly metricAttributes: Attributes = {};
  http = false;
  ended = false;
  /** When the operation settled (monotonic ms), and whether it succeeded. */
  settledAt: number | undefined;
  succeeded: boolean | undefined;

  constructor(
    readonly span: Span | undefined,
    readonly context: Context,
    private readonly propagator: TextMapPropagator,
    readonly startMs: number,
  ) {}

  settle(atMs: number, ok: boolean): void {
    if (this.settledAt !== undefined) return;
    this.settledAt = atMs;
    this.succeeded = ok;
  }

  updateName(name: string): void {
    this.span?.updateName(name);
  }

  setAttribute(key: string, value: string | number | boolean): void {
    this.span?.setAttribute(key, value);
    // Only low-cardinality attributes go on metrics (never the URL).
    if (key === 'http.request.method') this.http = true;
    if (key !== 'url.full' && key !== 'kindly.attempt') this.metricAttributes[key] = value;
  }

  inject(set: (name: string, value: string) => void): void {
    if (this.span === undefined) return;
    this.propagator.inject(this.context, set, carrierSetter);
  }
}

/** Everything known about one logical call while it runs. */
class CallTrace {
  readonly span: Span | undefined;
  readonly context: Context;
  private readonly startMs: number;
  /** The attempt running now; with hedging, the first attempt and its hedges. */
  private open: AttemptTrace[] = [];
  private attempts = 0;
  private gaveUp: { reason: string; outcome: string } | undefined;
  private fellBack = false;

  constructor(
    readonly downstream: Downstream,
    private readonly tracer: Tracer | undefined,
    private readonly instruments: Instruments | undefined,
    private readonly propagator: TextMapPropagator,
    private readonly base: Attributes,
  ) {
    const parent = context.active();
    this.startMs = downstream.clock.monotonic();
    this.span = tracer?.startSpan(
      downstream.name,
      { kind: SpanKind.INTERNAL, attributes: { 'kindly.downstream': downstream.name } },
      parent,
    );
    this.context = (this.span === undefined ? parent : trace.setSpan(parent, this.span)).setValue(CALL_KEY, this);
  }

  /** Runs one attempt with its span current and `ctx.telemetry` set for the HTTP/gRPC layer. */
  runAttempt<T>(ctx: CallContext, operation: Operation<T>): T | PromiseLike<T> {
    // A new attempt number ends whatever the previous one left open; the same number again is
    // a hedge of the attempt still running.
    if (ctx.attempt !== this.attempts) this.closeAttempts('unknown', undefined);
    const hedge = this.open.length;
    this.attempts = ctx.attempt;
    const attributes: Attributes = { 'kindly.downstream': this.downstream.name, 'kindly.attempt': ctx.attempt };
    if (ctx.attempt > 1) attributes['http.request.resend_count'] = ctx.attempt - 1;
    if (hedge > 0) attributes['kindly.hedge'] = hedge;
    const span = this.tracer?.startSpan(this.downstream.name, { kind: SpanKind.CLIENT, attributes }, this.context);
    const spanContext = span === undefined ? this.context : trace.setSpan(this.context, span);
    const clock = this.downstream.clock;
    const attempt = new AttemptTrace(span, spanContext, this.propagator, clock.monotonic());
    this.open.push(attempt);
    ctx.telemetry = attempt;
    const result = context.with(spanContext, () => operation(ctx));
    if (result !== null && typeof result === 'object' && typeof (result as PromiseLike<T>).then === 'function') {
      (result as PromiseLike<T>).then(
        () => attempt.settle(clock.monotonic(), true),
        () => attempt.settle(clock.monotonic(), false),
      );
    } else attempt.settle(clock.monotonic(), true);
    return result;
  }

  onEvent(event: KindlyEvent): void {
    const span = this.span;
    switch (event.type) {
      case 'attempt-end': {
        const c = event.classification;
        if (c?.status !== undefined) for (const a of this.open) a.setAttribute('http.response.status_code', c.status);
        this.closeAttempts(event.outcome, event.outcome === 'ok' ? undefined : errorType(event.classification, event.error));
        return;
      }
      case 'retry-scheduled': {
        span?.addEvent(
          'kindly.retry.wait',
          compact({
            'kindly.next_attempt': event.nextAttempt,
            'kindly.delay_ms': event.delayMs,
            'kindly.backoff_ms': event.backoffMs,
            'kindly.hint_ms': event.hintMs,
            'kindly.hint_source': event.hintSource,
            'kindly.cause': event.cause,
          }),
        );
        this.instruments?.retryWait.record(event.delayMs / 1000, this.base);
        return;
      }
      case 'pacing-delay': {
        span?.addEvent('kindly.pacing.wait', compact({ 'kindly.delay_ms': event.delayMs, 'kindly.rate': event.rate }));
        this.instruments?.pacing.record(event.delayMs / 1000, this.base);
        return;
      }
      case 'hint':
        span?.addEvent('kindly.hint', {
          'kindly.hint_ms': event.hintMs,
          'kindly.hint_source': event.source,
          'kindly.honoured': event.honoured,
        });
        return;
      case 'budget-exhausted':
        span?.addEvent('kindly.budget.exhausted', { 'kindly.budget_key': event.key });
        return;
      case 'bulkhead-rejected':
        span?.addEvent('kindly.bulkhead.rejected', { 'kindly.why': event.why });
        return;
      case 'breaker-state':
        span?.addEvent('kindly.breaker.state', { 'kindly.key': event.key, 'kindly.from': event.from, 'kindly.to': event.to });
        return;
      case 'give-up':
        this.gaveUp = { reason: event.reason, outcome: event.outcome };
        this.closeAttempts('unknown', event.reason);
        return;
      case 'fallback':
        this.fellBack = true;
        span?.addEvent('kindly.fallback', { 'kindly.give_up.reason': event.reason });
        return;
      default:
        return;
    }
  }

  /** The call settled (`error` undefined: it resolved, possibly through a fallback). */
  end(error: unknown): void {
    const gaveUp = this.gaveUp;
    this.closeAttempts('unknown', gaveUp?.reason ?? (error === undefined ? undefined : errorName(error)));
    const outcome = gaveUp === undefined && error === undefined ? 'ok' : (gaveUp?.outcome ?? 'unknown');
    const attributes: Attributes = { ...this.base, 'kindly.outcome': outcome };
    if (gaveUp !== undefined) {
      attributes['kindly.give_up.reason'] = gaveUp.reason;
      attributes['error.type'] = gaveUp.reason;
    } else if (error !== undefined) attributes['error.type'] = errorName(error);
    const span = this.span;
    if (span !== undefined) {
      span.setAttribute('kindly.outcome', outcome);
      if (gaveUp !== undefined) span.setAttribute('kindly.give_up.reason', gaveUp.reason);
      if (attributes['error.type'] !== undefined) span.setAttribute('error.type', attributes['error.type']);
      span.setAttribute('kindly.attempts', this.attempts);
      if (this.fellBack) span.setAttribute('kindly.fallback', true);
      if (outcome !== 'ok') span.setStatus({ code: SpanStatusCode.ERROR, message: gaveUp?.reason ?? errorName(error) });
      span.end();
    }
    this.instruments?.call.record((this.downstream.clock.monotonic() - this.startMs) / 1000, attributes);
  }

  /**
   * Ends the open attempt spans with the attempt's outcome. With hedges, a member that
   * succeeded is `ok` and one that had not answered when the group ended lost the race.
   */
  private closeAttempts(outcome: string, error: string | undefined): void {
    const open = this.open;
    if (open.length === 0) return;
    this.open = [];
    const hedged = open.length > 1;
    for (const attempt of open) {
      if (!hedged) this.closeAttempt(attempt, outcome, error);
      else if (attempt.succeeded === true) this.closeAttempt(attempt, 'ok', undefined);
      else if (attempt.settledAt === undefined && outcome === 'ok') this.closeAttempt(attempt, 'unknown', 'hedge-lost');
      else this.closeAttempt(attempt, outcome === 'ok' ? 'unknown' : outcome, error ?? 'hedge-lost');
    }
  }

  private closeAttempt(attempt: AttemptTrace, outcome: string, error: string | undefined): void {
    if (attempt.ended) return;
    attempt.ended = true;
    if (error !== undefined) attempt.setAttribute('error.type', error);
    const span = attempt.span;
    if (span !== undefined) {
      span.setAttribute('kindly.outcome', outcome);
      if (error !== undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    }
    const instruments = this.instruments;
    if (instruments !== undefined) {
      const endMs = attempt.settledAt ?? this.downstream.clock.monotonic();
      const seconds = (endMs - attempt.startMs) / 1000;
      const attributes = { ...this.base, ...attempt.metricAttributes };
      if (attempt.http) instruments.http.record(seconds, attributes);
      else instruments.attempt.record(seconds, { ...attributes, 'kindly.outcome': outcome });
    }
  }
}

/** `error.type` as the conventions want it: the status code, else a low-cardinality error name. */
function errorType(classification: { status?: number; code?: string } | undefined, error: unknown): string {
  if (classification?.status !== undefined) return String(classification.status);
  if (classification?.code !== undefined) return classification.code;
  return errorName(error);
}

function errorName(error: unknown): string {
  if (error instanceof Error) return error.name;
  return '_OTHER';
}

function compact(attributes: Record<string, string | number | boolean | undefined>): Attributes {
  const out: Attributes = {};
  for (const [k, v] of Object.entries(attributes)) if (v !== undefined) out[k] = v;
  return out;
}
