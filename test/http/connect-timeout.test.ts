import type { AddressInfo } from 'node:net';
import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectTimeoutFetch, fetchThrough, isHttpRequestError } from '../../src/http/index.js';
import { downstream, isGiveUpError } from '../../src/index.js';
import { type Loopback, listen } from './support/loopback.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/**
 * A TCP server on loopback that accepts connections and never says a word: a TLS client's
 * handshake hangs, which is what a connect timeout (TCP + TLS, undici's `connect.timeout`) is for.
 */
async function silent(): Promise<{ url: string; accepted: () => number }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/`, accepted: () => accepted };
}

describe('connectTimeoutMs (Node with undici 7)', () => {
  // undici checks connect timeouts on a coarse timer (about a second), whatever the value.
  it('a hanging handshake fails after connectTimeoutMs with outcome `failed`, and is retried', async () => {
    const server = await silent();
    const api = downstream('api', {
      budget: false,
      retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } },
    });
    const error = await fetchThrough(api, server.url, { connectTimeoutMs: 100 }).catch((e: unknown) => e);
    expect(isGiveUpError(error) && error.reason).toBe('max-attempts');
    expect(isGiveUpError(error) && error.outcome).toBe('failed');
    const cause = isGiveUpError(error) ? error.cause : undefined;
    expect(isHttpRequestError(cause) && cause.errorCode).toBe('UND_ERR_CONNECT_TIMEOUT');
    expect(server.accepted()).toBe(2);
  });

  it('requests that connect in time go through the same fetch; one agent per timeout value', async () => {
    const server: Loopback = await listen((_req, res) => res.writeHead(200).end('ok'));
    closers.push(() => server.close());
    const response = await fetchThrough(downstream('api'), server.url, { connectTimeoutMs: 500 });
    expect(await response.text()).toBe('ok');
    expect(await connectTimeoutFetch(500)).toBe(await connectTimeoutFetch(500));
  });
});
