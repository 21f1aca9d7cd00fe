import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { fastifyPlugin, fetchThrough, getRequestSignal, type RequestContext } from '../../src/http/index.js';
import { downstream } from '../../src/index.js';
import { currentDeadlineScope } from '../../src/runtime/deadline-context.js';
import { type Loopback, listen } from './support/loopback.js';

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function start(app: FastifyInstance): Promise<string> {
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  closers.push(() => app.close());
  return url;
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

const contextOf = (request: unknown) => (request as { kindly: RequestContext | null }).kindly;

describe('fastifyPlugin (Fastify 5)', () => {
  it('request.kindly carries the clamped deadline; the scope survives body parsing; outbound calls inherit it', async () => {
    const backend = await dependency(200);
    const calls = downstream('backend');
    const app = Fastify();
    await app.register(fastifyPlugin, { maxTimeoutMs: 1_500 });
    app.post('/orders', async (request) => {
      const kindly = contextOf(request);
      const scope = currentDeadlineScope();
      await fetchThrough(calls, backend.url);
      return {
        timeoutMs: kindly?.timeoutMs,
        requested: kindly?.requestedTimeoutMs,
        inScope: scope?.deadline === kindly?.deadline && scope?.signal === getRequestSignal(request),
        body: request.body,
      };
    });
    const url = await start(app);
    const response = await fetch(`${url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'grpc-timeout': '1H' },
      body: JSON.stringify({ item: 'lamp' }),
    });
    expect(await response.json()).toEqual({ timeoutMs: 1_500, requested: 3_600_000, inScope: true, body: { item: 'lamp' } });
    expect(Number(backend.budgets[0])).toBeGreaterThan(0);
    expect(Number(backend.budgets[0])).toBeLessThanOrEqual(1_500);
  });

  it('marks a 503 reply sent after the dependency exhausted its retries x-retry-exhausted: 1', async () => {
    const dead = await dependency(503);
    const calls = downstream('dead', { retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } });
    const app = Fastify();
    await app.register(fastifyPlugin);
    app.get('/', async (_request, reply) => {
      const upstream = await fetchThrough(calls, dead.url);
      return reply.code(upstream.status).send({ error: 'dependency unavailable' });
    });
    app.get('/fine', async (_request, reply) => {
      await fetchThrough(calls, dead.url);
      return reply.code(200).send({ fallback: true });
    });
    const url = await start(app);
    const failed = await fetch(url);
    expect(failed.status).toBe(503);
    expect(failed.headers.get('x-retry-exhausted')).toBe('1');
    const fine = await fetch(`${url}/fine`);
    expect(fine.status).toBe(200);
    expect(fine.headers.get('x-retry-exhausted')).toBeNull();
  });

  it('aborts the signal at the deadline the client sent', async () => {
    const app = Fastify();
    await app.register(fastifyPlugin);
    app.get('/', async (request, reply) => {
      const signal = getRequestSignal(request) as AbortSignal;
      await new Promise((resolve) => signal.addEventListener('abort', resolve));
      return reply.code(504).send((signal.reason as Error).name);
    });
    const url = await start(app);
    const response = await fetch(url, { headers: { 'x-request-timeout-ms': '50' } });
    expect(response.status).toBe(504);
    expect(await response.text()).toBe('DeadlineExceededError');
  });
});
