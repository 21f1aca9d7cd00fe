import { getEventListeners } from 'node:events';
import { inspect } from 'node:util';
import { Agent, fetch as undiciFetch } from 'undici';
import { describe, expect, it, vi } from 'vitest';
import {
  createFetch,
  FETCH_DEFAULTS,
  fetchThrough,
  isHttpRequestError,
  isRequestBodyNotReplayableError,
} from '../../src/http/index.js';
import { HttpStatusError, isDeadlineExceededError, isGiveUpError, type KindlyEvent } from '../../src/index.js';
import { currentDeadlineScope } from '../../src/runtime/deadline-context.js';
import { type DownstreamOptions, downstream } from '../../src/runtime/downstream.js';
import { readBody, refusedPort, serverPerTest, until } from './support/loopback.js';

/** A downstream with quick, deterministic backoff, so that tests run in milliseconds. */
function api(options: DownstreamOptions = {}) {
  return downstream('api', {
    retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 5, jitter: 'none' } },
    budget: false,
    ...options,
  });
}

/** The `HttpStatusError` of each of `d`'s failed attempts, as its events report them. */
function failedAttempts(d: ReturnType<typeof api>): HttpStatusError[] {
  const failed: HttpStatusError[] = [];
  d.onAny((e) => {
    if (e.type === 'attempt-end' && e.error instanceof HttpStatusError) failed.push(e.error);
  });
  return failed;
}

const serve = serverPerTest();

describe('fetchThrough — statuses', () => {
  it('pins its defaults', () => {
    expect(FETCH_DEFAULTS).toEqual({
      throwHttpErrors: false,
      maxBufferedBody: 1_048_576,
      waitForOnline: true,
      pauseWhileHidden: false,
      idempotencyKey: false,
    });
  });

  it('retries 503 until 200 and numbers attempts in x-retry-attempt (previous attempts: 0, 1, 2)', async () => {
    const seen: Array<string | undefined> = [];
    const server = await serve((req, res) => {
      seen.push(req.headers['x-retry-attempt'] as string | undefined);
      res.writeHead(seen.length < 3 ? 503 : 200).end(seen.length < 3 ? 'busy' : 'ok');
    });
    const response = await fetchThrough(api(), `${server.url}/x`, { propagateHeaders: true });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('ok');
    expect(seen).toEqual(['0', '1', '2']);
  });

  it('on give-up returns the last response, body intact, like fetch', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(503, { 'content-type': 'text/plain' }).end(`busy #${hits}`);
    });
    const response = await fetchThrough(api(), `${server.url}/x`);
    expect(hits).toBe(3);
    expect(response.status).toBe(503);
    expect(response.url).toBe(`${server.url}/x`);
    expect(await response.text()).toBe('busy #3');
  });

  it('throwHttpErrors: rejects with the GiveUpError; its cause holds a readable response without the URL', async () => {
    const server = await serve((_req, res) => res.writeHead(503).end('still busy'));
    const error = await fetchThrough(api(), `${server.url}/x?token=SECRET`, { throwHttpErrors: true }).catch((e: unknown) => e);
    expect(isGiveUpError(error)).toBe(true);
    if (!isGiveUpError(error)) return;
    expect(error.reason).toBe('max-attempts');
    const cause = error.cause as HttpStatusError;
    expect(cause).toBeInstanceOf(HttpStatusError);
    const response = cause.response as Response;
    expect(response.url).toBe('');
    expect(await response.text()).toBe('still busy');
  });

  it.each([400, 401, 403, 404, 409, 422, 501])('never retries %i', async (status) => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(status).end();
    });
    const response = await fetchThrough(api(), server.url);
    expect(response.status).toBe(status);
    expect(hits).toBe(1);
  });

  it('a connection refused is `failed` and retried, even for a POST without key', async () => {
    const url = await refusedPort();
    const events: KindlyEvent[] = [];
    const d = api();
    d.onAny((e) => events.push(e));
    const error = await fetchThrough(d, url, { method: 'POST', body: 'x' }).catch((e: unknown) => e);
    expect(isGiveUpError(error) && error.reason).toBe('max-attempts');
    expect(isGiveUpError(error) && error.outcome).toBe('failed');
    expect(events.filter((e) => e.type === 'attempt-start')).toHaveLength(3);
  });

  it('honours a wait hint: the retry comes no sooner than grpc-retry-pushback-ms (measured at the server)', async () => {
    const at: number[] = [];
    const server = await serve((_req, res) => {
      at.push(performance.now());
      if (at.length === 1) res.writeHead(503, { 'grpc-retry-pushback-ms': '150' }).end();
      else res.writeHead(200).end();
    });
    expect((await fetchThrough(api(), server.url)).status).toBe(200);
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(150);
  });

  it('reads a wait hint from a JSON error body when the headers have none, and leaves the body readable', async () => {
    const at: number[] = [];
    const server = await serve((_req, res) => {
      at.push(performance.now());
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { retry_after_ms: 120 } }));
    });
    const response = await fetchThrough(
      api({ retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } }),
      server.url,
    );
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(120);
    expect(await response.json()).toEqual({ error: { retry_after_ms: 120 } });
  });

  it('regression: {"retry_after":1e308} in a body gives up with hint-too-long, as the same value in a header does', async () => {
    let hits = 0;
    const server = await serve((req, res) => {
      hits++;
      if (req.url === '/header') res.writeHead(503, { 'retry-after': '1'.padEnd(309, '0') }).end();
      else res.writeHead(503, { 'content-type': 'application/json' }).end('{"retry_after":1e308}');
    });
    for (const path of ['/header', '/body']) {
      const reasons: string[] = [];
      const d = api();
      d.on('give-up', (e) => reasons.push(e.reason));
      expect((await fetchThrough(d, `${server.url}${path}`)).status).toBe(503);
      expect(reasons).toEqual(['hint-too-long']);
    }
    expect(hits).toBe(2);
  });

  it('a callee marked x-retry-exhausted is not retried', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(503, { 'x-retry-exhausted': '1' }).end();
    });
    expect((await fetchThrough(api(), server.url)).status).toBe(503);
    expect(hits).toBe(1);
  });

  it('retryableStatuses replaces the retried set for this call', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(hits < 2 ? 418 : 200).end();
    });
    expect((await fetchThrough(api(), server.url, { retryableStatuses: [418] })).status).toBe(200);
    expect(hits).toBe(2);
  });
});

