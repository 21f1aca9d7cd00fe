import { describe, expect, it } from 'vitest';
import { headerValue } from '../../src/hints/headers.js';

describe('headerValue', () => {
  it('reads a WHATWG Headers case-insensitively', () => {
    const headers = new Headers({ 'Retry-After': '5' });
    expect(headerValue(headers, 'retry-after')).toBe('5');
    expect(headerValue(headers, 'RETRY-AFTER')).toBe('5');
    expect(headerValue(headers, 'x-missing')).toBeUndefined();
  });

  it('reads node:http style records: lower-case keys, arrays, numbers', () => {
    const headers = { 'retry-after': '5', 'set-cookie': ['a=1', 'b=2'], 'content-length': 12, absent: undefined };
    expect(headerValue(headers, 'Retry-After')).toBe('5');
    expect(headerValue(headers, 'set-cookie')).toBe('a=1, b=2');
    expect(headerValue(headers, 'content-length')).toBe('12');
    expect(headerValue(headers, 'absent')).toBeUndefined();
  });

  it('reads records with any key casing, joining keys that differ only in case', () => {
    expect(headerValue({ 'X-RateLimit-Reset': '10' }, 'x-ratelimit-reset')).toBe('10');
    expect(headerValue({ 'X-A': '1', 'x-A': '2' }, 'x-a')).toBe('1, 2');
  });

  it('reads any object with a get() (axios AxiosHeaders, Map stand-ins)', () => {
    expect(headerValue(new Map([['retry-after', '7']]), 'Retry-After')).toBe('7');
    expect(headerValue({ get: (name: string) => (name === 'x-n' ? 3 : null) }, 'X-N')).toBe('3');
    expect(headerValue({ get: () => ['a', 1, ['nested'], {}] }, 'x')).toBe('a, 1');
  });

  it('treats empty values as present and non-text values as absent', () => {
    expect(headerValue({ 'x-envoy-overloaded': '' }, 'x-envoy-overloaded')).toBe('');
    expect(headerValue({ a: Number.NaN, b: {} as unknown as string, c: [] }, 'a')).toBeUndefined();
    expect(headerValue({ b: {} as unknown as string }, 'b')).toBeUndefined();
    expect(headerValue({ c: [] }, 'c')).toBeUndefined();
    expect(headerValue({ d: true }, 'd')).toBe('true');
  });

  it('never throws on hostile or missing sources', () => {
    const throwing = new Proxy(
      {},
      {
        get() {
          throw new Error('get');
        },
        ownKeys() {
          throw new Error('keys');
        },
        getOwnPropertyDescriptor() {
          throw new Error('descriptor');
        },
      },
    );
    const throwingGet = {
      get() {
        throw new Error('boom');
      },
    };
    expect(headerValue(throwing, 'retry-after')).toBeUndefined();
    expect(headerValue(throwingGet, 'retry-after')).toBeUndefined();
    expect(headerValue(null, 'retry-after')).toBeUndefined();
    expect(headerValue(undefined, 'retry-after')).toBeUndefined();
    expect(headerValue('retry-after: 5' as never, 'retry-after')).toBeUndefined();
    expect(headerValue(Object.create(null) as Record<string, string>, 'retry-after')).toBeUndefined();
    const nullProto = Object.assign(Object.create(null) as Record<string, string>, { 'Retry-After': '9' });
    expect(headerValue(nullProto, 'retry-after')).toBe('9');
  });
});
