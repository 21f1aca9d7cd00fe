import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { connectTimeoutFetch, fetchThrough } from '../../src/http/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { type Loopback, listen, until } from './support/loopback.js';

const servers: Loopback[] = [];
/** A loopback server that keeps idle connections for a minute (and tells undici so): only a closed agent closes one. */
async function serve(handler: Parameters<typeof listen>[0]): Promise<Loopback> {
  const server = await listen(handler);
  server.server.keepAliveTimeout = 60_000;
  servers.push(server);
  return server;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** How many agents are kept (`KEPT`, pinned in connect-timeout-steps.test.ts). */
const KEPT = 8;

/** No retry: a request cut short must fail the test, not be sent again. */
const once = () => downstream('api', { budget: false, retry: { maxAttempts: 1 } });

/** Distinct connect-timeout steps, none used by another test of this file before it. */
const STEPS = [3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40] as const;

describe('connectTimeoutMs — bounded agents and connections', () => {
  it('a connect timeout computed per call (say, from the time left) opens no more connections than a fixed one', async () => {
    const fixed = await serve((_req, res) => res.writeHead(200).end('ok'));
    const computed = await serve((_req, res) => res.writeHead(200).end('ok'));
    const api = once();
    for (let i = 0; i < 30; i++) {
      const response = await fetchThrough(api, fixed.url, { connectTimeoutMs: 5_000 });
      await response.text();
    }
    for (let i = 0; i < 30; i++) {
      // A little less each time, as the time left to a deadline would be.
      const response = await fetchThrough(api, computed.url, { connectTimeoutMs: 2_000 - i / 7 });
      await response.text();
    }
    expect(computed.accepted).toBe(fixed.accepted);
  });

  it(`keeps at most ${KEPT} agents: the least recently used is closed, and its connections with it`, async () => {
    const sockets = new Map<string, Socket>();
    const server = await serve((req, res) => {
      sockets.set(req.url as string, req.socket);
      res.writeHead(200).end('ok');
    });
    const api = once();
    for (const step of STEPS) {
      const response = await fetchThrough(api, `${server.url}/${step}`, { connectTimeoutMs: step });
      await response.text();
    }
    const evicted = STEPS.slice(0, STEPS.length - KEPT);
    const kept = STEPS.slice(STEPS.length - KEPT);
    await until(
      () => evicted.every((step) => sockets.get(`/${step}`)?.destroyed === true),
      'the connections of the least recently used agents to close',
    );
    for (const step of kept) expect(sockets.get(`/${step}`)?.destroyed).toBe(false);
  });

  it('agents let go of while they carry requests close only once those are over: none is cut short', async () => {
    let releaseHeaders!: () => void;
    const headersHeld = new Promise<void>((resolve) => {
      releaseHeaders = resolve;
    });
    let releaseBody!: () => void;
    const bodyHeld = new Promise<void>((resolve) => {
      releaseBody = resolve;
    });
    let headersAsked!: () => void;
    const headersWaiting = new Promise<void>((resolve) => {
      headersAsked = resolve;
    });
    const server = await serve(async (req, res) => {
      if (req.url === '/before-headers') {
        headersAsked();
        await headersHeld;
      }
      if (req.url === '/before-headers' || req.url === '/mid-body') {
        res.writeHead(200);
        res.write('first half, ');
        if (req.url === '/mid-body') await bodyHeld;
        res.end('second half');
        return;
      }
      res.writeHead(200).end('ok');
    });
    const api = once();
    // Two agents: one carries a request still waiting for its headers, the other a response
    // whose body is still arriving.
    const beforeHeaders = fetchThrough(api, `${server.url}/before-headers`, { connectTimeoutMs: 50 });
    await headersWaiting;
    const midBody = await fetchThrough(api, `${server.url}/mid-body`, { connectTimeoutMs: 60 });
    // As many other steps as are kept: both are now the least recently used, let go of.
    for (const step of [80, 100, 120, 150, 200, 250, 300, 400].slice(0, KEPT)) {
      const response = await fetchThrough(api, `${server.url}/other`, { connectTimeoutMs: step });
      await response.text();
    }
    releaseBody();
    expect(await midBody.text()).toBe('first half, second half');
    releaseHeaders();
    expect(await (await beforeHeaders).text()).toBe('first half, second half');
  });

  it('an agent let go of while a request through it is being redirected carries the redirected request too', async () => {
    let releaseRedirect!: () => void;
    const redirectHeld = new Promise<void>((resolve) => {
      releaseRedirect = resolve;
    });
    let redirectAsked!: () => void;
    const redirectWaiting = new Promise<void>((resolve) => {
      redirectAsked = resolve;
    });
    const server = await serve(async (req, res) => {
      if (req.url === '/moved') {
        redirectAsked();
        await redirectHeld;
        res.writeHead(302, { location: '/here' }).end();
        return;
      }
      res.writeHead(200).end(req.url === '/here' ? 'redirected' : 'ok');
    });
    const api = once();
    // The redirect is followed inside the same `fetch`, with a request of its own through the
    // same agent: let go of meanwhile, that agent must not be closed before the fetch is over.
    const moved = fetchThrough(api, `${server.url}/moved`, { connectTimeoutMs: 5_000 });
    await redirectWaiting;
    for (const step of [6_000, 8_000, 10_000, 12_000, 15_000, 20_000, 25_000, 30_000].slice(0, KEPT)) {
      const response = await fetchThrough(api, `${server.url}/other`, { connectTimeoutMs: step });
      await response.text();
    }
    releaseRedirect();
    const response = await moved;
    expect(response.redirected).toBe(true);
    expect(await response.text()).toBe('redirected');
  });

  it('a fetch whose agent was let go of gets a new one at its next request (a retry after the backoff)', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end('ok'));
    const fetchAt = await connectTimeoutFetch(500);
    expect(await (await fetchAt(server.url)).text()).toBe('ok');
    for (const step of [600, 800, 1_200, 1_500, 2_500, 3_000, 4_000, 6_000].slice(0, KEPT)) {
      await (await (await connectTimeoutFetch(step))(server.url)).text();
    }
    expect(await (await fetchAt(server.url)).text()).toBe('ok');
  });
});
