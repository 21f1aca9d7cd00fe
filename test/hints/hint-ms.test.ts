import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_HINT_MS, parseDecimal, parseDigits, sanitizeHintMs, trimOws } from '../../src/hints/hint-ms.js';

describe('hint ms helpers', () => {
  it('MAX_HINT_MS is Number.MAX_SAFE_INTEGER', () => {
    expect(MAX_HINT_MS).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('sanitizeHintMs keeps finite non-negative numbers, rounded up and capped', () => {
    expect(sanitizeHintMs(0)).toBe(0);
    expect(sanitizeHintMs(0.2)).toBe(1);
    expect(sanitizeHintMs(1500)).toBe(1500);
    expect(sanitizeHintMs(1e300)).toBe(MAX_HINT_MS);
    // Regression: a value that overflowed (a body's 1e308 s) is "very long", as in a header.
    expect(sanitizeHintMs(Number.POSITIVE_INFINITY)).toBe(MAX_HINT_MS);
    for (const bad of [-1, -0.1, Number.NaN, Number.NEGATIVE_INFINITY, '5', null, undefined, {}]) {
      expect(sanitizeHintMs(bad)).toBeUndefined();
    }
  });

  it('sanitizeHintMs output is always undefined or a whole number in [0, MAX_HINT_MS]', () => {
    fc.assert(
      fc.property(fc.oneof(fc.double(), fc.integer(), fc.anything()), (value) => {
        const ms = sanitizeHintMs(value);
        if (ms !== undefined) {
          expect(Number.isInteger(ms)).toBe(true);
          expect(ms).toBeGreaterThanOrEqual(0);
          expect(ms).toBeLessThanOrEqual(MAX_HINT_MS);
        }
      }),
    );
  });

  it('parseDigits accepts 1*DIGIT only and saturates long runs', () => {
    expect(parseDigits('0')).toBe(0);
    expect(parseDigits('0042')).toBe(42);
    expect(parseDigits('1'.repeat(17))).toBe(MAX_HINT_MS + 1);
    for (const bad of ['', '-1', '1.0', ' 1', '1 ', '+1', 'a']) expect(parseDigits(bad)).toBeUndefined();
  });

  it('parseDecimal accepts an optional fraction but nothing else', () => {
    expect(parseDecimal('1.5')).toBe(1.5);
    expect(parseDecimal('1470173023.123')).toBeCloseTo(1470173023.123, 3);
    for (const bad of ['', '.5', '5.', '1.2.3', '-1.5', '1e3']) expect(parseDecimal(bad)).toBeUndefined();
  });

  it('trimOws strips spaces and tabs only', () => {
    expect(trimOws(' \t a b \t ')).toBe('a b');
    expect(trimOws('\na\n')).toBe('\na\n');
  });
});