describe('fetchThrough — a small failed body read whole (what it makes only when read)', () => {
  /** A 503 with a short text body and a cookie: looking for a body hint reads it whole. */
  async function busy(extra: Record<string, string> = {}) {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(503, { 'content-type': 'text/plain', 'set-cookie': 'id=COOKIESECRET', ...extra }).end(`busy #${hits}`);
    });
    return { server, hits: () => hits };
  }

  it('the headers still decide: a don’t-retry marker beside a text body stops the retries', async () => {
    const { server, hits } = await busy({ 'x-retry-exhausted': '1' });
    const response = await fetchThrough(api(), server.url);
    expect(response.status).toBe(503);
    expect(hits()).toBe(1);
    expect(await response.text()).toBe('busy #1');
  });

  it('a retried attempt’s error makes no copy of its response unless someone reads it', async () => {
    const { server } = await busy();
    const d = api();
    const failed = failedAttempts(d);
    const response = await fetchThrough(d, server.url);
    expect(await response.text()).toBe('busy #3');
    expect(failed).toHaveLength(3);
    // Still to be made: an accessor, not a value (reading it would make it).
    for (const error of failed) expect(Object.getOwnPropertyDescriptor(error, 'response')?.get).toBeTypeOf('function');
    const copy = failed[0]?.response as Response;
    expect(copy).toBeInstanceOf(Response);
    expect(Object.getOwnPropertyDescriptor(failed[0], 'response')?.value).toBe(copy); // made once, then kept
    expect(copy.headers.get('set-cookie')).toBeNull();
    expect(copy.url).toBe('');
    expect(await copy.text()).toBe('busy #1');
    // Assigned before it was made: the value assigned, as with any other property.
    (failed[1] as { response: unknown }).response = 'replaced';
    expect(failed[1]?.response).toBe('replaced');
  });

  it('util.inspect shows the copy as a value, without secrets, before anyone read it', async () => {
    const { server } = await busy();
    const error = await fetchThrough(api(), `${server.url}/x?token=QUERYSECRET`, { throwHttpErrors: true }).catch(
      (e: unknown) => e,
    );
    expect(isGiveUpError(error)).toBe(true);
    const dump = inspect(error, { depth: 12, showHidden: true });
    expect(dump).toContain('response: Response {');
    expect(dump).not.toContain('response: [Getter'); // (`stack` is an accessor on Node ≥ 21: shown as one)
    for (const secret of ['COOKIESECRET', 'QUERYSECRET']) expect(dump).not.toContain(secret);
    const cause = (error as Error).cause as HttpStatusError;
    expect(await (cause.response as Response).text()).toBe('busy #3');
  });

  it('a fallback may answer with the error’s copy', async () => {
    const { server } = await busy();
    const response = await fetchThrough(api(), server.url, {
      fallback: ({ error }) => (error.cause as HttpStatusError).response as Response,
    });
    expect(await response.text()).toBe('busy #3');
  });
});

