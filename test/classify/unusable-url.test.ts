import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { classifyError } from '../../src/classify/classify-error.js';
import { classifyUnusableUrl } from '../../src/classify/unusable-url.js';
import { fetchThrough } from '../../src/http/index.js';
import { downstream, type GiveUpError } from '../../src/index.js';

/** Regression: URLs that can never be fetched were retried three times. */
describe('a URL that can never be fetched is not retried', () => {
  it.each([
    ['an unknown scheme', 'ftp://example.com/file'],
    ['a WebSocket URL', 'ws://127.0.0.1:1/'],
    ["a port on fetch's bad-port list", 'http://127.0.0.1:6000/'],
    ['a port out of range', 'http://127.0.0.1:99999/'],
    ['a malformed URL', 'http://[::1/'],
    ['a file URL', 'file:///etc/hostname'],
  ])('%s (%s): one attempt, reason not-retryable', async (_what, url) => {
    const api = downstream('urls', { retry: { maxAttempts: 3, backoff: { baseMs: 1 } } });
    const error = (await fetchThrough(api, url).catch((e: unknown) => e)) as GiveUpError;
    expect(error.name).toBe('GiveUpError');
    expect(error.reason).toBe('not-retryable');
    expect(error.attempts).toBe(1);
  });

  it('a refused connection is still retried (the service may come back)', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const api = downstream('gone', { retry: { maxAttempts: 2, backoff: { baseMs: 1 } } });
    const error = (await fetchThrough(api, `http://127.0.0.1:${port}/`).catch((e: unknown) => e)) as GiveUpError;
    expect(error.reason).toBe('max-attempts');
    expect(error.attempts).toBe(2);
  });

  it('reads the reason along the cause chain; other errors are left to the next rules', () => {
    const undici = new TypeError('fetch failed', { cause: new Error('unknown scheme') });
    expect(classifyUnusableUrl(undici)).toEqual({ outcome: 'failed', retryable: false });
    expect(classifyError(undici, 0)).toEqual({ outcome: 'failed', retryable: false });
    const axios = Object.assign(new Error('Unsupported protocol gopher:'), { code: 'ERR_BAD_REQUEST' });
    expect(classifyUnusableUrl(axios)).toEqual({ outcome: 'failed', retryable: false });
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    expect(classifyUnusableUrl(refused)).toBeUndefined();
    expect(classifyError(refused, 0)).toMatchObject({ outcome: 'failed', retryable: true });
  });
});
