import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  AggregationTemporality,
  DataPointType,
  type HistogramMetricData,
  MeterProvider,
  MetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fetchThrough } from '../../src/http/index.js';
import { downstream } from '../../src/index.js';
import { instrumentDownstreams } from '../../src/telemetry/opentelemetry.js';
import { HTTP_DURATION_BUCKETS, WAIT_BUCKETS } from '../../src/telemetry/otel-calls.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { type Loopback, listen } from '../http/support/loopback.js';

class CollectingReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

async function histograms(reader: CollectingReader): Promise<Map<string, HistogramMetricData>> {
  const { resourceMetrics } = await reader.collect();
  const out = new Map<string, HistogramMetricData>();
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.dataPointType === DataPointType.HISTOGRAM) out.set(metric.descriptor.name, metric as HistogramMetricData);
    }
  }
  return out;
}

let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;
const contextManager = new AsyncLocalStorageContextManager();
beforeEach(() => {
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  context.setGlobalContextManager(contextManager.enable());
});
const servers: Loopback[] = [];
afterEach(async () => {
  propagation.disable();
  context.disable();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const tracer = () => provider.getTracer('kindly-test');
const byName = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;

/** An operation that fails with `statuses` in turn, then succeeds. */
function flaky(statuses: number[]) {
  let n = 0;
  return async () => {
    const status = statuses[n++];
    if (status !== undefined) throw Object.assign(new Error(`status ${status}`), { status });
    return 'ok';
  };
}

describe('spans per call and per attempt (in-memory exporter)', () => {
  it('one INTERNAL call span, one CLIENT span per attempt, resend_count on the retry, the wait as an event', async () => {
    const clock = new VirtualClock();
    const d = downstream('payments', {
      clock,
      random: new SeededRandom(7),
      retry: { backoff: { shape: 'constant', baseMs: 100, jitter: 'none' } },
    });
    const stop = instrumentDownstreams(d, { tracer: tracer() });
    const result = d.call(flaky([503]));
    await clock.runAll();
    expect(await result).toBe('ok');
    stop();

    const spans = exporter.getFinishedSpans();
    const call = spans.find((s) => s.kind === SpanKind.INTERNAL) as ReadableSpan;
    const attempts = spans.filter((s) => s.kind === SpanKind.CLIENT);
    expect(call.name).toBe('payments');
    expect(call.attributes).toMatchObject({ 'kindly.downstream': 'payments', 'kindly.outcome': 'ok', 'kindly.attempts': 2 });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);
    expect(attempts.map((s) => s.attributes['kindly.attempt'])).toEqual([1, 2]);
    expect(attempts.map((s) => parentOf(s))).toEqual([call.spanContext().spanId, call.spanContext().spanId]);
    expect(attempts[0]?.attributes).toMatchObject({
      'kindly.outcome': 'failed',
      'error.type': '503',
      'http.response.status_code': 503,
    });
    expect(attempts[0]?.attributes['http.request.resend_count']).toBeUndefined();
    expect(attempts[0]?.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempts[1]?.attributes).toMatchObject({ 'kindly.outcome': 'ok', 'http.request.resend_count': 1 });
    const wait = call.events.find((e) => e.name === 'kindly.retry.wait');
    expect(wait?.attributes).toMatchObject({ 'kindly.next_attempt': 2, 'kindly.delay_ms': 100, 'kindly.cause': 'status 503' });
  });

  it('a call that gives up: the call span is an error with the reason and outcome, each attempt span closed', async () => {
    const clock = new VirtualClock();
    const d = downstream('search', {
      clock,
      random: new SeededRandom(7),
      retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 10, jitter: 'none' } },
    });
    instrumentDownstreams(d, { tracer: tracer() });
    const result = d.call(flaky([500, 500])).catch((e: unknown) => e);
    await clock.runAll();
    await result;
    const spans = exporter.getFinishedSpans();
    const call = spans.find((s) => s.kind === SpanKind.INTERNAL) as ReadableSpan;
    expect(call.status.code).toBe(SpanStatusCode.ERROR);
    expect(call.attributes).toMatchObject({
      'kindly.outcome': 'unknown',
      'kindly.give_up.reason': 'max-attempts',
      'error.type': 'max-attempts',
      'kindly.attempts': 2,
    });
    expect(spans.filter((s) => s.kind === SpanKind.CLIENT).map((s) => s.attributes['kindly.outcome'])).toEqual([
      'unknown',
      'unknown',
    ]);
  });

  it('the call span is a child of the span current when the call was made', async () => {
    const d = downstream('inventory', { retry: false });
    instrumentDownstreams(d, { tracer: tracer() });
    await tracer().startActiveSpan('handle request', async (request) => {
      await d.call(async () => 'ok');
      request.end();
    });
    const spans = exporter.getFinishedSpans();
    const request = byName(spans, 'handle request')[0] as ReadableSpan;
    const call = spans.find((s) => s.kind === SpanKind.INTERNAL && s.name === 'inventory') as ReadableSpan;
    expect(parentOf(call)).toBe(request.spanContext().spanId);
    expect(call.spanContext().traceId).toBe(request.spanContext().traceId);
  });

  it('the attempt span is current inside the operation, so the user’s own spans nest under it', async () => {
    const d = downstream('db', { retry: false });
    instrumentDownstreams(d, { tracer: tracer() });
    await d.call(async () => {
      tracer().startSpan('query').end();
      return 1;
    });
    const spans = exporter.getFinishedSpans();
    const attempt = spans.find((s) => s.kind === SpanKind.CLIENT) as ReadableSpan;
    expect(parentOf(byName(spans, 'query')[0] as ReadableSpan)).toBe(attempt.spanContext().spanId);
  });

  it('concurrent calls keep their own spans and events apart', async () => {
    const clock = new VirtualClock();
    const d = downstream('pair', { clock, random: new SeededRandom(3), retry: { backoff: { baseMs: 5, jitter: 'none' } } });
    instrumentDownstreams(d, { tracer: tracer() });
    const a = d.call(flaky([503, 503]));
    const b = d.call(flaky([]));
    await clock.runAll();
    await Promise.all([a, b]);
    const spans = exporter.getFinishedSpans();
    const calls = spans.filter((s) => s.kind === SpanKind.INTERNAL);
    expect(calls.map((s) => s.attributes['kindly.attempts']).sort()).toEqual([1, 3]);
    for (const call of calls) {
      const children = spans.filter((s) => parentOf(s) === call.spanContext().spanId);
      expect(children).toHaveLength(call.attributes['kindly.attempts'] as number);
      expect(call.events.filter((e) => e.name === 'kindly.retry.wait')).toHaveLength(children.length - 1);
    }
  });

  it('a call cut short by a timer that fires inside another call keeps its events on its own span', async () => {
    const clock = new VirtualClock();
    const d = downstream('timers', { clock, random: new SeededRandom(5), retry: false, attemptTimeoutMs: 1_000 });
    instrumentDownstreams(d, { tracer: tracer() });
    const b = d.call(() => new Promise<never>(() => undefined)).catch((e: unknown) => e);
    await clock.advance(500);
    // Call A moves time on from inside its own operation: B's attempt timeout fires in A's
    // context (A's own is due at 1,500 ms).
    const a = d.call(async () => {
      await clock.advance(500);
      return 'a';
    });
    expect(await a).toBe('a');
    expect(await b).toMatchObject({ reason: 'max-attempts' });
    const calls = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.INTERNAL);
    const failed = calls.find((s) => s.status.code === SpanStatusCode.ERROR) as ReadableSpan;
    const served = calls.find((s) => s.status.code !== SpanStatusCode.ERROR) as ReadableSpan;
    expect(failed.attributes).toMatchObject({
      'kindly.give_up.reason': 'max-attempts',
      'error.type': 'max-attempts',
      'kindly.attempts': 1,
    });
    expect(served.attributes['kindly.give_up.reason']).toBeUndefined();
    expect(served.attributes['error.type']).toBeUndefined();
    const attempts = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    const bAttempt = attempts.find((s) => parentOf(s) === failed.spanContext().spanId) as ReadableSpan;
    expect(bAttempt.attributes['error.type']).toBe('ERR_KINDLY_ATTEMPT_TIMEOUT');
  });

  it('without a context manager (spans then cannot nest implicitly) events still reach their own call', async () => {
    context.disable();
    const clock = new VirtualClock();
    const d = downstream('pair', { clock, random: new SeededRandom(3), retry: { backoff: { baseMs: 5, jitter: 'none' } } });
    instrumentDownstreams(d, { tracer: tracer() });
    const a = d.call(flaky([503, 503]));
    const b = d.call(flaky([503]));
    await clock.runAll();
    await Promise.all([a, b]);
    const calls = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.INTERNAL);
    expect(calls.map((s) => s.attributes['kindly.attempts']).sort()).toEqual([2, 3]);
    expect(calls.map((s) => s.events.filter((e) => e.name === 'kindly.retry.wait').length).sort()).toEqual([1, 2]);
  });

  it('a hedged attempt: both members get a span; the winner is ok, the slow one lost the race', async () => {
    const clock = new VirtualClock();
    const d = downstream('hedged', {
      clock,
      random: new SeededRandom(14),
      retry: false,
      hedging: { delayMs: 50, maxExtraLoad: 1 },
    });
    instrumentDownstreams(d, { tracer: tracer() });
    let n = 0;
    const result = d.call(async ({ signal }) => {
      await clock.sleep(n++ === 0 ? 1_000 : 10, signal);
      return 'done';
    });
    await clock.runAll();
    expect(await result).toBe('done');
    const attempts = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(
      attempts.map((s) => [s.attributes['kindly.hedge'] ?? 0, s.attributes['kindly.outcome'], s.attributes['error.type']]),
    ).toEqual([
      [0, 'unknown', 'hedge-lost'],
      [1, 'ok', undefined],
    ]);
  });

  it('after stop(), calls make no spans', async () => {
    const d = downstream('quiet', { retry: false });
    const stop = instrumentDownstreams(d, { tracer: tracer() });
    stop();
    await d.call(async () => 1);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
  });

  it('needs a tracer or a meter', () => {
    expect(() => instrumentDownstreams(downstream('x'), {})).toThrow(/meter.*tracer/);
  });
});