describe('fetchThrough — a failed body kindly does not read (what it makes only when read)', () => {
  /** A 404 (never retried, no body hint looked for) with a cookie: its body stays on the wire. */
  async function missing() {
    return serve((_req, res) =>
      res.writeHead(404, { 'content-type': 'text/plain', 'set-cookie': 'id=COOKIESECRET' }).end('no such item'),
    );
  }

  it('the error’s copy is made only when read; before the caller reads the body, it shares that body', async () => {
    const server = await missing();
    const d = api();
    const failed = failedAttempts(d);
    const response = await fetchThrough(d, `${server.url}/x?token=QUERYSECRET`);
    expect(response.status).toBe(404);
    const error = failed[0] as HttpStatusError;
    // Still to be made: an accessor, not a value (reading it would make it).
    expect(Object.getOwnPropertyDescriptor(error, 'response')?.get).toBeTypeOf('function');
    const copy = error.response as Response;
    expect(copy.status).toBe(404);
    expect(copy.url).toBe('');
    expect(copy.headers.get('set-cookie')).toBeNull();
    expect(await copy.text()).toBe('no such item');
    expect(response.bodyUsed).toBe(true); // one body, shared
  });

  it('read after the caller read the body, the copy’s body fails and says why, rather than reading as empty', async () => {
    const server = await missing();
    const d = api();
    const failed = failedAttempts(d);
    const response = await fetchThrough(d, server.url);
    expect(await response.text()).toBe('no such item');
    const copy = failed[0]?.response as Response;
    expect(copy.status).toBe(404);
    await expect(copy.text()).rejects.toThrow(/already read when this copy of it was made/);
  });

  it('the HttpStatusError carries no stack frames (all would be kindly’s); the GiveUpError keeps the caller’s', async () => {
    const server = await serve((_req, res) => res.writeHead(503).end('still busy'));
    async function callersOwnFunction() {
      return await fetchThrough(api(), server.url, { throwHttpErrors: true });
    }
    const limit = Error.stackTraceLimit;
    const error = await callersOwnFunction().catch((e: unknown) => e);
    expect(isGiveUpError(error)).toBe(true);
    const cause = (error as Error).cause as HttpStatusError;
    expect(cause).toBeInstanceOf(HttpStatusError);
    expect(cause.stack).toBe('HttpStatusError: HTTP 503');
    expect((error as Error).stack).toContain('callersOwnFunction');
    expect(Error.stackTraceLimit).toBe(limit); // restored
  });
});

describe('fetchThrough — deadlines and cancellation', () => {
  it('a fetch of the user’s (the `fetch` option, or a global fetch replaced after kindly loaded) runs inside the attempt’s deadline scope', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end('ok'));
    const platform = globalThis.fetch;
    const seen: Array<number | undefined> = [];
    const recording: typeof fetch = (input, init) => {
      seen.push(currentDeadlineScope()?.deadline);
      return platform(input, init);
    };
    await (await fetchThrough(api(), server.url, { timeoutMs: 5_000, fetch: recording })).text();
    globalThis.fetch = recording;
    try {
      await (await fetchThrough(api(), server.url, { timeoutMs: 5_000 })).text();
    } finally {
      globalThis.fetch = platform;
    }
    expect(seen).toHaveLength(2);
    for (const deadline of seen) expect(deadline).toEqual(expect.any(Number));
  });

  it("sends x-request-timeout-ms with the attempt's time left (call deadline or attempt timeout), and none without either", async () => {
    const budgets: Array<string | undefined> = [];
    const server = await serve((req, res) => {
      budgets.push(req.headers['x-request-timeout-ms'] as string | undefined);
      res.writeHead(200).end();
    });
    await fetchThrough(api({ attemptTimeoutMs: false }), server.url, { timeoutMs: 800, propagateHeaders: true });
    await fetchThrough(api({ attemptTimeoutMs: 300 }), server.url, { timeoutMs: 800, propagateHeaders: true });
    await fetchThrough(api({ attemptTimeoutMs: false }), server.url, { propagateHeaders: true });
    expect(budgets[2]).toBeUndefined();
    const [byDeadline, byAttempt] = budgets.map(Number);
    expect(Number.isInteger(byDeadline)).toBe(true);
    expect(byDeadline).toBeGreaterThan(300);
    expect(byDeadline).toBeLessThanOrEqual(800);
    expect(byAttempt).toBeGreaterThan(0);
    expect(byAttempt).toBeLessThanOrEqual(300);
  });

  it('an attempt timeout aborts the request: the server sees the connection close', async () => {
    let closed = 0;
    const server = await serve((req) => {
      req.socket.once('close', () => closed++);
    });
    const error = await fetchThrough(api({ attemptTimeoutMs: 50, retry: false }), server.url).catch((e: unknown) => e);
    expect(isGiveUpError(error) && (error.cause as Error).name).toBe('AttemptTimeoutError');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(closed).toBe(1);
  });

  it("the caller's abort ends the call during the backoff, with the caller's reason", async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(503).end();
    });
    const controller = new AbortController();
    const slow = api({ retry: { maxAttempts: 5, backoff: { shape: 'constant', baseMs: 10_000, jitter: 'none' } } });
    const pending = fetchThrough(slow, server.url, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort(new Error('user left'));
    await expect(pending).rejects.toThrow('user left');
    expect(hits).toBe(1);
  });

  it('gives back a readable copy of the last response when the call stops after a retry was planned', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(502, { 'content-type': 'text/plain' }).end('upstream broke');
    });
    // A POST ending `unknown` (502) is retried only after `verify`; here verify says the first
    // attempt took effect, so the planned retry is never sent. The 502's body was drained to
    // free the connection meanwhile; the caller still gets it.
    const d = api();
    const response = await fetchThrough(d, server.url, { method: 'POST', body: 'x', verify: () => true });
    expect(hits).toBe(1);
    expect(response.status).toBe(502);
    expect(response.url).toBe(`${server.url}/`);
    expect(await response.text()).toBe('upstream broke');
  });
});

