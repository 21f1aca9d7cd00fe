import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classifyError } from '../../src/classify/classify-error.js';
import {
  AttemptTimeoutError,
  BulkheadRejectedError,
  CircuitOpenError,
  DeadlineExceededError,
  GiveUpError,
  HttpStatusError,
  KindlyError,
} from '../../src/errors/errors.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const withCode = (code: string) => Object.assign(new Error(code), { code });

describe('classifyError: kindly errors', () => {
  it('AttemptTimeoutError ⇒ unknown, retryable, timeout', () => {
    expect(classifyError(new AttemptTimeoutError(1000), NOW)).toEqual({
      outcome: 'unknown',
      retryable: true,
      timeout: true,
      code: 'ERR_KINDLY_ATTEMPT_TIMEOUT',
    });
  });

  it('CircuitOpenError / BulkheadRejectedError ⇒ failed, retryable, hint from retryAfterMs', () => {
    expect(classifyError(new CircuitOpenError({ retryAfterMs: 2_500.5 }), NOW)).toEqual({
      outcome: 'failed',
      retryable: true,
      hintMs: 2_501,
      hintSource: 'circuit-breaker',
      code: 'ERR_KINDLY_CIRCUIT_OPEN',
    });
    expect(classifyError(new BulkheadRejectedError('queue-full'), NOW)).toEqual({
      outcome: 'failed',
      retryable: true,
      code: 'ERR_KINDLY_BULKHEAD_FULL',
    });
    expect(classifyError(new BulkheadRejectedError('queue-timeout', { retryAfterMs: 10 }), NOW)).toMatchObject({
      hintMs: 10,
      hintSource: 'bulkhead',
    });
    expect(classifyError(new CircuitOpenError({ retryAfterMs: Number.NaN }), NOW).hintMs).toBeUndefined();
  });

  it('HttpStatusError ⇒ its status, with hints from a fetch Response', () => {
    const response = new Response(null, { status: 503, headers: { 'Retry-After': '7', 'x-retry-exhausted': '1' } });
    expect(classifyError(new HttpStatusError(503, { outcome: 'failed', response }), NOW)).toEqual({
      outcome: 'failed',
      retryable: true,
      status: 503,
      throttled: true,
      hintMs: 7_000,
      hintSource: 'retry-after',
      dontRetry: true,
    });
  });

  it('HttpStatusError with a { headers } response and no response at all', () => {
    const error = new HttpStatusError(429, { outcome: 'failed', response: { headers: { 'x-ratelimit-reset': '30' } } });
    expect(classifyError(error, NOW)).toMatchObject({ status: 429, hintMs: 30_000, hintSource: 'x-ratelimit-reset' });
    expect(classifyError(new HttpStatusError(404, { outcome: 'failed' }), NOW)).toEqual({
      outcome: 'failed',
      retryable: false,
      status: 404,
    });
  });

  it('DeadlineExceededError ⇒ its outcome, not retryable, timeout', () => {
    expect(classifyError(new DeadlineExceededError({ outcome: 'unknown' }), NOW)).toEqual({
      outcome: 'unknown',
      retryable: false,
      timeout: true,
      code: 'ERR_KINDLY_DEADLINE',
    });
  });

  it('GiveUpError from a nested kindly call ⇒ not retryable, dontRetry', () => {
    const error = new GiveUpError('max-attempts', { outcome: 'failed', attempts: 3, retryAfterMs: 400 });
    expect(classifyError(error, NOW)).toEqual({
      outcome: 'failed',
      retryable: false,
      dontRetry: true,
      hintMs: 400,
      hintSource: 'give-up',
      code: 'ERR_KINDLY_GIVE_UP',
    });
  });

  it('any other kindly error ⇒ its outcome, not retryable', () => {
    expect(classifyError(new KindlyError('local', { outcome: 'failed' }), NOW)).toEqual({
      outcome: 'failed',
      retryable: false,
      code: 'ERR_KINDLY',
    });
  });
});

