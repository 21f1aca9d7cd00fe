import { type ServiceError, status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { enableChaos } from '../../src/chaos/index.js';
import { grpcClientInterceptor } from '../../src/grpc/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { refusedPort } from '../http/support/loopback.js';
import { ask, type EchoClient, type EchoServer, echoClient, startEchoServer } from './support/echo-service.js';
import { answeringStatus, type FaultyServer, resettingConnections } from './support/http2-faults.js';

const servers: Array<EchoServer | FaultyServer> = [];
const clients: EchoClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const on = { dangerouslyEnableChaos: true } as const;
const fast = { maxAttempts: 3, backoff: { shape: 'constant' as const, baseMs: 1, jitter: 'none' as const } };

/** A downstream with `fast` retries and no budget, as both sides of each comparison use. */
const echoDownstream = (name: string) => downstream(name, { retry: fast, budget: false });

function connect(address: string, d: ReturnType<typeof downstream>, options?: Parameters<typeof grpcClientInterceptor>[1]) {
  const client = echoClient(address, [grpcClientInterceptor(d, options)]);
  clients.push(client);
  return client;
}

/** A real echo server that would answer every call OK: only chaos can make a call fail. */
async function healthy() {
  let served = 0;
  const server = await startEchoServer({
    call: (_call, callback) => {
      served++;
      callback(null, { ok: true });
    },
  });
  servers.push(server);
  return { address: server.address, served: () => served };
}

/** The parts of a `ServiceError` a gRPC caller reads. */
function seen(error: ServiceError | undefined, trailers: string[] = []) {
  return {
    isError: error instanceof Error,
    code: error?.code,
    details: error?.details,
    trailers: Object.fromEntries(trailers.map((name) => [name, error?.metadata.get(name)])),
  };
}

describe('a fault chaos injects under grpcClientInterceptor reaches the caller as the real fault does', () => {
  it.each([400, 401, 403, 404, 429, 500, 502, 503, 504])(
    'an injected HTTP %i: the code, details, trailers and attempts a proxy answering it gives',
    async (httpStatus) => {
      const headers = { 'retry-after': '0', 'x-served-by': 'edge-7' };
      const proxy = await answeringStatus(httpStatus, headers);
      servers.push(proxy);
      const real = echoDownstream('real');
      const realError = (await ask(connect(proxy.address, real), {})).error;

      const target = await healthy();
      const injected = echoDownstream('injected');
      enableChaos(injected, { ...on, faults: [{ kind: 'status', rate: 1, status: httpStatus, headers }] });
      const injectedError = (await ask(connect(target.address, injected), {})).error;

      expect(realError?.details).toBe(`Received HTTP status code ${httpStatus}`);
      expect(seen(injectedError, Object.keys(headers))).toEqual(seen(realError, Object.keys(headers)));
      // Read as the same gRPC status, so retried alike (UNAVAILABLE and INTERNAL are, client codes are not).
      expect(injected.stats().attempts).toBe(real.stats().attempts);
      expect(proxy.requests).toBe(real.stats().attempts);
      expect(target.served()).toBe(0);
    },
  );

  it('an injected 503 with grpc-retry-pushback-ms: the pushback is obeyed as from a real proxy, and reaches the caller', async () => {
    const headers = { 'grpc-retry-pushback-ms': '-1' };
    const proxy = await answeringStatus(503, headers);
    servers.push(proxy);
    const real = echoDownstream('real');
    const realError = (await ask(connect(proxy.address, real), {})).error;

    const target = await healthy();
    const injected = echoDownstream('injected');
    enableChaos(injected, { ...on, faults: [{ kind: 'status', rate: 1, status: 503, headers }] });
    const reasons: string[] = [];
    injected.on('give-up', (e) => reasons.push(e.reason));
    const injectedError = (await ask(connect(target.address, injected), {})).error;

    expect(seen(injectedError, ['grpc-retry-pushback-ms'])).toEqual(seen(realError, ['grpc-retry-pushback-ms']));
    expect(injectedError?.code).toBe(status.UNAVAILABLE);
    expect(reasons).toEqual(['dont-retry']);
    expect(injected.stats().attempts).toBe(real.stats().attempts);
  });

  it('an injected refused connection: UNAVAILABLE without trailers, retried, as a port nobody listens on', async () => {
    const nobody = (await refusedPort()).replace('http://', '');
    const real = echoDownstream('real');
    const realError = (await ask(connect(nobody, real), {})).error;

    const target = await healthy();
    const injected = echoDownstream('injected');
    enableChaos(injected, { ...on, faults: [{ kind: 'error', rate: 1, outcome: 'failed' }] });
    const injectedError = (await ask(connect(target.address, injected), {})).error;

    expect(realError?.code).toBe(status.UNAVAILABLE);
    expect(injectedError?.code).toBe(realError?.code);
    expect(injectedError?.metadata.getMap()).toEqual(realError?.metadata.getMap());
    expect(injectedError?.details).toMatch(/ECONNREFUSED.*injected by kindly chaos/);
    expect(injected.stats().attempts).toBe(real.stats().attempts);
    expect(target.served()).toBe(0);
  });

  it.each([
    ['reset', { kind: 'reset', rate: 1 }],
    ['lost answer', { kind: 'error', rate: 1, outcome: 'unknown' }],
  ] as const)('an injected %s: UNAVAILABLE without trailers, as a connection reset by the peer', async (_name, fault) => {
    const peer = await resettingConnections();
    servers.push(peer);
    const realError = (await ask(connect(peer.address, echoDownstream('real')), {})).error;

    const target = await healthy();
    const injected = echoDownstream('injected');
    enableChaos(injected, { ...on, faults: [fault] });
    const injectedError = (await ask(connect(target.address, injected), {})).error;

    expect(realError?.code).toBe(status.UNAVAILABLE);
    expect(injectedError?.code).toBe(realError?.code);
    expect(injectedError?.metadata.getMap()).toEqual(realError?.metadata.getMap());
    expect(injectedError?.details).toMatch(/injected by kindly chaos/);
  });

  it('an injected reset keeps the outcome chaos was asked for: unknown, so a non-idempotent method is not retried', async () => {
    const target = await healthy();
    const d = echoDownstream('injected');
    enableChaos(d, { ...on, faults: [{ kind: 'reset', rate: 1 }] });
    const reasons: string[] = [];
    d.on('give-up', (e) => reasons.push(`${e.reason}/${e.outcome}`));
    const { error } = await ask(connect(target.address, d, { idempotent: false }), {});
    expect(error?.code).toBe(status.UNAVAILABLE);
    expect(reasons).toEqual(['not-idempotent/unknown']);
    expect(d.stats().attempts).toBe(1);
  });
});