describe('fetchThrough — idempotency', () => {
  it('POST without a key is never sent twice after an unknown outcome: reset after the body was read', async () => {
    let received = 0;
    const server = await serve(async (req) => {
      await readBody(req);
      received++;
      req.socket.destroy();
    });
    const error = await fetchThrough(api(), server.url, { method: 'POST', body: 'charge 10 EUR' }).catch((e: unknown) => e);
    expect(isGiveUpError(error) && error.reason).toBe('not-idempotent');
    expect(isGiveUpError(error) && error.outcome).toBe('unknown');
    expect(received).toBe(1);
  });

  it('POST without a key is never sent twice after a 502 (unknown outcome); the 502 is returned', async () => {
    let received = 0;
    const server = await serve(async (req, res) => {
      await readBody(req);
      received++;
      res.writeHead(502).end();
    });
    const response = await fetchThrough(api(), server.url, { method: 'POST', body: 'charge' });
    expect(response.status).toBe(502);
    expect(received).toBe(1);
  });

  it('idempotencyKey: true — one key per call, byte-identical on every attempt, different between calls', async () => {
    const keys: string[] = [];
    const server = await serve(async (req, res) => {
      await readBody(req);
      keys.push(req.headers['idempotency-key'] as string);
      if (keys.length % 3 === 0) res.writeHead(201).end();
      else req.socket.destroy(); // unknown outcome: only the key makes a retry safe
    });
    const post = createFetch(api(), { idempotencyKey: true });
    expect((await post(server.url, { method: 'POST', body: 'a' })).status).toBe(201);
    expect((await post(server.url, { method: 'POST', body: 'b' })).status).toBe(201);
    expect(keys).toHaveLength(6);
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(keys.slice(0, 3)).size).toBe(1);
    expect(new Set(keys.slice(3)).size).toBe(1);
    expect(keys[0]).not.toBe(keys[3]);
  });

  it('a key given as a string or already in the headers is used as is; GET gets no generated key', async () => {
    const keys: Array<string | undefined> = [];
    const server = await serve((req, res) => {
      keys.push(req.headers['idempotency-key'] as string | undefined);
      res.writeHead(200).end();
    });
    const f = createFetch(api(), { idempotencyKey: true });
    await f(server.url, { method: 'POST', idempotencyKey: 'order-42' });
    await f(server.url, { method: 'POST', headers: { 'Idempotency-Key': 'mine' } });
    await f(server.url);
    expect(keys).toEqual(['order-42', 'mine', undefined]);
  });

  it('409 with a key means "original still in flight": retried after backoff; without a key it is final', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(hits === 1 || hits === 3 ? 409 : 200).end();
    });
    const keyed = await fetchThrough(api(), server.url, { method: 'POST', idempotencyKey: true });
    expect(keyed.status).toBe(200);
    expect(hits).toBe(2);
    const plain = await fetchThrough(api(), server.url, { method: 'POST' });
    expect(plain.status).toBe(409);
    expect(hits).toBe(3);
  });
});

