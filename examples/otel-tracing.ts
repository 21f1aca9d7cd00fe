/**
 * OpenTelemetry traces: one span per kindly call, one per attempt under it, waits as events,
 * and the attempt's `traceparent` on the outbound request (because this setup registers the
 * W3C propagator — without one, kindly sends none). Spans go to an in-memory exporter and are
 * printed as a tree.
 *
 * Run: npx tsx examples/otel-tracing.ts
 */

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { downstream } from 'kindly-calls';
import { fetchThrough } from 'kindly-calls/http';
import { instrumentDownstreams } from 'kindly-calls/otel';

// The usual Node setup: a context manager, a propagator, a tracer provider.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('shop');

// A service that is busy once (503, Retry-After: 0), then answers; it records the traceparent it got.
const received: string[] = [];
let n = 0;
const service = createServer((req, res) => {
  received.push(String(req.headers.traceparent));
  res.writeHead(n++ === 0 ? 503 : 200, { 'retry-after': '0' }).end();
});
await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}/stock`;

const stock = downstream('stock', { retry: { backoff: { baseMs: 10 } } });
const stop = instrumentDownstreams(stock, { tracer });

await tracer.startActiveSpan('GET /checkout', async (request) => {
  await fetchThrough(stock, url);
  request.end();
});

const spans = exporter.getFinishedSpans();
const depth = (id: string | undefined): number => {
  const parent = spans.find((s) => s.spanContext().spanId === id);
  return parent === undefined ? 0 : 1 + depth(parent.parentSpanContext?.spanId);
};
const byStart = [...spans].sort((a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1]);
for (const span of byStart) {
  const attributes = Object.entries(span.attributes)
    .filter(([key]) => !['url.full', 'server.port'].includes(key))
    .map(([key, value]) => `${key}=${value}`)
    .join(' ');
  const events = span.events.map(
    (e) =>
      ` [event ${e.name}: ${Object.entries(e.attributes ?? {})
        .map(([key, value]) => `${key}=${typeof value === 'number' ? Math.round(value) : value}`)
        .join(' ')}]`,
  );
  console.log(
    `${'  '.repeat(depth(span.parentSpanContext?.spanId))}${span.name} (${span.kind === 2 ? 'CLIENT' : 'INTERNAL'}) ${attributes}${events.join('')}`,
  );
}
const attemptIds = spans.filter((s) => s.kind === 2).map((s) => s.spanContext().spanId);
console.log(`each request carried its attempt's span id: ${received.every((t, i) => t.split('-')[2] === attemptIds[i])}`);

stop();
trace.disable();
service.close();
