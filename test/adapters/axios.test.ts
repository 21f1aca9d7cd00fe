import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { inspect } from 'node:util';
import axios, { type InternalAxiosRequestConfig, isAxiosError, isCancel } from 'axios';
import { describe, expect, it } from 'vitest';
import { axiosInterceptors } from '../../src/adapters/index.js';
import { isHttpRequestError } from '../../src/http/index.js';
import { downstream, isGiveUpError, type KindlyEvent } from '../../src/index.js';
import { readBody, refusedPort, serverPerTest } from '../http/support/loopback.js';

const serve = serverPerTest();

const api = (base = 50) =>
  downstream('api', { budget: false, retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: base, jitter: 'none' } } });

describe('axiosInterceptors, real server on loopback', () => {
  it('retries 503 with backoff; interceptors and transforms run once per request; attempts are numbered', async () => {
    const at: number[] = [];
    const attempts: string[] = [];
    const server = await serve((req, res) => {
      at.push(performance.now());
      attempts.push(String(req.headers['x-retry-attempt']));
      if (at.length < 3) res.writeHead(503).end();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
    const client = axiosInterceptors(axios.create({ baseURL: server.url }), api(50), { propagateHeaders: true });
    let intercepted = 0;
    client.interceptors.request.use((config) => {
      intercepted++;
      return config;
    });
    const response = await client.get('/things');
    expect(response.status).toBe(200);
    expect(response.data).toEqual({ ok: true });
    expect(intercepted).toBe(1);
    expect(attempts).toEqual(['0', '1', '2']);
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(50);
    expect((at[2] as number) - (at[1] as number)).toBeGreaterThanOrEqual(50);
  });

  it('honours Retry-After from the response headers', async () => {
    const at: number[] = [];
    const server = await serve((_req, res) => {
      at.push(performance.now());
      if (at.length === 1) res.writeHead(503, { 'retry-after': '1' }).end();
      else res.writeHead(200).end('ok');
    });
    const client = axiosInterceptors(axios.create(), api(1));
    expect((await client.get(server.url)).data).toBe('ok');
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(1_000);
  });

  it('when retries run out, rejects with axios’ own error for the last attempt', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(503, { 'content-type': 'application/json' }).end(`{"attempt":${hits}}`);
    });
    const error = await axiosInterceptors(axios.create(), api(1))
      .get(server.url)
      .catch((e: unknown) => e);
    expect(hits).toBe(3);
    expect(isAxiosError(error)).toBe(true);
    if (!isAxiosError(error)) return;
    expect(error.response?.status).toBe(503);
    expect(error.response?.data).toEqual({ attempt: 3 });
  });

  it.each([401, 403, 404])('never retries %i', async (status) => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(status).end();
    });
    const error = await axiosInterceptors(axios.create(), api(1))
      .get(server.url)
      .catch((e: unknown) => e);
    expect(isAxiosError(error) && error.response?.status).toBe(status);
    expect(hits).toBe(1);
  });

  it('a network failure rejects with the GiveUpError; its cause is a copy of axios’ error without the secrets', async () => {
    const url = await refusedPort();
    const d = api(1);
    const events: KindlyEvent[] = [];
    d.onAny((e) => events.push(e));
    const client = axiosInterceptors(axios.create({ headers: { Authorization: 'Bearer AUTHSECRET' } }), d);
    const error = await client.get(`${url}/x?api_key=QUERYSECRET`).catch((e: unknown) => e);
    expect(isGiveUpError(error) && error.reason).toBe('max-attempts');
    expect(isGiveUpError(error) && error.outcome).toBe('failed');
    const cause = isGiveUpError(error) ? error.cause : undefined;
    expect(isHttpRequestError(cause) && cause.errorCode).toBe('ECONNREFUSED');
    expect(isHttpRequestError(cause) && cause.url).toBe(`${url}/x?api_key=REDACTED`);
    const dump = inspect({ error, events }, { depth: 12 });
    expect(dump).not.toContain('AUTHSECRET');
    expect(dump).not.toContain('QUERYSECRET');
  });

  it('regression: Set-Cookie of a failed response never reaches an event; axios’ own error keeps it', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(503, { 'set-cookie': 'sid=COOKIESECRET', 'retry-after': '0', 'content-type': 'application/json' }).end('{}');
    });
    const d = api(1);
    const events: KindlyEvent[] = [];
    d.onAny((e) => events.push(e));
    const error = await axiosInterceptors(axios.create(), d)
      .get(server.url)
      .catch((e: unknown) => e);
    expect(isAxiosError(error) && error.response?.headers['set-cookie']).toEqual(['sid=COOKIESECRET']);
    const ends = events.filter((e) => e.type === 'attempt-end');
    expect(ends).toHaveLength(3);
    const statusError = ends[0]?.type === 'attempt-end' ? (ends[0].error as { response?: { headers?: unknown } }) : undefined;
    expect(statusError?.response?.headers).toMatchObject({ 'retry-after': '0', 'content-type': 'application/json' });
    expect(inspect(events, { depth: 12 }) + JSON.stringify(events)).not.toContain('COOKIESECRET');
  });

  it('POST without a key is not sent twice after a 502; with idempotencyKey it is retried with the same key', async () => {
    const keys: Array<string | undefined> = [];
    const server = await serve(async (req, res) => {
      await readBody(req);
      keys.push(req.headers['idempotency-key'] as string | undefined);
      res.writeHead(keys.length === 3 ? 201 : 502).end();
    });
    const plain = await axiosInterceptors(axios.create(), api(1))
      .post(server.url, { amount: 10 })
      .catch((e: unknown) => e);
    expect(isAxiosError(plain) && plain.response?.status).toBe(502);
    expect(keys).toEqual([undefined]);
    const keyed = await axiosInterceptors(axios.create(), api(1), { idempotencyKey: true }).post(server.url, { amount: 10 });
    expect(keyed.status).toBe(201);
    expect(keys).toHaveLength(3);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[2]).toBe(keys[1]);
  });

  it('a stream body is sent once: a 503 that would be retried ends the call with axios’ error', async () => {
    const bodies: string[] = [];
    const server = await serve(async (req, res) => {
      bodies.push((await readBody(req)).toString());
      res.writeHead(503).end();
    });
    const error = await axiosInterceptors(axios.create(), api(1))
      .put(server.url, Readable.from(['one', 'shot']))
      .catch((e: unknown) => e);
    expect(isAxiosError(error) && error.response?.status).toBe(503);
    expect(bodies).toEqual(['oneshot']);
  });

  it('cancelling with a CancelToken during backoff rejects at once with axios’ CanceledError, and sends nothing more', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(503).end();
    });
    const source = axios.CancelToken.source();
    const client = axiosInterceptors(axios.create(), api(400));
    const started = performance.now();
    const pending = client.get(server.url, { cancelToken: source.token }).catch((e: unknown) => e);
    setTimeout(() => source.cancel('user left'), 100);
    const error = await pending;
    expect(isCancel(error)).toBe(true);
    expect((error as Error).message).toBe('user left');
    expect(performance.now() - started).toBeLessThan(350);
    await new Promise((r) => setTimeout(r, 400));
    expect(hits).toBe(1);
  });

  it('a CancelToken and a signal together: the token still cancels the backoff, and is let go when a call ends', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(hits === 1 ? 200 : 503).end();
    });
    const client = axiosInterceptors(axios.create(), api(400));
    // A long-lived token: the successful call must leave no listener of kindly's on it.
    const kept = axios.CancelToken.source();
    const token = kept.token as unknown as { subscribe(l: unknown): void; unsubscribe(l: unknown): void };
    const { subscribe, unsubscribe } = token;
    const listening = new Set<unknown>();
    token.subscribe = (listener) => {
      listening.add(listener);
      subscribe.call(token, listener);
    };
    token.unsubscribe = (listener) => {
      listening.delete(listener);
      unsubscribe.call(token, listener);
    };
    expect((await client.get(server.url, { cancelToken: kept.token, signal: new AbortController().signal })).status).toBe(200);
    expect(listening.size).toBe(0);

    const source = axios.CancelToken.source();
    const pending = client
      .get(server.url, { cancelToken: source.token, signal: new AbortController().signal })
      .catch((e: unknown) => e);
    setTimeout(() => source.cancel('user left'), 100);
    expect(isCancel(await pending)).toBe(true);
    await new Promise((r) => setTimeout(r, 400));
    expect(hits).toBe(2);
  });

  it.each([
    ['a 304', (res: ServerResponse) => res.writeHead(304).end(), {}, 304],
    [
      'a 302 with maxRedirects: 0',
      (res: ServerResponse) => res.writeHead(302, { location: '/y' }).end(),
      { maxRedirects: 0 },
      302,
    ],
    [
      'a 200 refused by validateStatus',
      (res: ServerResponse) => res.writeHead(200).end('x'),
      { validateStatus: (s: number) => s === 201 },
      200,
    ],
    [
      'a body over maxContentLength',
      (res: ServerResponse) => res.writeHead(200).end('x'.repeat(1_000)),
      { maxContentLength: 10 },
      undefined,
    ],
  ] as const)(
    'what axios itself refuses is not retried: %s rejects with axios’ own error after one request',
    async (_name, answer, config, status) => {
      let hits = 0;
      const server = await serve((_req, res) => {
        hits++;
        answer(res);
      });
      const d = api(1);
      const events: KindlyEvent[] = [];
      d.onAny((e) => events.push(e));
      const error = await axiosInterceptors(axios.create({ headers: { Authorization: 'Bearer AUTHSECRET' } }), d)
        .get(server.url, config)
        .catch((e: unknown) => e);
      expect(hits).toBe(1);
      expect(isAxiosError(error)).toBe(true);
      if (!isAxiosError(error)) return;
      expect(error.code).toBe('ERR_BAD_RESPONSE');
      expect(error.response?.status).toBe(status);
      expect(inspect(events, { depth: 12 })).not.toContain('AUTHSECRET');
    },
  );

  it('too many redirects and a bad option are not retried: axios’ own error', async () => {
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(302, { location: '/again' }).end();
    });
    const client = axiosInterceptors(axios.create(), api(1));
    const loop = await client.get(server.url, { maxRedirects: 1 }).catch((e: unknown) => e);
    expect(isAxiosError(loop) && loop.code).toBe('ERR_FR_TOO_MANY_REDIRECTS');
    expect(hits).toBe(2); // the request and its one redirect, once
    const bad = await client.get(server.url, { socketPath: 42 as never }).catch((e: unknown) => e);
    expect(isAxiosError(bad) && bad.code).toBe('ERR_BAD_OPTION_VALUE');
    expect(hits).toBe(2);
  });

  it('error.config is the request’s own config: replaying it after a 401 (token refresh) is still cancelled by the caller', async () => {
    let hits = 0;
    const server = await serve((req, res) => {
      hits++;
      if (req.headers.authorization !== 'Bearer new') res.writeHead(401).end();
      else setTimeout(() => res.writeHead(200).end('ok'), 400);
    });
    const client = axiosInterceptors(axios.create({ headers: { Authorization: 'Bearer old' } }), api(1));
    client.interceptors.response.use(undefined, async (error: unknown) => {
      if (!isAxiosError(error) || error.response?.status !== 401 || error.config === undefined) throw error;
      const config = error.config as InternalAxiosRequestConfig & { _retry?: boolean };
      if (config._retry) throw error;
      config._retry = true;
      config.headers.Authorization = 'Bearer new';
      return client(config);
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const started = performance.now();
    const error = await client.get(server.url, { signal: controller.signal }).catch((e: unknown) => e);
    expect(isCancel(error)).toBe(true);
    expect(performance.now() - started).toBeLessThan(300);
    expect(hits).toBe(2);
  });

  it('response.config is the request’s own config, without kindly’s attempt signal and headers', async () => {
    const server = await serve((_req, res) => res.writeHead(200).end('ok'));
    const controller = new AbortController();
    const response = await axiosInterceptors(axios.create(), api(1), { propagateHeaders: true }).get(server.url, {
      signal: controller.signal,
    });
    expect(response.config.signal).toBe(controller.signal);
    expect(response.config.headers.has('x-retry-attempt')).toBe(false);
  });

  it('validates its options', () => {
    expect(() => axiosInterceptors(axios.create(), api(), { retries: 2 } as never)).toThrow(/Unknown option `retries`/);
  });
});
