import { status } from '@grpc/grpc-js';
import { propagation, SpanKind } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { grpcClientInterceptor } from '../../src/grpc/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { instrumentDownstreams } from '../../src/telemetry/opentelemetry.js';
import { ask, type EchoClient, type EchoServer, echoClient, startEchoServer } from './support/echo-service.js';

const servers: EchoServer[] = [];
const clients: EchoClient[] = [];
afterEach(async () => {
  propagation.disable();
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('gRPC attempts under OpenTelemetry', () => {
  it('names each attempt pkg.Service/Method with the RPC attributes, and sends traceparent in the metadata', async () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    const exporter = new InMemorySpanExporter();
    const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('t');
    const seen: unknown[] = [];
    let n = 0;
    const server = await startEchoServer({
      call: (call, callback) => {
        seen.push(call.metadata.get('traceparent')[0]);
        if (n++ === 0) callback({ code: status.UNAVAILABLE, details: 'once' });
        else callback(null, { ok: true });
      },
    });
    servers.push(server);
    const d = downstream('echo', { retry: { backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } });
    instrumentDownstreams(d, { tracer });
    const client = echoClient(server.address, [grpcClientInterceptor(d)]);
    clients.push(client);
    expect((await ask(client, {})).response).toEqual({ ok: true });
    const attempts = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.CLIENT);
    expect(attempts.map((s) => s.name)).toEqual(['kindly.test.Echo/Call', 'kindly.test.Echo/Call']);
    expect(attempts[0]?.attributes).toMatchObject({
      'rpc.system': 'grpc',
      'rpc.service': 'kindly.test.Echo',
      'rpc.method': 'Call',
      'rpc.grpc.status_code': status.UNAVAILABLE,
      'error.type': 'UNAVAILABLE',
    });
    expect(attempts[1]?.attributes).toMatchObject({ 'rpc.grpc.status_code': status.OK, 'http.request.resend_count': 1 });
    expect(seen).toEqual(attempts.map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`));
  });
});
