import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { expressMiddleware, fetchThrough, getRequestSignal } from '../../src/http/index.js';
import { downstream } from '../../src/index.js';
import { currentDeadlineScope } from '../../src/runtime/deadline-context.js';
import { type Loopback, listen } from './support/loopback.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function start(app: express.Express): Promise<string> {
  const server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function dependency(status: number): Promise<{ url: string; budgets: string[] }> {
  const budgets: string[] = [];
  const server: Loopback = await listen((req, res) => {
    budgets.push(String(req.headers['x-request-timeout-ms']));
    res.writeHead(status).end();
  });
  closers.push(() => server.close());
  return { url: server.url, budgets };
}

describe('expressMiddleware (Express 5)', () => {
  it('exposes the clamped deadline and signal, and the scope survives express.json() body parsing', async () => {
    const backend = await dependency(200);
    const calls = downstream('backend');
    const app = express();
    app.use(expressMiddleware({ maxTimeoutMs: 2_000 }));
    app.use(express.json());
    app.post('/orders', async (req, res) => {
      const scope = currentDeadlineScope();
      await fetchThrough(calls, backend.url);
      res.json({
        timeoutMs: req.kindly?.timeoutMs,
        sameSignal: getRequestSignal(req) === req.kindly?.signal && scope?.signal === req.kindly?.signal,
        inScope: scope?.deadline === req.kindly?.deadline,
        body: req.body,
      });
    });
    const url = await start(app);
    const response = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-timeout-ms': '60000' },
      body: JSON.stringify({ item: 'book' }),
    });
    expect(await response.json()).toEqual({ timeoutMs: 2_000, sameSignal: true, inScope: true, body: { item: 'book' } });
    // The inherited deadline went out with the outbound call: at most what the request was granted.
    expect(Number(backend.budgets[0])).toBeGreaterThan(0);
    expect(Number(backend.budgets[0])).toBeLessThanOrEqual(2_000);
  });

  it('marks a 503 sent after the dependency exhausted its retries x-retry-exhausted: 1', async () => {
    const dead = await dependency(503);
    const calls = downstream('dead', { retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } });
    const app = express();
    app.use(expressMiddleware());
    app.get('/', async (_req, res) => {
      const upstream = await fetchThrough(calls, dead.url);
      res.status(upstream.status).send('dependency unavailable');
    });
    const url = await start(app);
    const response = await fetch(url);
    expect(response.status).toBe(503);
    expect(response.headers.get('x-retry-exhausted')).toBe('1');
    expect(dead.budgets).toHaveLength(3);
  });

  it('aborts the signal at the deadline the client sent', async () => {
    const app = express();
    app.use(expressMiddleware());
    app.get('/', (req, res) => {
      const signal = getRequestSignal(req);
      signal?.addEventListener('abort', () => res.status(504).send((signal.reason as Error).name));
    });
    const url = await start(app);
    const response = await fetch(url, { headers: { 'x-request-timeout-ms': '50' } });
    expect(response.status).toBe(504);
    expect(await response.text()).toBe('DeadlineExceededError');
  });
});
