import { describe, expect, it } from 'vitest';
import { classifyNetworkError } from '../../src/classify/network-error.js';

const withCode = (code: string, message = code) => Object.assign(new Error(message), { code });

describe('classifyNetworkError', () => {
  it.each([
    // code, outcome, retryable, timeout
    ['ECONNREFUSED', 'failed', true, false],
    ['EAI_AGAIN', 'failed', true, false],
    ['ENETUNREACH', 'failed', true, false],
    ['ENETDOWN', 'failed', true, false],
    ['EHOSTUNREACH', 'failed', true, false],
    ['EHOSTDOWN', 'failed', true, false],
    ['EADDRNOTAVAIL', 'failed', true, false],
    ['UND_ERR_CONNECT_TIMEOUT', 'failed', true, true],
    ['ERR_SOCKET_CONNECTION_TIMEOUT', 'failed', true, true],
    ['ERR_TLS_HANDSHAKE_TIMEOUT', 'failed', true, true],
    ['ECONNRESET', 'unknown', true, false],
    ['EPIPE', 'unknown', true, false],
    ['UND_ERR_SOCKET', 'unknown', true, false],
    ['ECONNABORTED', 'unknown', true, false],
    ['ERR_NETWORK', 'unknown', true, false],
    ['ETIMEDOUT', 'unknown', true, true],
    ['ESOCKETTIMEDOUT', 'unknown', true, true],
    ['UND_ERR_HEADERS_TIMEOUT', 'unknown', true, true],
    ['UND_ERR_BODY_TIMEOUT', 'unknown', true, true],
    ['ENOTFOUND', 'failed', false, false],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'failed', false, false],
    ['ERR_SSL_WRONG_VERSION_NUMBER', 'failed', false, false],
    ['ERR_OSSL_EVP_UNSUPPORTED', 'failed', false, false],
    ['CERT_HAS_EXPIRED', 'failed', false, false],
    ['CERT_NOT_YET_VALID', 'failed', false, false],
    ['DEPTH_ZERO_SELF_SIGNED_CERT', 'failed', false, false],
    ['SELF_SIGNED_CERT_IN_CHAIN', 'failed', false, false],
    ['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'failed', false, false],
    ['UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'failed', false, false],
    ['HOSTNAME_MISMATCH', 'failed', false, false],
  ] as const)('%s ⇒ %s, retryable %s, timeout %s', (code, outcome, retryable, timeout) => {
    expect(classifyNetworkError(withCode(code))).toEqual({ outcome, retryable, code, ...(timeout ? { timeout: true } : {}) });
  });

  it("flags axios' ECONNABORTED timeout as a timeout", () => {
    expect(classifyNetworkError(withCode('ECONNABORTED', 'timeout of 1000ms exceeded'))).toEqual({
      outcome: 'unknown',
      retryable: true,
      code: 'ECONNABORTED',
      timeout: true,
    });
  });

  it("follows undici's fetch failed → cause chain", () => {
    const error = new TypeError('fetch failed', { cause: withCode('UND_ERR_CONNECT_TIMEOUT') });
    expect(classifyNetworkError(error)).toMatchObject({ outcome: 'failed', retryable: true, timeout: true });
    const dns = new TypeError('fetch failed', { cause: withCode('ENOTFOUND', 'getaddrinfo ENOTFOUND nope.invalid') });
    expect(classifyNetworkError(dns)).toMatchObject({ outcome: 'failed', retryable: false, code: 'ENOTFOUND' });
  });

  it("looks inside AggregateError's errors (happy-eyeballs connect)", () => {
    const error = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect failed');
    expect(classifyNetworkError(new TypeError('fetch failed', { cause: error }))).toMatchObject({ code: 'ECONNREFUSED' });
  });

  it('the outermost known code wins', () => {
    const error = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET', cause: withCode('ECONNREFUSED') });
    expect(classifyNetworkError(error)?.code).toBe('UND_ERR_SOCKET');
  });

  it('is cycle-safe and depth-limited', () => {
    const a: Record<string, unknown> = { name: 'Error', message: 'a' };
    const b: Record<string, unknown> = { name: 'Error', message: 'b', cause: a };
    a.cause = b;
    expect(classifyNetworkError(a)).toBeUndefined();

    let deep: unknown = withCode('ECONNREFUSED');
    for (let i = 0; i < 20; i++) deep = new Error(`layer ${i}`, { cause: deep });
    expect(classifyNetworkError(deep)).toBeUndefined();
    let shallow: unknown = withCode('ECONNREFUSED');
    for (let i = 0; i < 5; i++) shallow = new Error(`layer ${i}`, { cause: shallow });
    expect(classifyNetworkError(shallow)?.code).toBe('ECONNREFUSED');
  });

  it.each([
    'Failed to fetch',
    'Failed to fetch (api.example.com)',
    'NetworkError when attempting to fetch resource.',
    'Load failed',
    'fetch failed',
  ])('browser/undici network TypeError "%s" ⇒ unknown, retryable', (message) => {
    expect(classifyNetworkError(new TypeError(message))).toEqual({ outcome: 'unknown', retryable: true });
  });

  it('"socket hang up" ⇒ unknown, retryable', () => {
    expect(classifyNetworkError(new Error('socket hang up'))).toEqual({ outcome: 'unknown', retryable: true });
  });

  it('a known code in the chain beats a network-shaped message', () => {
    const error = new TypeError('fetch failed', { cause: withCode('CERT_HAS_EXPIRED') });
    expect(classifyNetworkError(error)).toMatchObject({ outcome: 'failed', retryable: false });
  });

  it.each([
    new Error('boom'),
    new TypeError('x is not a function'),
    new Error('Failed to fetch'), // not a TypeError
    withCode('EACCES'),
    { code: 42 },
    'ECONNREFUSED',
    null,
    undefined,
  ])('nothing network-shaped ⇒ undefined (%#)', (error) => {
    expect(classifyNetworkError(error)).toBeUndefined();
  });

  it('never throws on hostile values', () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error('get');
        },
      },
    );
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(classifyNetworkError(hostile)).toBeUndefined();
    expect(classifyNetworkError(proxy)).toBeUndefined();
    expect(classifyNetworkError({ errors: proxy })).toBeUndefined();
    expect(classifyNetworkError({ cause: hostile, code: 'nope' })).toBeUndefined();
  });
});
