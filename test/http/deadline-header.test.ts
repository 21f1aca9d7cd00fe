import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MAX_TIMEOUT_MS,
  formatRequestTimeout,
  parseGrpcTimeout,
  parseRequestTimeoutMs,
  readInboundBudget,
} from '../../src/http/index.js';

describe('deadline headers (untrusted input)', () => {
  it('pins the server maximum default: 30 s', () => {
    expect(DEFAULT_MAX_TIMEOUT_MS).toBe(30_000);
  });

  it('x-request-timeout-ms: non-negative decimal ms, rounded down; anything else is garbage', () => {
    expect(parseRequestTimeoutMs('250')).toBe(250);
    expect(parseRequestTimeoutMs(' 99.9 ')).toBe(99);
    expect(parseRequestTimeoutMs('0')).toBe(0);
    for (const bad of ['', ' ', '-1', '+5', '1e3', '0x10', 'Infinity', 'NaN', '12ms', '1,000', '1 000', '9'.repeat(16), '.5']) {
      expect(parseRequestTimeoutMs(bad)).toBeUndefined();
    }
  });

  it('grpc-timeout: 1–8 digits and a unit H M S m u n', () => {
    expect(parseGrpcTimeout('100m')).toBe(100);
    expect(parseGrpcTimeout('2S')).toBe(2_000);
    expect(parseGrpcTimeout('3M')).toBe(180_000);
    expect(parseGrpcTimeout('1H')).toBe(3_600_000);
    expect(parseGrpcTimeout('1500u')).toBe(1);
    expect(parseGrpcTimeout('999999n')).toBe(0);
    expect(parseGrpcTimeout('99999999H')).toBe(99_999_999 * 3_600_000);
    for (const bad of ['', '100', 'm', '123456789S', '-1S', '1.5S', '1s', '1 S', '1SS', '1D']) {
      expect(parseGrpcTimeout(bad)).toBeUndefined();
    }
  });

  it('the tighter of the two headers wins; garbage is ignored; the server maximum caps everything', () => {
    expect(readInboundBudget({ 'x-request-timeout-ms': '500', 'grpc-timeout': '200m' }, 1_000)).toEqual({
      timeoutMs: 200,
      requestedMs: 200,
      source: 'grpc-timeout',
    });
    expect(readInboundBudget({ 'x-request-timeout-ms': 'junk', 'grpc-timeout': '2S' }, 1_000)).toEqual({
      timeoutMs: 1_000,
      requestedMs: 2_000,
      source: 'grpc-timeout',
    });
    expect(readInboundBudget({}, 1_000)).toEqual({ timeoutMs: 1_000, requestedMs: undefined, source: undefined });
    expect(readInboundBudget(new Headers({ 'X-Request-Timeout-Ms': '40' }))).toMatchObject({ timeoutMs: 40 });
  });

  it('property: any header values give a finite whole budget in [0, max], never throwing', () => {
    const junk = fc.oneof(
      fc.string(),
      fc.stringMatching(/^-?\d{0,20}(\.\d{0,5})?[HMSmun]?$/),
      fc.double().map(String),
      fc.constant(undefined),
      fc.array(fc.string(), { maxLength: 3 }),
    );
    fc.assert(
      fc.property(junk, junk, fc.integer({ min: 0, max: 10_000_000 }), (a, b, max) => {
        const headers: Record<string, string | string[]> = {};
        if (a !== undefined) headers['x-request-timeout-ms'] = a;
        if (b !== undefined) headers['grpc-timeout'] = b;
        const { timeoutMs } = readInboundBudget(headers, max);
        expect(Number.isInteger(timeoutMs)).toBe(true);
        expect(timeoutMs).toBeGreaterThanOrEqual(0);
        expect(timeoutMs).toBeLessThanOrEqual(max);
      }),
    );
  });

  it('property: what a client sends, a server reads back (never more than the time left)', () => {
    fc.assert(
      fc.property(fc.double({ min: -1e6, max: 1e12, noNaN: true }), (remaining) => {
        const sent = formatRequestTimeout(remaining);
        const read = parseRequestTimeoutMs(sent);
        expect(read).toBe(remaining > 0 ? Math.floor(remaining) : 0);
      }),
    );
  });
});