describe('classifyError: HTTP-shaped errors of other clients', () => {
  it('axios: response.status, response.headers (AxiosHeaders-like get), response.data', () => {
    const headers = { get: (name: string) => ({ 'retry-after': '3' })[name] };
    const error = Object.assign(new Error('Request failed with status code 429'), {
      name: 'AxiosError',
      code: 'ERR_BAD_REQUEST',
      response: { status: 429, headers, data: {} },
    });
    expect(classifyError(error, NOW)).toEqual({
      outcome: 'failed',
      retryable: true,
      status: 429,
      throttled: true,
      hintMs: 3_000,
      hintSource: 'retry-after',
    });
  });

  it('got: response.statusCode and a body hint when headers have none', () => {
    const error = Object.assign(new Error('Response code 429'), {
      name: 'HTTPError',
      response: { statusCode: 429, headers: {}, body: '{"error":{"retry_after":12}}' },
    });
    expect(classifyError(error, NOW)).toMatchObject({ status: 429, hintMs: 12_000, hintSource: 'body' });
    expect(classifyError(error, NOW, { bodyHintExtractors: [] }).hintMs).toBeUndefined();
  });

  it('a thrown fetch Response and plain { status } / { statusCode } objects', () => {
    expect(classifyError(new Response(null, { status: 502 }), NOW)).toEqual({ outcome: 'unknown', retryable: true, status: 502 });
    expect(classifyError({ status: 400 }, NOW)).toEqual({ outcome: 'failed', retryable: false, status: 400 });
    expect(classifyError({ statusCode: 504, headers: { 'retry-after': '1' } }, NOW)).toMatchObject({
      status: 504,
      hintMs: 1_000,
    });
  });

  it('header signals: dontRetry, throttle on a 403 with remaining 0, hint gated by throttled', () => {
    expect(classifyError({ status: 500, headers: { 'x-envoy-overloaded': '' } }, NOW).dontRetry).toBe(true);
    const github = { status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(NOW / 1000 + 60) } };
    expect(classifyError(github, NOW)).toEqual({
      outcome: 'failed',
      retryable: false,
      status: 403,
      throttled: true,
      hintMs: 60_000,
      hintSource: 'x-ratelimit-reset',
    });
    // Without a remaining count, a reset counts only on 429/503.
    expect(classifyError({ status: 500, headers: { 'x-ratelimit-reset': '9' } }, NOW).hintMs).toBeUndefined();
    expect(classifyError({ status: 503, headers: { 'x-ratelimit-reset': '9' } }, NOW).hintMs).toBe(9_000);
  });

  it('the retryable set is configurable', () => {
    expect(classifyError({ status: 409 }, NOW, { retryableStatuses: [409] }).retryable).toBe(true);
  });

  it('a status below 400 falls through to the other rules', () => {
    expect(classifyError(Object.assign(new Error('x'), { status: 200, code: 'ECONNRESET' }), NOW)).toMatchObject({
      outcome: 'unknown',
      code: 'ECONNRESET',
    });
  });

  it('a stream body is never read', () => {
    const body = new ReadableStream();
    const response = { status: 429, headers: {}, body };
    expect(classifyError({ response }, NOW).hintMs).toBeUndefined();
    expect(body.locked).toBe(false);
  });
});

describe('classifyError: aborts, network, timeouts, programming errors, the rest', () => {
  it.each([
    ['DOMException AbortError', new DOMException('aborted', 'AbortError'), { outcome: 'unknown', retryable: false }],
    [
      'Node ABORT_ERR',
      Object.assign(new Error('aborted'), { name: 'AbortError', code: 'ABORT_ERR' }),
      { outcome: 'unknown', retryable: false, code: 'ABORT_ERR' },
    ],
    [
      'axios cancel',
      Object.assign(new Error('canceled'), { name: 'CanceledError', code: 'ERR_CANCELED' }),
      { outcome: 'unknown', retryable: false, code: 'ERR_CANCELED' },
    ],
    [
      'abort wrapping a reset',
      Object.assign(new DOMException('aborted', 'AbortError'), { cause: withCode('ECONNRESET') }),
      { outcome: 'unknown', retryable: false },
    ],
    ['refused', withCode('ECONNREFUSED'), { outcome: 'failed', retryable: true, code: 'ECONNREFUSED' }],
    [
      'undici fetch failed',
      new TypeError('fetch failed', { cause: withCode('ECONNRESET') }),
      { outcome: 'unknown', retryable: true, code: 'ECONNRESET' },
    ],
    ['browser', new TypeError('Failed to fetch'), { outcome: 'unknown', retryable: true }],
    [
      'TLS',
      withCode('ERR_TLS_CERT_ALTNAME_INVALID'),
      { outcome: 'failed', retryable: false, code: 'ERR_TLS_CERT_ALTNAME_INVALID' },
    ],
    [
      'AbortSignal.timeout',
      new DOMException('timed out', 'TimeoutError'),
      { outcome: 'unknown', retryable: true, timeout: true },
    ],
    ['TypeError', new TypeError('x is not a function'), { outcome: 'failed', retryable: false }],
    ['ReferenceError', new ReferenceError('x is not defined'), { outcome: 'failed', retryable: false }],
    ['SyntaxError', new SyntaxError('Unexpected token'), { outcome: 'failed', retryable: false }],
    ['RangeError', new RangeError('Invalid array length'), { outcome: 'failed', retryable: false }],
    ['plain Error', new Error('something'), { outcome: 'unknown', retryable: true }],
    ['string', 'oops', { outcome: 'unknown', retryable: true }],
    ['undefined', undefined, { outcome: 'unknown', retryable: true }],
    ['null', null, { outcome: 'unknown', retryable: true }],
    ['number', 42, { outcome: 'unknown', retryable: true }],
    ['null prototype', Object.create(null), { outcome: 'unknown', retryable: true }],
  ] as const)('%s', (_, error, expected) => {
    expect(classifyError(error, NOW)).toEqual(expected);
  });
});

