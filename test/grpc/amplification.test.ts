import { InterceptingCall, Metadata, type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { grpcClientInterceptor, grpcServerInterceptor } from '../../src/grpc/index.js';
import { currentDeadlineScope } from '../../src/runtime/deadline-context.js';
import { downstream } from '../../src/runtime/downstream.js';
import { systemClock } from '../../src/time/system-clock.js';
import { ask, type EchoClient, type EchoServer, echoClient, startEchoServer } from './support/echo-service.js';

/**
 * client → A → B → C over real grpc-js servers on loopback, every caller with 3 attempts;
 * C always answers UNAVAILABLE. Without kindly's server interceptor the retries multiply
 * (3 × 3 × 3 = 27 calls reach C); with it the trailer `x-retry-exhausted: 1` stops every
 * layer but the one next to C (3).
 */
const layer = (name: string) =>
  downstream(name, {
    retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } },
    budget: false,
  });

const servers: EchoServer[] = [];
const clients: EchoClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A service that forwards each call to `next` through its own kindly-protected client. */
async function forwarder(name: string, next: string, marked: boolean): Promise<EchoServer> {
  const client = echoClient(next, [grpcClientInterceptor(layer(name))]);
  clients.push(client);
  const server = await startEchoServer(
    {
      call: (call, callback) => {
        client.call(call.request, (error: ServiceError | null, response?: unknown) => {
          if (error) callback({ code: error.code, details: error.details });
          else callback(null, response);
        });
      },
    },
    marked ? [grpcServerInterceptor()] : [],
  );
  servers.push(server);
  return server;
}

async function chain(marked: boolean) {
  let innermost = 0;
  const c = await startEchoServer({
    call: (_call, callback) => {
      innermost++;
      callback({ code: status.UNAVAILABLE, details: 'C is down' });
    },
  });
  servers.push(c);
  const b = await forwarder('B', c.address, marked);
  const a = await forwarder('A', b.address, marked);
  const front = layer('client');
  let clientAttempts = 0;
  front.on('attempt-start', () => clientAttempts++);
  const client = echoClient(a.address, [grpcClientInterceptor(front)]);
  clients.push(client);
  const { error } = await ask(client, { hello: 'world' });
  return { innermost, clientAttempts, error };
}

describe('gRPC retry amplification across three hops (real grpc-js servers on loopback)', () => {
  it('without the server interceptor: 27 calls reach the dead service per client call', async () => {
    const result = await chain(false);
    expect(result.error?.code).toBe(status.UNAVAILABLE);
    expect(result.error?.metadata.get('x-retry-exhausted')).toEqual([]);
    expect(result.clientAttempts).toBe(3);
    expect(result.innermost).toBe(27);
    console.log(`[figure] gRPC, 3 hops × 3 attempts, no marker: ${result.innermost} calls at the innermost service`);
  });

  it('with grpcServerInterceptor on A and B: 3 calls; UNAVAILABLE reaches the client with x-retry-exhausted', async () => {
    const result = await chain(true);
    expect(result.error?.code).toBe(status.UNAVAILABLE);
    expect(result.error?.metadata.get('x-retry-exhausted')).toEqual(['1']);
    expect(result.clientAttempts).toBe(1);
    expect(result.innermost).toBe(3);
    console.log(`[figure] gRPC, 3 hops × 3 attempts, with x-retry-exhausted: ${result.innermost} calls at the innermost service`);
  });
});

