import { Metadata, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { isGiveUpError } from '../../src/errors/errors.js';
import { GrpcStatusError, grpcClientInterceptor } from '../../src/grpc/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import type { KindlyEvent } from '../../src/telemetry/events.js';
import { ask, type EchoClient, type EchoServer, echoClient, startEchoServer } from './support/echo-service.js';

const servers: EchoServer[] = [];
const clients: EchoClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const fast = { maxAttempts: 3, backoff: { shape: 'constant' as const, baseMs: 1, jitter: 'none' as const } };

/** A server answering each call with the next status of `script` (then OK), counting calls. */
async function scripted(script: Array<{ code: number; trailers?: Record<string, string> }>) {
  const seen: Array<{ previous: string[] }> = [];
  const server = await startEchoServer({
    call: (call, callback) => {
      seen.push({ previous: call.metadata.get('grpc-previous-rpc-attempts') as string[] });
      const next = script[seen.length - 1];
      if (next === undefined) return callback(null, { attempt: seen.length });
      const metadata = new Metadata();
      for (const [k, v] of Object.entries(next.trailers ?? {})) metadata.set(k, v);
      callback({ code: next.code, details: `scripted ${next.code}`, metadata });
    },
  });
  servers.push(server);
  return { server, seen };
}

function connect(address: string, d: ReturnType<typeof downstream>, options?: Parameters<typeof grpcClientInterceptor>[1]) {
  const client = echoClient(address, [grpcClientInterceptor(d, options)]);
  clients.push(client);
  return client;
}

describe('grpcClientInterceptor against a real grpc-js server', () => {
  it('retries UNAVAILABLE, sends grpc-previous-rpc-attempts, and returns the response that finally came', async () => {
    const { server, seen } = await scripted([{ code: status.UNAVAILABLE }, { code: status.UNAVAILABLE }]);
    const d = downstream('echo', { retry: fast, budget: false });
    const { response, error } = await ask(connect(server.address, d), { hi: 1 });
    expect(error).toBeUndefined();
    expect(response).toEqual({ attempt: 3 });
    expect(seen.map((s) => s.previous)).toEqual([[], ['1'], ['2']]);
    expect(d.stats()).toMatchObject({ requests: 1, attempts: 3, retries: 2, successes: 1 });
  });

  it('does not retry a client error (INVALID_ARGUMENT): one attempt, the status reaches the caller', async () => {
    const { server, seen } = await scripted([{ code: status.INVALID_ARGUMENT }]);
    const d = downstream('echo', { retry: fast, budget: false });
    const reasons: string[] = [];
    d.on('give-up', (e) => reasons.push(e.reason));
    const { error } = await ask(connect(server.address, d), {});
    expect(error?.code).toBe(status.INVALID_ARGUMENT);
    expect(error?.details).toBe('scripted 3');
    expect(seen).toHaveLength(1);
    expect(reasons).toEqual(['not-retryable']);
  });

  it('DEADLINE_EXCEEDED is unknown: retried for an idempotent method, not for a non-idempotent one', async () => {
    const idem = await scripted([{ code: status.DEADLINE_EXCEEDED }]);
    const a = await ask(connect(idem.server.address, downstream('a', { retry: fast, budget: false })), {});
    expect(a.error).toBeUndefined();
    expect(idem.seen).toHaveLength(2);

    const once = await scripted([{ code: status.DEADLINE_EXCEEDED }]);
    const d = downstream('b', { retry: fast, budget: false });
    const reasons: string[] = [];
    d.on('give-up', (e) => reasons.push(`${e.reason}/${e.outcome}`));
    const b = await ask(connect(once.server.address, d, { idempotent: (path) => !path.endsWith('/Call') }), {});
    expect(b.error?.code).toBe(status.DEADLINE_EXCEEDED);
    expect(once.seen).toHaveLength(1);
    expect(reasons).toEqual(['not-idempotent/unknown']);
  });

  it('honours grpc-retry-pushback-ms as the wait before the retry', async () => {
    const { server, seen } = await scripted([{ code: status.RESOURCE_EXHAUSTED, trailers: { 'grpc-retry-pushback-ms': '40' } }]);
    const d = downstream('echo', { retry: fast, budget: false });
    const events: KindlyEvent[] = [];
    d.onAny((e) => events.push(e));
    const { error } = await ask(connect(server.address, d), {});
    expect(error).toBeUndefined();
    expect(seen).toHaveLength(2);
    const scheduled = events.find((e) => e.type === 'retry-scheduled');
    expect(scheduled).toMatchObject({ hintSource: 'grpc-retry-pushback-ms', cause: 'RESOURCE_EXHAUSTED' });
    // The hint is a minimum (kindly adds hint jitter so that told-to-wait callers spread out).
    expect(scheduled?.type === 'retry-scheduled' && scheduled.delayMs).toBeGreaterThanOrEqual(40);
    const failed = events.find((e) => e.type === 'attempt-end' && e.outcome !== 'ok');
    expect(failed?.type === 'attempt-end' && failed.classification?.hintMs).toBe(40);
  });

  it('a negative grpc-retry-pushback-ms means do not retry', async () => {
    const { server, seen } = await scripted([{ code: status.UNAVAILABLE, trailers: { 'grpc-retry-pushback-ms': '-1' } }]);
    const d = downstream('echo', { retry: fast, budget: false });
    const reasons: string[] = [];
    d.on('give-up', (e) => reasons.push(e.reason));
    const { error } = await ask(connect(server.address, d), {});
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(seen).toHaveLength(1);
    expect(reasons).toEqual(['dont-retry']);
  });

  it("keys breakers per method with key: 'method': one method's open circuit leaves the other alone", async () => {
    const server = await startEchoServer({
      call: (_call, callback) => callback({ code: status.UNAVAILABLE, details: 'down' }),
      other: (_call, callback) => callback(null, { ok: true }),
    });
    servers.push(server);
    const d = downstream('echo', {
      retry: false,
      budget: false,
      breaker: { mode: 'consecutive', threshold: 2, breakMs: 60_000 },
    });
    const opened: string[] = [];
    d.on('breaker-state', (e) => {
      if (e.to === 'open') opened.push(e.key);
    });
    const client = connect(server.address, d, { key: 'method' });
    await ask(client, {});
    await ask(client, {});
    const rejected = await ask(client, {});
    expect(opened).toEqual(['/kindly.test.Echo/Call']);
    expect(rejected.error?.code).toBe(status.UNAVAILABLE);
    expect(rejected.error?.details).toMatch(/circuit/i);
    expect(Number(rejected.error?.metadata.get('grpc-retry-pushback-ms')[0])).toBeGreaterThan(0);
    expect((await ask(client, {}, 'other')).response).toEqual({ ok: true });
  });

  it('a call the caller cancels while waiting to retry ends CANCELLED, and no further attempt starts', async () => {
    let calls = 0;
    const server = await startEchoServer({
      call: (_call, callback) => {
        calls++;
        callback({ code: status.UNAVAILABLE, details: 'down' });
      },
    });
    servers.push(server);
    const d = downstream('echo', {
      retry: { maxAttempts: 5, backoff: { shape: 'constant', baseMs: 60_000, jitter: 'none' } },
      budget: false,
    });
    const client = connect(server.address, d);
    const result = await new Promise<{ code?: number }>((resolve) => {
      const call = client.call({}, (error) => resolve({ code: error?.code })) as { cancel(): void };
      d.on('retry-scheduled', () => call.cancel());
    });
    expect(result.code).toBe(status.CANCELLED);
    expect(calls).toBe(1);
  });

  it('validates its options when built, every problem at once', () => {
    const d = downstream('echo');
    expect(() =>
      grpcClientInterceptor(d, { key: 'host' as never, retryableCodes: [0, 17], idempotent: 'yes' as never, extra: 1 } as never),
    ).toThrow(/Unknown option `extra`[\s\S]*`key`[\s\S]*`idempotent`[\s\S]*`retryableCodes`/);
  });

  it('the give-up error keeps the last status as its cause', async () => {
    const { server } = await scripted([{ code: status.UNAVAILABLE }, { code: status.UNAVAILABLE }, { code: status.UNAVAILABLE }]);
    const d = downstream('echo', { retry: fast, budget: false });
    let cause: unknown;
    d.on('attempt-end', (e) => {
      cause = e.error;
    });
    await ask(connect(server.address, d), {});
    expect(cause).toBeInstanceOf(GrpcStatusError);
    expect((cause as GrpcStatusError).grpcCode).toBe(status.UNAVAILABLE);
    expect(isGiveUpError(cause)).toBe(false);
  });

  it("ends with the last attempt's status and trailers when the downstream's fallback answers, leaving nothing unhandled", async () => {
    const { server, seen } = await scripted([
      { code: status.UNAVAILABLE },
      { code: status.UNAVAILABLE },
      { code: status.UNAVAILABLE, trailers: { 'x-last': 'yes' } },
    ]);
    let fallbacks = 0;
    const d = downstream('echo', {
      retry: fast,
      budget: false,
      fallback: () => {
        fallbacks++;
        return { cached: true };
      },
    });
    const { response, error } = await ask(connect(server.address, d), {});
    expect(response).toBeUndefined();
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toBe('scripted 14');
    expect(error?.metadata.get('x-last')).toEqual(['yes']);
    expect(seen).toHaveLength(3);
    expect(fallbacks).toBe(1);
  });

  it("ends UNAVAILABLE when the downstream's fallback answers a call refused before any attempt (open breaker)", async () => {
    const { server, seen } = await scripted([]);
    const d = downstream('echo', { retry: fast, budget: false, breaker: true, fallback: () => ({ cached: true }) });
    d.isolateBreaker('/kindly.test.Echo');
    const { response, error } = await ask(connect(server.address, d), {});
    expect(response).toBeUndefined();
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.details).toMatch(/gave up before any attempt was made .*fallback cannot answer a gRPC call/);
    expect(seen).toHaveLength(0);
  });

  it('a key function that throws ends the call with INTERNAL naming the error instead of escaping from the call', async () => {
    const { server, seen } = await scripted([]);
    const d = downstream('echo', { retry: fast, budget: false });
    const client = connect(server.address, d, {
      key: () => {
        throw new Error('no lane for this path');
      },
    });
    const { error } = await ask(client, {});
    expect(error?.code).toBe(status.INTERNAL);
    expect(error?.details).toBe('kindly gRPC interceptor: no lane for this path');
    expect(seen).toHaveLength(0);
  });
});