describe('HTTP attempts follow the HTTP client conventions (real server on loopback)', () => {
  async function server() {
    const seen: Array<string | undefined> = [];
    let n = 0;
    const s = await listen((req, res) => {
      seen.push(req.headers.traceparent as string | undefined);
      res.writeHead(n++ === 0 ? 503 : 200).end('x');
    });
    servers.push(s);
    return { url: s.url, seen, port: Number(new URL(s.url).port) };
  }
  const fast = { retry: { backoff: { shape: 'constant' as const, baseMs: 1, jitter: 'none' as const } } };

  it('names each attempt by method, with server, redacted url.full and status; traceparent sent when a propagator is set', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const { url, seen, port } = await server();
    const d = downstream('api', fast);
    instrumentDownstreams(d, { tracer: tracer() });
    const response = await fetchThrough(d, `${url}/items?token=s3cret&page=2`);
    expect(response.status).toBe(200);
    const attempts = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts.map((s) => s.name)).toEqual(['GET', 'GET']);
    expect(attempts[0]?.attributes).toMatchObject({
      'http.request.method': 'GET',
      'server.address': '127.0.0.1',
      'server.port': port,
      'http.response.status_code': 503,
      'error.type': '503',
    });
    expect(attempts[0]?.attributes['url.full']).not.toContain('s3cret');
    expect(attempts[0]?.attributes['url.full']).toContain('page=2');
    expect(attempts[1]?.attributes).toMatchObject({ 'http.response.status_code': 200, 'http.request.resend_count': 1 });
    // Each attempt carried its own span as the parent of whatever the server does.
    expect(seen).toEqual(attempts.map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`));
  });

  it('sends no traceparent when the OpenTelemetry setup has no propagator', async () => {
    const { url, seen } = await server();
    const d = downstream('api', fast);
    instrumentDownstreams(d, { tracer: tracer() });
    await fetchThrough(d, url);
    expect(seen).toEqual([undefined, undefined]);
  });
});

describe('histograms (real MeterProvider)', () => {
  it('http.client.request.duration per attempt, retry waits, call durations, with the advised buckets', async () => {
    const reader = new CollectingReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    let n = 0;
    const s = await listen((_req, res) => res.writeHead(n++ === 0 ? 429 : 200, { 'retry-after': '0' }).end());
    servers.push(s);
    const d = downstream('api', { retry: { backoff: { shape: 'constant', baseMs: 20, jitter: 'none' } } });
    instrumentDownstreams(d, { meter: meterProvider.getMeter('test') });
    expect((await fetchThrough(d, s.url)).status).toBe(200);

    const seen = await histograms(reader);
    const http = seen.get('http.client.request.duration') as HistogramMetricData;
    expect(http.descriptor.unit).toBe('s');
    const statuses = http.dataPoints.map((p) => [p.attributes['http.response.status_code'], p.value.count]);
    expect(statuses).toEqual(
      expect.arrayContaining([
        [429, 1],
        [200, 1],
      ]),
    );
    expect(http.dataPoints.every((p) => p.attributes['http.request.method'] === 'GET' && p.attributes.downstream === 'api')).toBe(
      true,
    );
    expect(http.dataPoints.every((p) => p.attributes['url.full'] === undefined)).toBe(true);
    expect(http.dataPoints[0]?.value.buckets.boundaries).toEqual([...HTTP_DURATION_BUCKETS]);
    const wait = seen.get('kindly.retry.wait.duration') as HistogramMetricData;
    expect(wait.dataPoints[0]?.value.count).toBe(1);
    expect(wait.dataPoints[0]?.value.min).toBeGreaterThanOrEqual(0.02);
    expect(wait.dataPoints[0]?.value.buckets.boundaries).toEqual([...WAIT_BUCKETS]);
    const call = seen.get('kindly.call.duration') as HistogramMetricData;
    expect(call.dataPoints.map((p) => [p.attributes['kindly.outcome'], p.value.count])).toEqual([['ok', 1]]);
  });

  it('kindly.pacing.delay.duration records the time attempts were held back', async () => {
    const reader = new CollectingReader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const clock = new VirtualClock();
    const d = downstream('paced', {
      clock,
      random: new SeededRandom(11),
      retry: { maxAttempts: 4, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } },
      pacing: {},
    });
    instrumentDownstreams(d, { meter: meterProvider.getMeter('test') });
    const delays: number[] = [];
    d.on('pacing-delay', (e) => delays.push(e.delayMs));
    const calls = Array.from({ length: 20 }, () => d.call(flaky([429, 429])).catch(() => undefined));
    await clock.runAll();
    await Promise.all(calls);
    const seen = await histograms(reader);
    const pacing = seen.get('kindly.pacing.delay.duration');
    expect(delays.length).toBeGreaterThan(0);
    expect(pacing?.dataPoints[0]?.value.count).toBe(delays.length);
    expect(pacing?.dataPoints[0]?.value.sum).toBeCloseTo(delays.reduce((a, b) => a + b, 0) / 1000, 6);
  });
});

describe('context propagation sanity', () => {
  it('no span is left current after a call', async () => {
    const d = downstream('x', { retry: false });
    instrumentDownstreams(d, { tracer: tracer() });
    await d.call(async () => 1);
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