describe('fetchThrough — request bodies', () => {
  const streamOf = (parts: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new TextEncoder().encode(part));
        controller.close();
      },
    });

  it('a small stream body is buffered and sent whole on every attempt', async () => {
    const bodies: string[] = [];
    const server = await serve(async (req, res) => {
      bodies.push((await readBody(req)).toString());
      res.writeHead(bodies.length < 3 ? 503 : 200).end();
    });
    const response = await fetchThrough(api(), server.url, {
      method: 'PUT',
      body: streamOf(['he', 'llo']),
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(200);
    expect(bodies).toEqual(['hello', 'hello', 'hello']);
  });

  it('a Request input with a body is replayed too', async () => {
    const bodies: string[] = [];
    const server = await serve(async (req, res) => {
      bodies.push(`${req.method} ${req.headers['x-app']} ${(await readBody(req)).toString()}`);
      res.writeHead(bodies.length < 2 ? 503 : 200).end();
    });
    const request = new Request(server.url, { method: 'PUT', body: 'payload', headers: { 'x-app': 'demo' } });
    expect((await fetchThrough(api(), request)).status).toBe(200);
    expect(bodies).toEqual(['PUT demo payload', 'PUT demo payload']);
  });

  it('a stream larger than maxBufferedBody is sent once, whole; a 503 is returned, not retried', async () => {
    const bodies: string[] = [];
    const server = await serve(async (req, res) => {
      bodies.push((await readBody(req)).toString());
      res.writeHead(503).end();
    });
    const big = ['x'.repeat(600), 'y'.repeat(600)];
    const response = await fetchThrough(api(), server.url, {
      method: 'PUT',
      body: streamOf(big),
      maxBufferedBody: 1024,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(503);
    expect(bodies).toEqual([big.join('')]);
  });

  it('a keyed 409 (retryable for this request only) on a one-shot stream is not retried with a spent body', async () => {
    const bodies: string[] = [];
    const server = await serve(async (req, res) => {
      bodies.push((await readBody(req)).toString());
      res.writeHead(409).end();
    });
    const events: KindlyEvent[] = [];
    const d = api();
    d.onAny((e) => events.push(e));
    const response = await fetchThrough(d, server.url, {
      method: 'POST',
      idempotencyKey: true,
      body: streamOf(['z'.repeat(2048)]),
      maxBufferedBody: 1024,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(409);
    expect(bodies).toEqual(['z'.repeat(2048)]);
    const end = events.find((e) => e.type === 'attempt-end');
    expect(end?.type === 'attempt-end' && isRequestBodyNotReplayableError(end.error)).toBe(true);
  });

  it('a network failure that would need a retry of a one-shot stream fails with a clear, redacted error', async () => {
    let received = 0;
    const server = await serve(async (req) => {
      await readBody(req);
      received++;
      req.socket.destroy();
    });
    const error = await fetchThrough(api(), `${server.url}/upload?token=SECRET`, {
      method: 'PUT',
      body: streamOf(['x'.repeat(2048)]),
      maxBufferedBody: 1024,
      duplex: 'half',
    } as RequestInit).catch((e: unknown) => e);
    expect(received).toBe(1);
    expect(isGiveUpError(error) && error.reason).toBe('not-retryable');
    const cause = isGiveUpError(error) ? error.cause : undefined;
    expect(isRequestBodyNotReplayableError(cause)).toBe(true);
    expect(String((cause as Error).message)).toContain('/upload?token=REDACTED');
    expect(String((cause as Error).message)).not.toContain('SECRET');
  });
});

describe('fetchThrough — secrets never reach errors or events', () => {
  it('no Authorization, Cookie, URL credentials or secret query value in any error or event', async () => {
    const server = await serve((_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"msg":"busy"}'));
    const refused = await refusedPort();
    const d = api();
    const events: KindlyEvent[] = [];
    d.onAny((e) => events.push(e));
    const init = { headers: { authorization: 'Bearer AUTHSECRET', cookie: 'sid=COOKIESECRET' }, throwHttpErrors: true };
    const errors = [
      await fetchThrough(d, `${server.url}/a?api_key=QUERYSECRET&page=2`, init).catch((e: unknown) => e),
      await fetchThrough(d, `${refused}/b?access_token=QUERYSECRET`, init).catch((e: unknown) => e),
      await fetchThrough(d, `${refused}/c?signature=QUERYSECRET`, { ...init, method: 'POST', body: 'x' }).catch(
        (e: unknown) => e,
      ),
    ];
    expect(errors.every(isGiveUpError)).toBe(true);
    const dump =
      inspect({ errors, events }, { depth: 12, showHidden: false }) +
      JSON.stringify(events, (_k, v) => (typeof v === 'bigint' ? 0 : v));
    for (const secret of ['AUTHSECRET', 'COOKIESECRET', 'QUERYSECRET']) expect(dump).not.toContain(secret);
  });
});

describe('fetchThrough — connections (no socket leak)', () => {
  // undici's default pool per origin is unbounded and frees a socket a tick after its body
  // ends, so even plain fetch opens up to ~2 sockets per concurrent caller. A pool with an
  // explicit size makes the property exact: with 5 sockets, a single leaked one (a failed
  // body left unread) would block every later request, and the run would never finish.
  const POOL = 5;
  const pooled = () => {
    const dispatcher = new Agent({ connections: POOL });
    const f = ((input: string | URL, init?: RequestInit) =>
      undiciFetch(input, { ...(init as object), dispatcher } as never)) as unknown as typeof fetch;
    return { fetch: f, close: () => dispatcher.close() };
  };

  it('1,000 failed attempts leave no more open connections than the pool size', async () => {
    // 70 KiB error bodies: more than undici buffers on its own (and than kindly drains), so an
    // unread body would hold its socket — with a pool of 5, the run would stall after 5 failures.
    const body = Buffer.alloc(70 * 1024, 120);
    const server = await serve((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/octet-stream' }).end(body);
    });
    const pool = pooled();
    // 10 callers in parallel (twice the pool), 25 calls each, 4 attempts per call = 1,000 failed attempts.
    const d = api({ retry: { maxAttempts: 4, backoff: { shape: 'constant', baseMs: 0, jitter: 'none' } } });
    let attempts = 0;
    d.on('attempt-end', () => attempts++);
    const run = Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = 0; i < 25; i++) {
          const response = await fetchThrough(d, server.url, { fetch: pool.fetch });
          await response.body?.cancel(); // the caller's part: the last response is theirs
        }
      }),
    );
    // A watchdog on progress, not on total time: a leak stops the run dead, load only slows it.
    let watchdog: ReturnType<typeof setInterval> | undefined;
    const stalled = new Promise((_resolve, reject) => {
      let seen = -1;
      watchdog = setInterval(() => {
        if (attempts === seen) reject(new Error(`stalled after ${attempts} attempts: a failed response kept its connection`));
        seen = attempts;
      }, 2_000);
    });
    await Promise.race([run, stalled]).finally(() => clearInterval(watchdog));
    expect(attempts).toBe(1_000);
    await until(() => server.open <= POOL, 'connections to settle');
    expect(server.open).toBeLessThanOrEqual(POOL);
    console.log(
      `[figure] 1,000 failed attempts (70 KiB bodies), pool of ${POOL}: ${server.open} connections open at the end, ${server.accepted} accepted in total`,
    );
    await pool.close();
  });

  it('small failed bodies are drained, not cancelled: the connections are reused', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('x'.repeat(2_000));
    });
    const pool = pooled();
    const d = api({ retry: { maxAttempts: 4, backoff: { shape: 'constant', baseMs: 0, jitter: 'none' } } });
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        for (let i = 0; i < 5; i++) await (await fetchThrough(d, server.url, { fetch: pool.fetch })).text();
      }),
    );
    expect(server.open).toBeLessThanOrEqual(POOL);
    expect(server.accepted).toBeLessThanOrEqual(POOL);
    console.log(`[figure] 200 failed attempts (2 KB bodies), pool of ${POOL}: ${server.accepted} connections accepted in total`);
    await pool.close();
  });
});

