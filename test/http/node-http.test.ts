import type { IncomingMessage, ServerResponse } from 'node:http';
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EXHAUSTED_REASONS,
  fetchThrough,
  getRequestSignal,
  nodeHttpHandler,
  type RequestContext,
  SERVER_DEFAULTS,
} from '../../src/http/index.js';
import { downstream } from '../../src/index.js';
import { currentDeadlineScope } from '../../src/runtime/deadline-context.js';
import { VirtualClock } from '../../src/testing/index.js';
import { type Loopback, listen, until } from './support/loopback.js';

const servers: Loopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server whose handler records `req.kindly` and answers at once; the middleware runs on `clock`. */
async function recorder(clock: VirtualClock, options: Parameters<typeof nodeHttpHandler>[1] = {}) {
  const seen: RequestContext[] = [];
  const server = await listen(
    nodeHttpHandler(
      (req: IncomingMessage, res: ServerResponse) => {
        if (req.kindly !== undefined) seen.push(req.kindly);
        res.writeHead(200).end();
      },
      { clock, ...options },
    ),
  );
  servers.push(server);
  return { server, seen };
}

describe('nodeHttpHandler — inbound deadline', () => {
  it('pins its defaults', () => {
    expect(SERVER_DEFAULTS).toEqual({ maxTimeoutMs: 30_000, markExhausted: true });
    expect(EXHAUSTED_REASONS).toEqual(['max-attempts', 'budget', 'circuit-open', 'dont-retry']);
  });

  it.each([
    [{ 'x-request-timeout-ms': '250' }, 250, 250],
    [{ 'grpc-timeout': '100m' }, 100, 100],
    [{ 'grpc-timeout': '2S' }, 2_000, 2_000],
    [{ 'grpc-timeout': '1H' }, 3_600_000, 5_000],
    [{ 'x-request-timeout-ms': '900', 'grpc-timeout': '300m' }, 300, 300],
    [{ 'x-request-timeout-ms': '999999999999' }, 999_999_999_999, 5_000],
    [{ 'x-request-timeout-ms': '-5' }, undefined, 5_000],
    [{ 'x-request-timeout-ms': 'soon' }, undefined, 5_000],
    [{ 'x-request-timeout-ms': '1e3' }, undefined, 5_000],
    [{}, undefined, 5_000],
  ])('headers %j: requested %s ms, granted %s ms (max 5,000)', async (headers, requested, granted) => {
    const clock = new VirtualClock({ startMs: 1_000 });
    const { server, seen } = await recorder(clock, { maxTimeoutMs: 5_000 });
    await fetch(server.url, { headers });
    expect(seen[0]?.requestedTimeoutMs).toBe(requested);
    expect(seen[0]?.timeoutMs).toBe(granted);
    expect(seen[0]?.deadline).toBe(1_000 + granted);
  });

  it('reads the previous-attempt count from x-retry-attempt or its gRPC / Envoy equivalents', async () => {
    const { server, seen } = await recorder(new VirtualClock());
    await fetch(server.url, { headers: { 'x-retry-attempt': '2' } });
    await fetch(server.url, { headers: { 'grpc-previous-rpc-attempts': '1' } });
    await fetch(server.url, { headers: { 'x-envoy-attempt-count': '3' } });
    await fetch(server.url);
    expect(seen.map((k) => k.previousAttempts)).toEqual([2, 1, 2, 0]);
  });

  it("aborts the request's signal at the deadline, and clears its timer once the response is done", async () => {
    const clock = new VirtualClock();
    // A holder, not a variable: the handler sets it from another call stack.
    const seen: { context?: RequestContext } = {};
    let respond: (() => void) | undefined;
    const server = await listen(
      nodeHttpHandler(
        (req: IncomingMessage, res: ServerResponse) => {
          seen.context = req.kindly;
          respond = () => res.writeHead(200).end();
        },
        { clock },
      ),
    );
    servers.push(server);
    // First request: the deadline passes while the handler works.
    const first = fetch(server.url, { headers: { 'x-request-timeout-ms': '300' } });
    await until(() => seen.context !== undefined, 'the handler to run');
    expect(seen.context?.signal.aborted).toBe(false);
    expect(seen.context?.timeLeft()).toBe(300);
    await clock.advance(299);
    expect(seen.context?.signal.aborted).toBe(false);
    await clock.advance(1);
    expect(seen.context?.signal.aborted).toBe(true);
    expect((seen.context?.signal.reason as Error | undefined)?.name).toBe('DeadlineExceededError');
    respond?.();
    await first;
    // Second request: answered in time; nothing is left scheduled afterwards.
    delete seen.context;
    const second = fetch(server.url, { headers: { 'x-request-timeout-ms': '300' } });
    await until(() => seen.context !== undefined, 'the handler to run');
    expect(clock.nextAt()).toBe(clock.monotonic() + 300);
    respond?.();
    await second;
    await until(() => clock.nextAt() === undefined, 'the timer to be cleared');
    expect((seen.context as RequestContext | undefined)?.signal.aborted).toBe(false);
  });

  it('a budget of 0 means the deadline already passed: the signal is aborted before the handler runs', async () => {
    const { server, seen } = await recorder(new VirtualClock());
    await fetch(server.url, { headers: { 'x-request-timeout-ms': '0' } });
    expect(seen[0]?.signal.aborted).toBe(true);
  });

  it('aborts the signal when the client disconnects before the response', async () => {
    let signal: AbortSignal | undefined;
    const server = await listen(
      nodeHttpHandler((req: IncomingMessage) => {
        signal = getRequestSignal(req);
      }),
    );
    servers.push(server);
    const client = request(server.url);
    client.on('error', () => undefined);
    client.end();
    await until(() => signal !== undefined, 'the handler to run');
    client.destroy();
    await until(() => signal?.aborted === true, 'the signal to abort');
    expect((signal?.reason as Error | undefined)?.name).toBe('AbortError');
  });

  it('kindly calls in the handler inherit the deadline and the signal', async () => {
    const clock = new VirtualClock({ startMs: 50 });
    let inherited: { deadline: number; signal: AbortSignal | undefined } | undefined;
    let requestSignal: AbortSignal | undefined;
    let insideCall: number | undefined;
    const inner = downstream('inner', { clock });
    const server = await listen(
      nodeHttpHandler(
        async (req: IncomingMessage, res: ServerResponse) => {
          const scope = currentDeadlineScope();
          inherited = scope && { deadline: scope.deadline, signal: scope.signal };
          requestSignal = req.kindly?.signal;
          await inner.call((ctx) => {
            insideCall = ctx.deadline;
          });
          res.writeHead(204).end();
        },
        { clock },
      ),
    );
    servers.push(server);
    // Checked here, not in the handler: the handler's errors become a 500 answer.
    const response = await fetch(server.url, { headers: { 'x-request-timeout-ms': '120' } });
    expect(response.status).toBe(204);
    expect(inherited?.deadline).toBe(170);
    expect(insideCall).toBe(170);
    expect(requestSignal).toBeInstanceOf(AbortSignal);
    expect(inherited?.signal).toBe(requestSignal);
  });

  it('validates its options', () => {
    expect(() => nodeHttpHandler(() => undefined, { maxTimeoutMs: -1, markExhausted: 'yes', extra: 1 } as never)).toThrow(
      /extra[\s\S]*maxTimeoutMs[\s\S]*markExhausted/,
    );
  });
});