describe('classifyError never throws', () => {
  const hostiles = (): Array<[string, unknown]> => {
    const throwingProxy = new Proxy(
      {},
      {
        get() {
          throw new Error('get');
        },
        has() {
          throw new Error('has');
        },
        getPrototypeOf() {
          throw new Error('proto');
        },
        ownKeys() {
          throw new Error('keys');
        },
        getOwnPropertyDescriptor() {
          throw new Error('descriptor');
        },
      },
    );
    const { proxy: revoked, revoke } = Proxy.revocable({}, {});
    revoke();
    const getters = Object.defineProperties(
      {},
      Object.fromEntries(
        ['name', 'code', 'status', 'statusCode', 'response', 'cause', 'message', 'errors', 'headers'].map((key) => [
          key,
          {
            get() {
              throw new Error(key);
            },
          },
        ]),
      ),
    );
    const hostileResponse = { status: 429, response: throwingProxy, headers: throwingProxy };
    const hostileHeaders = {
      status: 503,
      headers: {
        get() {
          throw new Error('get');
        },
      },
    };
    return [
      ['throwing proxy', throwingProxy],
      ['revoked proxy', revoked],
      ['throwing getters', getters],
      ['hostile response', hostileResponse],
      ['hostile headers', hostileHeaders],
      ['symbol', Symbol('s')],
      ['function', () => {}],
    ];
  };

  it.each(hostiles())('%s', (_, error) => {
    const classification = classifyError(error, NOW);
    expect(['failed', 'unknown']).toContain(classification.outcome);
    expect(typeof classification.retryable).toBe('boolean');
  });

  it('keeps the status classification when only the headers are hostile', () => {
    const [, , , , [, hostileHeaders]] = hostiles() as [unknown, unknown, unknown, unknown, [string, unknown]];
    expect(classifyError(hostileHeaders, NOW)).toEqual({ outcome: 'failed', retryable: true, status: 503, throttled: true });
  });

  it('on anything fast-check can build', () => {
    fc.assert(
      fc.property(
        fc.anything({ withNullPrototype: true, withBoxedValues: true, withMap: true, withSet: true }),
        fc.integer(),
        (value, now) => {
          const classification = classifyError(value, now);
          expect(['failed', 'unknown']).toContain(classification.outcome);
          if (classification.hintMs !== undefined) {
            expect(Number.isFinite(classification.hintMs) && classification.hintMs >= 0).toBe(true);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('on objects shaped like HTTP errors with random headers and bodies', () => {
    const headerValue = fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 3 }), fc.integer(), fc.constant(undefined));
    const names = fc.constantFrom(
      'retry-after',
      'ratelimit',
      'x-ratelimit-reset',
      'x-ratelimit-remaining',
      'grpc-retry-pushback-ms',
      'x-retry-exhausted',
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 700 }),
        fc.dictionary(names, headerValue),
        fc.oneof(fc.string(), fc.json(), fc.jsonValue()),
        (status, headers, data) => {
          const classification = classifyError({ response: { status, headers, data } }, NOW);
          if (classification.hintMs !== undefined) {
            expect(Number.isFinite(classification.hintMs) && classification.hintMs >= 0).toBe(true);
          }
          if (status >= 400) expect(classification.status).toBe(status);
        },
      ),
      { numRuns: 5_000 },
    );
  });
});
