import { describe, expect, it } from 'vitest';
import { readThrottleSignal, readWaitHint } from '../../src/hints/wait-hint.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW_S = NOW / 1000;

/** Every field set, each with a distinct wait, so the winner is visible in `ms`. */
const ALL = {
  'retry-after': '1',
  ratelimit: '"d";r=0;t=2',
  'ratelimit-reset': '3',
  'ratelimit-remaining': '0',
  'x-ratelimit-reset': '4',
  'x-ratelimit-remaining': '0',
  'grpc-retry-pushback-ms': '5000',
};

describe('readWaitHint precedence', () => {
  it('takes the first field that yields a wait, in the documented order', () => {
    const order = [
      ['retry-after', 1_000],
      ['ratelimit', 2_000],
      ['ratelimit-reset', 3_000],
      ['x-ratelimit-reset', 4_000],
      ['grpc-retry-pushback-ms', 5_000],
    ] as const;
    const headers: Record<string, string> = { ...ALL };
    for (const [source, ms] of order) {
      expect(readWaitHint(headers, NOW)).toEqual({ ms, source });
      delete headers[source];
    }
    expect(readWaitHint(headers, NOW)).toBeUndefined();
  });

  it('skips a malformed field and tries the next one', () => {
    const malformed = {
      'retry-after': '1.5',
      ratelimit: '"d";r=0;t=',
      'ratelimit-reset': 'soon',
      'ratelimit-remaining': '0',
      'x-ratelimit-reset': '-4',
      'x-ratelimit-remaining': '0',
      'grpc-retry-pushback-ms': '250',
    };
    expect(readWaitHint(malformed, NOW)).toEqual({ ms: 250, source: 'grpc-retry-pushback-ms' });
    expect(readWaitHint({ ...malformed, 'grpc-retry-pushback-ms': '-1' }, NOW)).toBeUndefined();
  });

  it('reads a Retry-After date against now, and from a WHATWG Headers', () => {
    const headers = new Headers({ 'Retry-After': 'Thu, 15 Jan 2026 12:00:09 GMT' });
    expect(readWaitHint(headers, NOW)).toEqual({ ms: 9_000, source: 'retry-after' });
  });

  it('a RateLimit quota with units left is not a wait: the next field decides', () => {
    expect(readWaitHint({ ratelimit: '"d";r=5;t=2', 'grpc-retry-pushback-ms': '7' }, NOW)).toEqual({
      ms: 7,
      source: 'grpc-retry-pushback-ms',
    });
  });

  it("uses RateLimit-Policy's window for an exhausted item without t, labelled as such", () => {
    const headers = { RateLimit: '"day";r=0', 'RateLimit-Policy': '"day";q=1000;w=86400' };
    expect(readWaitHint(headers, NOW)).toEqual({ ms: 86_400_000, source: 'ratelimit-policy' });
  });

  it('reads the older Dictionary shape of RateLimit', () => {
    expect(readWaitHint({ ratelimit: 'limit=100, remaining=0, reset=10' }, NOW)).toEqual({ ms: 10_000, source: 'ratelimit' });
  });
});

describe('readWaitHint: a reset field is a wait only when the quota is what stopped us', () => {
  it('remaining 0 in the same family makes it a wait', () => {
    expect(readWaitHint({ 'X-RateLimit-Reset': String(NOW_S + 30), 'X-RateLimit-Remaining': '0' }, NOW)).toEqual({
      ms: 30_000,
      source: 'x-ratelimit-reset',
    });
    expect(readWaitHint({ 'RateLimit-Reset': '12', 'RateLimit-Remaining': '0' }, NOW)).toEqual({
      ms: 12_000,
      source: 'ratelimit-reset',
    });
  });

  it('remaining above 0 means it is not, even when throttled', () => {
    const headers = { 'x-ratelimit-reset': '30', 'x-ratelimit-remaining': '4' };
    expect(readWaitHint(headers, NOW)).toBeUndefined();
    expect(readWaitHint(headers, NOW, { throttled: true })).toBeUndefined();
  });

  it('with no remaining count (or a malformed one) it is a wait only when throttled (429/503)', () => {
    expect(readWaitHint({ 'x-ratelimit-reset': '30' }, NOW)).toBeUndefined();
    expect(readWaitHint({ 'x-ratelimit-reset': '30' }, NOW, { throttled: true })).toEqual({
      ms: 30_000,
      source: 'x-ratelimit-reset',
    });
    expect(readWaitHint({ 'ratelimit-reset': '30', 'ratelimit-remaining': 'lots' }, NOW, { throttled: true })).toEqual({
      ms: 30_000,
      source: 'ratelimit-reset',
    });
  });

  it('families do not gate each other', () => {
    expect(readWaitHint({ 'ratelimit-reset': '30', 'x-ratelimit-remaining': '0' }, NOW)).toBeUndefined();
  });

  it('X-RateLimit-Remaining: 0 alone gives no duration', () => {
    expect(readWaitHint({ 'x-ratelimit-remaining': '0' }, NOW)).toBeUndefined();
  });
});

describe('readThrottleSignal', () => {
  it('is true when any quota field says 0 remain', () => {
    expect(readThrottleSignal({ 'x-ratelimit-remaining': '0' })).toBe(true);
    expect(readThrottleSignal({ 'RateLimit-Remaining': '0' })).toBe(true);
    expect(readThrottleSignal({ ratelimit: '"d";r=0' })).toBe(true);
    expect(readThrottleSignal({ ratelimit: 'limit=5, remaining=0' })).toBe(true);
  });

  it('is false otherwise', () => {
    expect(readThrottleSignal({ 'x-ratelimit-remaining': '3' })).toBe(false);
    expect(readThrottleSignal({ ratelimit: '"d";r=2;t=1' })).toBe(false);
    expect(readThrottleSignal({ 'retry-after': '5' })).toBe(false);
    expect(readThrottleSignal(undefined)).toBe(false);
  });
});