describe('nodeHttpHandler — x-retry-exhausted', () => {
  async function failingDependency() {
    const dead = await listen((_req, res) => res.writeHead(503).end());
    servers.push(dead);
    return dead.url;
  }

  it('marks a 5xx answered after a kindly call exhausted its retries; not a 4xx, not a success', async () => {
    const dead = await failingDependency();
    const calls = downstream('dep', { retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } });
    const server = await listen(
      nodeHttpHandler(async (req: IncomingMessage, res: ServerResponse) => {
        const upstream = await fetchThrough(calls, dead);
        const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('answer') ?? upstream.status);
        res.statusCode = status;
        res.end(); // implicit headers: the mark must be added there too
      }),
    );
    servers.push(server);
    const marks = async (answer?: number) =>
      (await fetch(`${server.url}/${answer === undefined ? '' : `?answer=${answer}`}`)).headers.get('x-retry-exhausted');
    expect(await marks()).toBe('1');
    expect(await marks(429)).toBe('1');
    expect(await marks(404)).toBeNull();
    expect(await marks(200)).toBeNull();
  });

  it('does not mark a failure whose kindly call stopped for another reason (not retryable)', async () => {
    const missing = await listen((_req, res) => res.writeHead(404).end());
    servers.push(missing);
    const calls = downstream('dep');
    const server = await listen(
      nodeHttpHandler(async (_req: IncomingMessage, res: ServerResponse) => {
        await fetchThrough(calls, missing.url);
        res.writeHead(502).end();
      }),
    );
    servers.push(server);
    expect((await fetch(server.url)).headers.get('x-retry-exhausted')).toBeNull();
  });

  it('marks when any of several calls exhausted its retries, even after one that stopped for another reason', async () => {
    const missing = await listen((_req, res) => res.writeHead(404).end());
    servers.push(missing);
    const dead = await failingDependency();
    const calls = downstream('dep', { retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } });
    let context: RequestContext | undefined;
    const server = await listen(
      nodeHttpHandler(async (req: IncomingMessage, res: ServerResponse) => {
        context = req.kindly;
        await fetchThrough(calls, missing.url); // not-retryable: no mark on its own
        await fetchThrough(calls, dead); // max-attempts
        res.writeHead(503).end();
      }),
    );
    servers.push(server);
    expect((await fetch(server.url)).headers.get('x-retry-exhausted')).toBe('1');
    expect(context?.gaveUp).toBe('not-retryable');
    expect(context?.exhausted).toBe(true);
  });

  it('markExhausted: false leaves responses alone', async () => {
    const dead = await failingDependency();
    const calls = downstream('dep', { retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } });
    const server = await listen(
      nodeHttpHandler(
        async (_req: IncomingMessage, res: ServerResponse) => {
          res.writeHead((await fetchThrough(calls, dead)).status).end();
        },
        { markExhausted: false },
      ),
    );
    servers.push(server);
    expect((await fetch(server.url)).headers.get('x-retry-exhausted')).toBeNull();
  });
});
