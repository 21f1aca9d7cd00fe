// Regression tests: an error escaping a handler wrapped by kindly's
// middleware must be answered (503 + x-retry-exhausted when a kindly call inside gave up, 500
// otherwise), never crash the server nor reset the connection.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { fastifyPlugin, fetchThrough, nodeHttpHandler } from '../../src/http/index.js';
import { downstream } from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { listen } from './support/loopback.js';

const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

/** A dependency that always answers 503, and a downstream that gives up on it after 2 attempts. */
async function failingDependency() {
  const dep = await listen((_req, res) => res.writeHead(503).end('busy'));
  closers.push(() => dep.close());
  const calls = downstream('dep', { retry: { maxAttempts: 2, backoff: { baseMs: 1, capMs: 2 } }, budget: false });
  return { url: dep.url, calls };
}

async function serve(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('nodeHttpHandler — errors escaping the handler (regression)', () => {
  it('a give-up escaping an async handler: 503 with x-retry-exhausted: 1; other errors: 500; the server keeps serving', async () => {
    const { url: depUrl, calls } = await failingDependency();
    const reported: unknown[] = [];
    const handler = nodeHttpHandler(
      async (req, res) => {
        if (req.url === '/give-up') await fetchThrough(calls, depUrl, { throwHttpErrors: true });
        if (req.url === '/bug') throw new Error('secret detail');
        if (req.url === '/sync') (undefined as unknown as { x: number }).x;
        if (req.url === '/late') {
          res.writeHead(200);
          res.write('partial');
          throw new Error('after the headers');
        }
        res.writeHead(200).end('ok');
      },
      { onError: (error) => reported.push(error) },
    );
    const url = await serve(createServer(handler));

    const gaveUp = await fetch(`${url}/give-up`);
    expect(gaveUp.status).toBe(503);
    expect(gaveUp.headers.get('x-retry-exhausted')).toBe('1');

    const bug = await fetch(`${url}/bug`);
    expect(bug.status).toBe(500);
    expect(bug.headers.get('x-retry-exhausted')).toBeNull();
    expect(await bug.text()).not.toContain('secret');

    expect((await fetch(`${url}/sync`)).status).toBe(500);

    // Headers already sent: the response is cut off, the server survives.
    const late = await fetch(`${url}/late`);
    expect(late.status).toBe(200);
    await expect(late.text()).rejects.toThrow();

    expect((await fetch(`${url}/ok`)).status).toBe(200);
    expect(reported).toHaveLength(4);
  });

  it('answers before it reports: a slow reporter does not hold the 500 back', async () => {
    let answered: boolean | undefined;
    let response: { writableEnded: boolean } | undefined;
    const handler = nodeHttpHandler(
      async (_req, res) => {
        response = res;
        throw new Error('bug');
      },
      {
        onError: () => {
          answered = response?.writableEnded;
        },
      },
    );
    const url = await serve(createServer(handler));
    expect((await fetch(url)).status).toBe(500);
    expect(answered).toBe(true);
  });

  it('the request’s deadline passing during a call inside: 503, whichever of the two timers for that instant fires first', async () => {
    // The request's timer is armed first, so on the virtual clock it fires first: the call
    // sees its signal abort before its own deadline timer. Under load this came out as a 500.
    const clock = new VirtualClock();
    let arrived!: () => void;
    const dependencyReached = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    const dep = await listen(() => arrived()); // never answers
    closers.push(() => dep.close());
    const calls = downstream('dep', { clock, random: new SeededRandom(21), retry: { maxAttempts: 2 }, budget: false });
    const reported: unknown[] = [];
    const handler = nodeHttpHandler(
      async (_req, res) => {
        const upstream = await fetchThrough(calls, dep.url);
        res.writeHead(upstream.status).end();
      },
      { clock, onError: (error) => reported.push(error) },
    );
    const url = await serve(createServer(handler));
    const answer = fetch(url, { headers: { 'x-request-timeout-ms': '300' } });
    await dependencyReached;
    await clock.advance(300);
    expect((await answer).status).toBe(503);
    expect(reported).toMatchObject([{ name: 'GiveUpError', reason: 'deadline' }]);
  });
});

describe('fastifyPlugin — errors escaping the handler (regression)', () => {
  it('a give-up escaping a route: 503 with x-retry-exhausted: 1 instead of 500; other errors keep Fastify’s 500', async () => {
    const { url: depUrl, calls } = await failingDependency();
    const app = Fastify();
    await app.register(fastifyPlugin);
    app.get('/give-up', async () => {
      await fetchThrough(calls, depUrl, { throwHttpErrors: true });
      return 'unreachable';
    });
    app.get('/bug', async () => {
      throw new Error('a bug');
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    closers.push(() => app.close());

    const gaveUp = await fetch(`${url}/give-up`);
    expect(gaveUp.status).toBe(503);
    expect(gaveUp.headers.get('x-retry-exhausted')).toBe('1');
    const bug = await fetch(`${url}/bug`);
    expect(bug.status).toBe(500);
    expect(bug.headers.get('x-retry-exhausted')).toBeNull();
  });
});
