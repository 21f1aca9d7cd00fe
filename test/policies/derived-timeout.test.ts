import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { DERIVED_TIMEOUT_DEFAULTS, DerivedTimeout, TIMED_OUT_SAMPLE_FACTOR } from '../../src/policies/derived-timeout.js';

describe('DerivedTimeout', () => {
  it('defaults are pinned', () => {
    expect(DERIVED_TIMEOUT_DEFAULTS).toEqual({
      percentile: 0.99,
      factor: 1.5,
      floorMs: 10,
      ceilingMs: 10_000,
      minSamples: 20,
      halfLifeMs: 10_000,
    });
    expect(TIMED_OUT_SAMPLE_FACTOR).toBe(2);
  });

  it('rejects bad options, every problem at once', () => {
    try {
      new DerivedTimeout({ percentile: 1, factor: 0.5, floorMs: 500, ceilingMs: 100, minSamples: 0 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const text = (error as InvalidOptionsError).problems.join('\n');
      for (const f of ['`percentile`', '`factor`', '`minSamples`', '500 > 100']) expect(text).toContain(f);
    }
  });

  it('uses the ceiling until minSamples latencies are known', () => {
    const t = new DerivedTimeout({ minSamples: 5, ceilingMs: 2_000 });
    for (let i = 0; i < 4; i++) t.recordSuccess(10, 0);
    expect(t.timeoutMs(0)).toBe(2_000);
    t.recordSuccess(10, 0);
    expect(t.timeoutMs(0)).toBeCloseTo(15, 0);
  });

  it('is percentile × factor, clamped to [floor, ceiling]', () => {
    const t = new DerivedTimeout({ percentile: 0.9, factor: 2, floorMs: 50, ceilingMs: 1_000, minSamples: 1 });
    for (let i = 1; i <= 100; i++) t.recordSuccess(i * 3, 0);
    // p90 of 3..300 is 270 → 540.
    expect(Math.abs(t.timeoutMs(0) / 540 - 1)).toBeLessThan(0.05);
    const low = new DerivedTimeout({ floorMs: 50, minSamples: 1 });
    low.recordSuccess(1, 0);
    expect(low.timeoutMs(0)).toBe(50);
    const high = new DerivedTimeout({ ceilingMs: 100, minSamples: 1 });
    high.recordSuccess(1_000, 0);
    expect(high.timeoutMs(0)).toBe(100);
  });

  it('a timed-out attempt pushes the timeout up (a censored sample never pins it)', () => {
    const t = new DerivedTimeout({ percentile: 0.99, factor: 1, minSamples: 1, floorMs: 1 });
    for (let i = 0; i < 200; i++) t.recordSuccess(10, 0);
    const before = t.timeoutMs(0);
    // The callee slowed down: every attempt now hits the timeout.
    let timeout = before;
    for (let i = 0; i < 50; i++) {
      t.recordTimeout(timeout, 0);
      timeout = t.timeoutMs(0);
    }
    expect(timeout).toBeGreaterThan(before * 1.5);
  });

  it('property: always within [floor, ceiling]', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ ms: fc.double({ min: 0, max: 1e5, noNaN: true }), timedOut: fc.boolean() }), { maxLength: 100 }),
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 100, max: 10_000 }),
        (samples, floorMs, ceilingMs) => {
          const t = new DerivedTimeout({ floorMs, ceilingMs, minSamples: 1 });
          for (const s of samples) {
            if (s.timedOut) t.recordTimeout(t.timeoutMs(0), 0);
            else t.recordSuccess(s.ms, 0);
            const got = t.timeoutMs(0);
            expect(got).toBeGreaterThanOrEqual(floorMs);
            expect(got).toBeLessThanOrEqual(ceilingMs);
          }
        },
      ),
      { seed: 14_003 },
    );
  });
});