describe('createFetch — options', () => {
  it('rejects unknown and invalid options, listing every problem', () => {
    expect(() => createFetch(api(), { retries: 3 } as never)).toThrow(/Unknown option `retries`/);
    expect(() => createFetch(api(), { maxBufferedBody: -1, idempotencyKey: 'fixed', throwHttpErrors: 'yes' } as never)).toThrow(
      /maxBufferedBody[\s\S]*throwHttpErrors[\s\S]*idempotencyKey/,
    );
  });

  it('per-call init overrides the defaults given to createFetch', async () => {
    const server = await serve((_req, res) => res.writeHead(503).end());
    const f = createFetch(api(), { throwHttpErrors: true });
    await expect(f(server.url)).rejects.toSatisfy(isGiveUpError);
    expect((await f(server.url, { throwHttpErrors: false })).status).toBe(503);
  });
});

/** Settles with the call's outcome, or 'still pending' if it has not settled within `ms` (a hang). */
async function within<T>(pending: Promise<T>, ms: number): Promise<T | 'still pending'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<'still pending'>((resolve) => {
    timer = setTimeout(() => resolve('still pending'), ms);
  });
  return await Promise.race([pending, hang]).finally(() => clearTimeout(timer));
}

/** A stream that yields one chunk and then never ends (nor errors), telling when it is cancelled. */
function endless(): { stream: ReadableStream<Uint8Array>; cancelled: Promise<unknown> } {
  let onCancel!: (reason: unknown) => void;
  const cancelled = new Promise<unknown>((resolve) => {
    onCancel = resolve;
  });
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('first chunk'));
    },
    cancel(reason) {
      onCancel(reason);
    },
  });
  return { stream, cancelled };
}