describe('gRPC deadline propagation across three hops', () => {
  it("the client's 2 s deadline reaches the third hop as grpc-timeout, and scopes its kindly calls", async () => {
    const seen: Array<{ hop: string; grpcDeadlineMs: number; scopeDeadline: number | undefined }> = [];
    const wallNow = () => systemClock.now();
    const record = (hop: string, deadline: Date | number) => {
      const wall = deadline instanceof Date ? deadline.getTime() : deadline;
      seen.push({ hop, grpcDeadlineMs: wall - wallNow(), scopeDeadline: currentDeadlineScope()?.deadline });
    };
    const c = await startEchoServer(
      {
        call: (call, callback) => {
          record('C', call.getDeadline());
          callback(null, { from: 'C' });
        },
      },
      [grpcServerInterceptor()],
    );
    servers.push(c);
    const hop = async (name: string, next: string) => {
      const client = echoClient(next, [grpcClientInterceptor(downstream(name, { attemptTimeoutMs: false }))]);
      clients.push(client);
      const server = await startEchoServer(
        {
          call: (call, callback) => {
            record(name, call.getDeadline());
            client.call(call.request, (error: ServiceError | null, response?: unknown) =>
              error ? callback(error) : callback(null, response),
            );
          },
        },
        [grpcServerInterceptor()],
      );
      servers.push(server);
      return server;
    };
    const b = await hop('B', c.address);
    const a = await hop('A', b.address);
    const client = echoClient(a.address, [grpcClientInterceptor(downstream('client', { attemptTimeoutMs: false }))]);
    clients.push(client);
    const { response, error } = await ask(client, {}, 'call', { deadline: wallNow() + 2_000 });
    expect(error).toBeUndefined();
    expect(response).toEqual({ from: 'C' });
    expect(seen.map((s) => s.hop)).toEqual(['A', 'B', 'C']);
    for (const s of seen) {
      // Each hop sees a finite deadline no later than the client's, and runs inside a scope.
      expect(s.grpcDeadlineMs).toBeGreaterThan(0);
      expect(s.grpcDeadlineMs).toBeLessThanOrEqual(2_000);
      expect(s.scopeDeadline).toBeTypeOf('number');
    }
    const [ha, hb, hc] = seen.map((s) => Math.round(s.grpcDeadlineMs));
    console.log(`[figure] gRPC deadline left at hops A/B/C: ${ha} / ${hb} / ${hc} ms of 2000`);
  });

  it('without a client deadline the server grants maxTimeoutMs, and a nested call carries it on as grpc-timeout', async () => {
    let atC = Number.NaN;
    const c = await startEchoServer({
      call: (call, callback) => {
        const d = call.getDeadline();
        atC = (d instanceof Date ? d.getTime() : d) - systemClock.now();
        callback(null, {});
      },
    });
    servers.push(c);
    const client = echoClient(c.address, [grpcClientInterceptor(downstream('B', { attemptTimeoutMs: false }))]);
    clients.push(client);
    const b = await startEchoServer(
      { call: (call, callback) => client.call(call.request, (error: ServiceError | null) => callback(error, {})) },
      [grpcServerInterceptor({ maxTimeoutMs: 1_500 })],
    );
    servers.push(b);
    const front = echoClient(b.address);
    clients.push(front);
    const { error } = await ask(front, {});
    expect(error).toBeUndefined();
    expect(atC).toBeGreaterThan(0);
    expect(atC).toBeLessThanOrEqual(1_500);
  });

  it('x-request-timeout-ms metadata (from a kindly HTTP client through a gateway) also bounds the scope', async () => {
    let scopeLeft = Number.NaN;
    const server = await startEchoServer(
      {
        call: (_call, callback) => {
          scopeLeft = (currentDeadlineScope()?.deadline ?? Number.NaN) - systemClock.monotonic();
          callback(null, {});
        },
      },
      [grpcServerInterceptor()],
    );
    servers.push(server);
    const client = echoClient(server.address, [
      (options, next) =>
        new InterceptingCall(next(options), {
          start: (metadata, listener, go) => {
            metadata.set('x-request-timeout-ms', '300');
            go(metadata, listener);
          },
        }),
    ]);
    clients.push(client);
    expect((await ask(client, {})).error).toBeUndefined();
    expect(scopeLeft).toBeGreaterThan(0);
    expect(scopeLeft).toBeLessThanOrEqual(300);
  });

  it('a trailer a handler sets survives the exhausted mark', async () => {
    const c = await startEchoServer({ call: (_call, callback) => callback({ code: status.UNAVAILABLE, details: 'down' }) });
    servers.push(c);
    const inner = echoClient(c.address, [grpcClientInterceptor(layer('B'))]);
    clients.push(inner);
    const b = await startEchoServer(
      {
        call: (call, callback) =>
          inner.call(call.request, (error: ServiceError | null) => {
            const metadata = new Metadata();
            metadata.set('x-handler', 'kept');
            callback({ code: error?.code ?? status.OK, details: 'upstream failed', metadata });
          }),
      },
      [grpcServerInterceptor()],
    );
    servers.push(b);
    const front = echoClient(b.address);
    clients.push(front);
    const { error } = await ask(front, {});
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(error?.metadata.get('x-handler')).toEqual(['kept']);
    expect(error?.metadata.get('x-retry-exhausted')).toEqual(['1']);
  });
});
