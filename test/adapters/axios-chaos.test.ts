import axios, { AxiosError, AxiosHeaders, type InternalAxiosRequestConfig, isAxiosError } from 'axios';
import { describe, expect, it } from 'vitest';
import { axiosInterceptors } from '../../src/adapters/index.js';
import { enableChaos } from '../../src/chaos/index.js';
import { downstream } from '../../src/index.js';
import { serverPerTest } from '../http/support/loopback.js';

const serve = serverPerTest();

const on = { dangerouslyEnableChaos: true } as const;
const api = (name: string) =>
  downstream(name, { budget: false, retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } } });

/** A real server answering `status` with `headers` and no body, counting requests. */
async function answering(status: number, headers: Record<string, string>) {
  let hits = 0;
  const server = await serve((_req, res) => {
    hits++;
    res.writeHead(status, headers).end();
  });
  return { url: server.url, hits: () => hits };
}

/** A real server that answers 200: only chaos can make a request to it fail. */
async function healthy() {
  return answering(200, {});
}

/**
 * An axios client through `d` that remembers the config axios handed to its adapter (the
 * request's own config, which the caller's error and response must carry).
 */
function client(d: ReturnType<typeof downstream>) {
  const configs: InternalAxiosRequestConfig[] = [];
  const instance = axiosInterceptors(axios.create(), d);
  instance.interceptors.request.use((config) => {
    configs.push(config);
    return config;
  });
  return { instance, configs };
}

/** What an axios caller reads from a failed request. */
function shape(error: unknown, ownConfig: unknown) {
  if (!isAxiosError(error)) return { isAxiosError: false, error: String(error) };
  const response = error.response;
  return {
    isAxiosError: true,
    isAxiosErrorClass: error instanceof AxiosError,
    name: error.name,
    message: error.message,
    code: error.code,
    status: error.status,
    configIsOwn: error.config === ownConfig,
    signalIsCaller: error.config?.signal === (ownConfig as { signal?: unknown }).signal,
    response: {
      status: response?.status,
      statusText: response?.statusText,
      headersClass: response?.headers instanceof AxiosHeaders,
      retryAfter: (response?.headers as AxiosHeaders | undefined)?.get('retry-after'),
      data: response?.data,
      configIsOwn: response?.config === ownConfig,
    },
  };
}

describe('a status chaos injects under axiosInterceptors ends the request as a real one does', () => {
  it('an injected 503 rejects with the AxiosError a real 503 gives: class, code, message, status, response, config', async () => {
    const headers = { 'retry-after': '0' };
    const down = await answering(503, headers);
    const real = client(api('real'));
    const caller = new AbortController();
    const realError = await real.instance.get(down.url, { signal: caller.signal }).catch((e: unknown) => e);

    const target = await healthy();
    const d = api('injected');
    enableChaos(d, { ...on, faults: [{ kind: 'status', rate: 1, status: 503, headers }] });
    const injected = client(d);
    const injectedError = await injected.instance.get(target.url, { signal: caller.signal }).catch((e: unknown) => e);

    const expected = shape(realError, real.configs[0]);
    expect(expected).toMatchObject({
      isAxiosError: true,
      code: 'ERR_BAD_RESPONSE',
      status: 503,
      configIsOwn: true,
      signalIsCaller: true,
      response: { status: 503, statusText: 'Service Unavailable', headersClass: true, retryAfter: '0', configIsOwn: true },
    });
    expect(shape(injectedError, injected.configs[0])).toEqual(expected);
    expect(d.stats()).toMatchObject({ attempts: down.hits(), chaosInjected: down.hits() });
    expect(target.hits()).toBe(0);
  });

  it('an injected 404 rejects at once with axios’ ERR_BAD_REQUEST error, as a real 404 does', async () => {
    const down = await answering(404, {});
    const real = client(api('real'));
    const realError = await real.instance.get(down.url).catch((e: unknown) => e);

    const target = await healthy();
    const d = api('injected');
    enableChaos(d, { ...on, faults: [{ kind: 'status', rate: 1, status: 404 }] });
    const injected = client(d);
    const injectedError = await injected.instance.get(target.url).catch((e: unknown) => e);

    expect(shape(realError, real.configs[0])).toMatchObject({ code: 'ERR_BAD_REQUEST', response: { statusText: 'Not Found' } });
    expect(shape(injectedError, injected.configs[0])).toEqual(shape(realError, real.configs[0]));
    expect(d.stats().attempts).toBe(1);
    expect(down.hits()).toBe(1);
  });

  it('an injected 409 on a POST with an Idempotency-Key is retried as a real in-flight conflict is', async () => {
    const down = await answering(409, {});
    const realD = api('real');
    const realError = await axiosInterceptors(axios.create(), realD, { idempotencyKey: true })
      .post(down.url, { n: 1 })
      .catch((e: unknown) => e);

    const target = await healthy();
    const d = api('injected');
    enableChaos(d, { ...on, faults: [{ kind: 'status', rate: 1, status: 409 }] });
    const injectedError = await axiosInterceptors(axios.create(), d, { idempotencyKey: true })
      .post(target.url, { n: 1 })
      .catch((e: unknown) => e);

    expect(down.hits()).toBe(3);
    expect(d.stats().attempts).toBe(realD.stats().attempts);
    expect(isAxiosError(injectedError) && injectedError.response?.status).toBe(409);
    expect(isAxiosError(realError) && realError.response?.status).toBe(409);
  });

  it('when validateStatus accepts the status, the injected response resolves, as a real one does', async () => {
    const validateStatus = (status: number) => status < 600;
    const down = await answering(503, { 'retry-after': '0' });
    const realResponse = await axiosInterceptors(axios.create(), api('real')).get(down.url, { validateStatus });

    const target = await healthy();
    const d = api('injected');
    enableChaos(d, { ...on, faults: [{ kind: 'status', rate: 1, status: 503, headers: { 'retry-after': '0' } }] });
    const injectedResponse = await axiosInterceptors(axios.create(), d).get(target.url, { validateStatus });

    const read = (r: typeof realResponse) => ({
      status: r.status,
      statusText: r.statusText,
      headersClass: r.headers instanceof AxiosHeaders,
      retryAfter: (r.headers as AxiosHeaders).get('retry-after'),
      data: r.data,
      validateStatus: r.config.validateStatus,
    });
    expect(read(injectedResponse)).toEqual(read(realResponse));
    expect(target.hits()).toBe(0);
  });
});
