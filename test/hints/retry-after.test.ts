import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_HINT_MS } from '../../src/hints/hint-ms.js';
import { parseRetryAfter } from '../../src/hints/retry-after.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);

describe('parseRetryAfter', () => {
  it('reads delay-seconds as ms, leading zeros included; 0 means now', () => {
    expect(parseRetryAfter('120', NOW)).toBe(120_000);
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('007', NOW)).toBe(7_000);
  });

  it('is seconds × 1000 for every non-negative integer', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Math.floor(MAX_HINT_MS / 1000) }), (seconds) => {
        expect(parseRetryAfter(String(seconds), NOW)).toBe(seconds * 1000);
      }),
    );
  });

  it('ignores OWS (spaces and tabs) but no other whitespace', () => {
    expect(parseRetryAfter('  5\t', NOW)).toBe(5_000);
    expect(parseRetryAfter('\t\t5', NOW)).toBe(5_000);
    expect(parseRetryAfter('5\n', NOW)).toBeUndefined();
    expect(parseRetryAfter('\u00a05', NOW)).toBeUndefined();
    expect(parseRetryAfter('5 5', NOW)).toBeUndefined();
  });

  it('caps enormous values at MAX_HINT_MS instead of overflowing to Infinity', () => {
    expect(parseRetryAfter('9007199254740', NOW)).toBe(9_007_199_254_740_000);
    expect(parseRetryAfter('9007199254741', NOW)).toBe(MAX_HINT_MS);
    expect(parseRetryAfter('9'.repeat(400), NOW)).toBe(MAX_HINT_MS);
    expect(parseRetryAfter(`${'0'.repeat(400)}3`, NOW)).toBe(3_000);
  });

  it('reads the three HTTP-date formats relative to now', () => {
    expect(parseRetryAfter('Thu, 15 Jan 2026 12:00:30 GMT', NOW)).toBe(30_000);
    expect(parseRetryAfter('Thursday, 15-Jan-26 12:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfter('Thu Jan 15 12:00:01 2026', NOW)).toBe(1_000);
    expect(parseRetryAfter(' Thu, 15 Jan 2026 12:00:30 GMT ', NOW)).toBe(30_000);
  });

  it('treats a date in the past (or now) as "now": 0', () => {
    expect(parseRetryAfter('Thu, 15 Jan 2026 11:59:59 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Thu, 15 Jan 2026 12:00:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(0);
  });

  it('never turns garbage, negatives, fractions or signs into a wait (and never into 0)', () => {
    const bad = ['', ' ', '-1', '-0', '1.5', '0.0', '+5', '5s', '1e3', '0x10', '5, 5', 'soon', 'Infinity', 'NaN', '٣', '５'];
    for (const value of bad) expect(parseRetryAfter(value, NOW), JSON.stringify(value)).toBeUndefined();
  });

  it('rejects a date when now is not a finite number, but still reads seconds', () => {
    expect(parseRetryAfter('Thu, 15 Jan 2026 12:00:30 GMT', Number.NaN)).toBeUndefined();
    expect(parseRetryAfter('30', Number.NaN)).toBe(30_000);
  });

  it('returns undefined for non-string input instead of throwing', () => {
    expect(parseRetryAfter(undefined as unknown as string, NOW)).toBeUndefined();
    expect(parseRetryAfter(5 as unknown as string, NOW)).toBeUndefined();
  });
});