describe('fetchThrough — regressions from the review of the HTTP layer', () => {
  it('regression: .fetch() no longer hangs past its deadline when verify stops a planned retry while the failed body is still arriving', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(500, { 'content-type': 'application/octet-stream' });
      res.write('partial'); // and never ends
    });
    const started = performance.now();
    // A POST ending `unknown` (500) is retried only after verify; the 500's body starts
    // draining when the retry is planned, then verify says the attempt took effect.
    const result = await within(
      fetchThrough(api(), server.url, { method: 'POST', body: 'x', timeoutMs: 1_000, verify: () => true }),
      3_000,
    );
    expect(result).not.toBe('still pending');
    expect(performance.now() - started).toBeLessThan(1_000);
    const response = result as Response;
    expect(hits).toBe(1);
    expect(response.status).toBe(500);
    // Nothing read by the drain is lost: the body starts with the bytes that had arrived.
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('partial');
    await reader.cancel();
  });

  it('regression: the same when the breaker opens during the backoff, after the drain started', async () => {
    const server = await serve((req, res) => {
      res.writeHead(503, { 'content-type': 'application/octet-stream' });
      if (req.url === '/stalled')
        res.write('partial'); // and never ends
      else res.end('done');
    });
    const d = api({
      breaker: { threshold: 2, breakMs: 10_000 },
      retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 150, jitter: 'none' } },
    });
    const giveUps: string[] = [];
    d.on('give-up', (e) => giveUps.push(e.reason));
    const stalled = fetchThrough(d, `${server.url}/stalled`, { timeoutMs: 2_000 });
    // While the first call sleeps before its retry (its 503 body draining), a second call's
    // failure on the same host opens the breaker: the first call gives up when it wakes.
    await new Promise((resolve) => setTimeout(resolve, 30));
    const other = await fetchThrough(d, `${server.url}/other`);
    await other.text();
    const result = await within(stalled, 3_000);
    expect(result).not.toBe('still pending');
    expect(giveUps).toEqual(['circuit-open', 'circuit-open']); // the other call's, then this one's
    const response = result as Response;
    expect(response.status).toBe(503);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('partial');
    await reader.cancel();
  });

  it('regression: a 503 whose body is slow stays `failed`; looking for a body hint no longer turns it into an attempt timeout', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      // JSON, small by its Content-Length, but the body never comes.
      res.writeHead(503, { 'content-type': 'application/json', 'content-length': '40' });
      res.write('{"x":');
    });
    const d = api({
      attemptTimeoutMs: 2_000,
      retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 5, jitter: 'none' } },
    });
    const outcomes: string[] = [];
    d.on('attempt-end', (e) => outcomes.push(e.outcome));
    const started = performance.now();
    const response = await fetchThrough(d, server.url);
    expect(response.status).toBe(503);
    expect(outcomes).toEqual(['failed', 'failed', 'failed']);
    expect(hits).toBe(3);
    // Three attempts, none anywhere near the 2 s attempt timeout.
    expect(performance.now() - started).toBeLessThan(2_000);
    await response.body?.cancel();
  });

  it('regression: a body hint is still read from a small body that arrives in time', async () => {
    const at: number[] = [];
    const server = await serve((_req, res) => {
      at.push(performance.now());
      if (at.length > 1) return void res.writeHead(200).end();
      res.writeHead(503, { 'content-type': 'application/json' });
      res.write('{"error":'); // chunked, no Content-Length; the rest follows shortly
      setTimeout(() => res.end('{"retry_after_ms":150}}'), 10);
    });
    const response = await fetchThrough(
      api({ retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } }),
      server.url,
    );
    expect(response.status).toBe(200);
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(150);
  });

  it('regression: a never-ending stream body no longer holds the call past the caller’s abort', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(200).end();
    });
    const { stream, cancelled } = endless();
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    setTimeout(() => controller.abort(reason), 50);
    const pending = fetchThrough(api(), server.url, {
      method: 'PUT',
      body: stream,
      duplex: 'half',
      signal: controller.signal,
    } as RequestInit);
    const result = await within(
      pending.catch((e: unknown) => e),
      3_000,
    );
    expect(result).toBe(reason);
    expect(await cancelled).toBe(reason); // the source was told to stop
    expect(hits).toBe(0);
  });

  it('regression: … nor past its timeout: DeadlineExceededError, nothing sent', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(200).end();
    });
    const { stream, cancelled } = endless();
    const pending = fetchThrough(api(), server.url, {
      method: 'PUT',
      body: stream,
      duplex: 'half',
      timeoutMs: 100,
    } as RequestInit);
    const result = await within(
      pending.catch((e: unknown) => e),
      3_000,
    );
    expect(isDeadlineExceededError(result)).toBe(true);
    expect(isDeadlineExceededError(result) && result.outcome).toBe('failed');
    await cancelled;
    expect(hits).toBe(0);
  });

  it('regression: URL credentials and secret query values never reach the GiveUpError, its cause or the events', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end());
    const d = api();
    const events: KindlyEvent[] = [];
    d.onAny((e) => events.push(e));
    const port = new URL(server.url).port;
    // undici refuses the URL with a TypeError that quotes it whole.
    const error = await fetchThrough(d, `http://alice:PASSSECRET@127.0.0.1:${port}/x?token=QUERYSECRET`).catch((e: unknown) => e);
    expect(isGiveUpError(error)).toBe(true);
    const cause = isGiveUpError(error) ? error.cause : undefined;
    expect(isHttpRequestError(cause)).toBe(true);
    expect(String((cause as Error).message)).toContain('http://REDACTED@127.0.0.1');
    expect(String((cause as Error).message)).toContain('token=REDACTED');
    const dump =
      inspect({ error, events }, { depth: 12, showHidden: true }) + String((error as Error).stack) + JSON.stringify(events);
    for (const secret of ['PASSSECRET', 'QUERYSECRET', 'alice:']) expect(dump).not.toContain(secret);
  });

  it('regression: credentials in a URL spelled without `//` (`http:alice:…@host`) never reach the error or the events', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end());
    const port = new URL(server.url).port;
    for (const url of [`http:alice:PASSSECRET@127.0.0.1:${port}/x`, `http:\\\\alice:PASSSECRET@127.0.0.1:${port}/x`]) {
      const d = api();
      const events: KindlyEvent[] = [];
      d.onAny((e) => events.push(e));
      const error = await fetchThrough(d, url).catch((e: unknown) => e);
      expect(isGiveUpError(error), url).toBe(true);
      const dump =
        inspect({ error, events }, { depth: 12, showHidden: true }) + String((error as Error).stack) + JSON.stringify(events);
      for (const secret of ['PASSSECRET', 'alice:']) expect(dump, url).not.toContain(secret);
    }
  });

  it('regression: a network error without a secret in it is kept as the cause, with its code', async () => {
    const url = await refusedPort();
    const error = await fetchThrough(api({ retry: false }), `${url}/x?token=QUERYSECRET`).catch((e: unknown) => e);
    const cause = isGiveUpError(error) ? error.cause : undefined;
    expect(isHttpRequestError(cause) && cause.errorCode).toBe('ECONNREFUSED');
    expect(isHttpRequestError(cause) && cause.url).toBe(`${url}/x?token=REDACTED`);
    expect((cause as Error).cause).toBeInstanceOf(TypeError); // undici's own `fetch failed`
    expect(inspect(error, { depth: 12 })).not.toContain('QUERYSECRET');
  });

  it('regression: Set-Cookie never reaches an HttpStatusError or an event; the caller’s own response keeps it', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res
        .writeHead(hits < 3 ? 503 : 404, { 'set-cookie': 'sid=COOKIESECRET; HttpOnly', 'content-type': 'text/plain' })
        .end(`no #${hits}`);
    });
    const d = api();
    const events: KindlyEvent[] = [];
    d.onAny((e) => events.push(e));
    const error = await fetchThrough(d, server.url, { throwHttpErrors: true }).catch((e: unknown) => e);
    expect(isGiveUpError(error)).toBe(true);
    const statusError = (error as Error).cause as HttpStatusError;
    const exposed = statusError.response as Response;
    expect(exposed.headers.get('set-cookie')).toBeNull();
    expect(exposed.headers.get('content-type')).toBe('text/plain');
    expect(await exposed.text()).toBe('no #3'); // still readable
    const dump = inspect({ error, events }, { depth: 12 }) + JSON.stringify(events);
    expect(dump).not.toContain('COOKIESECRET');
    const own = await fetchThrough(api({ retry: false }), server.url);
    expect(own.headers.get('set-cookie')).toContain('COOKIESECRET');
    await own.text();
  });

  it('regression: when a fallback answers, the last failed response’s body is cancelled: its connection closes', async () => {
    let closed = 0;
    const server = await serve((req, res) => {
      req.socket.once('close', () => closed++);
      res.writeHead(503, { 'content-type': 'application/octet-stream' });
      res.write(Buffer.alloc(1024)); // a body that never ends: only a cancel frees the socket
    });
    const response = await fetchThrough(api({ retry: false }), server.url, { fallback: () => new Response('from the fallback') });
    expect(await response.text()).toBe('from the fallback');
    await until(() => closed === 1, 'the failed response’s connection to close');
  });

  it('regression: the same when the fallback answers after a retry was planned (the drain is cancelled)', async () => {
    let closed = 0;
    const server = await serve((req, res) => {
      req.socket.once('close', () => closed++);
      res.writeHead(500, { 'content-type': 'application/octet-stream' });
      res.write('partial');
    });
    const response = await fetchThrough(api(), server.url, {
      method: 'POST',
      body: 'x',
      verify: () => true,
      fallback: () => new Response('from the fallback'),
    });
    expect(await response.text()).toBe('from the fallback');
    await until(() => closed === 1, 'the failed response’s connection to close');
  });

  it('regression: a long-lived caller signal carries at most one kindly listener and no AbortSignal.any, over many calls', async () => {
    const server = await serve((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    const any = vi.spyOn(AbortSignal, 'any');
    const d = api();
    const long = new AbortController();
    let most = 0;
    try {
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          for (let i = 0; i < 50; i++) {
            const response = await fetchThrough(d, server.url, { signal: long.signal });
            most = Math.max(most, getEventListeners(long.signal, 'abort').length);
            expect(await response.text()).toBe('ok');
          }
        }),
      );
      expect(any).not.toHaveBeenCalled();
    } finally {
      any.mockRestore();
    }
    // One listener of kindly's fetch layer for every attempt following the signal, plus one per
    // attempt in flight (the pipeline's own, removed when the attempt ends).
    expect(most).toBeLessThanOrEqual(1 + 4);
    expect(getEventListeners(long.signal, 'abort').length).toBeLessThanOrEqual(1);
  });

  it('regression: the caller’s signal still aborts a body being read after the response arrived, as with fetch', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.write('head');
    });
    const controller = new AbortController();
    const response = await fetchThrough(api(), server.url, { signal: controller.signal });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('head');
    const next = reader.read();
    const reason = new Error('stop reading');
    controller.abort(reason);
    await expect(next).rejects.toBe(reason);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
