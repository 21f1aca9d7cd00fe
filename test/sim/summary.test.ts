import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spread } from '../../src/sim/summary.js';

describe('spread', () => {
  it('gives min, median, max and mean; the median of an even count is the mean of the middle two', () => {
    expect(spread([3, 1, 2])).toEqual({ min: 1, median: 2, max: 3, mean: 2 });
    expect(spread([4, 1, 2, 3])).toEqual({ min: 1, median: 2.5, max: 4, mean: 2.5 });
    expect(spread([7])).toEqual({ min: 7, median: 7, max: 7, mean: 7 });
    expect(spread([1, 1, 10]).mean).toBe(4);
  });

  it('refuses no values', () => {
    expect(() => spread([])).toThrow(RangeError);
  });

  it('min ≤ median ≤ max, min ≤ mean ≤ max, and does not reorder its input', () => {
    fc.assert(
      fc.property(fc.array(fc.integer(), { minLength: 1 }), (values) => {
        const copy = [...values];
        const s = spread(values);
        expect(s.min).toBeLessThanOrEqual(s.median);
        expect(s.median).toBeLessThanOrEqual(s.max);
        expect(s.mean).toBeGreaterThanOrEqual(s.min);
        expect(s.mean).toBeLessThanOrEqual(s.max);
        expect(values).toEqual(copy);
      }),
    );
  });
});
