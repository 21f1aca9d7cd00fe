import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { LATENCY_QUANTILES_DEFAULTS, LatencyQuantiles } from '../../src/policies/latency-quantiles.js';
import { SeededRandom } from '../../src/random/random.js';

/** The exact nearest-rank quantile of a list. */
function exact(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

describe('LatencyQuantiles', () => {
  it('defaults are pinned', () => {
    expect(LATENCY_QUANTILES_DEFAULTS).toEqual({ halfLifeMs: 10_000 });
    expect(new LatencyQuantiles().halfLifeMs).toBe(10_000);
  });

  it('rejects bad options with the value', () => {
    expect(() => new LatencyQuantiles({ halfLifeMs: 0 })).toThrow(InvalidOptionsError);
    expect(() => new LatencyQuantiles({ halfLife: 3 } as never)).toThrow(/`halfLife`/);
  });

  it('knows nothing before the first sample', () => {
    const q = new LatencyQuantiles();
    expect(q.quantile(0.5)).toBeUndefined();
    expect(q.weight(0)).toBe(0);
  });

  it('is within one bucket (±5 %) of the exact quantile of any sample set (no decay)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0.02, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 300 }),
        fc.constantFrom(0.01, 0.25, 0.5, 0.9, 0.99, 1),
        (values, q) => {
          const est = new LatencyQuantiles({ halfLifeMs: Number.POSITIVE_INFINITY });
          for (const v of values) est.record(v, 0);
          const got = est.quantile(q) as number;
          const want = exact(values, q);
          // Interpolation inside a bucket may land anywhere in it: one bucket either side.
          expect(got).toBeGreaterThanOrEqual(want / 1.05 ** 2);
          expect(got).toBeLessThanOrEqual(want * 1.05 ** 2);
        },
      ),
      { seed: 14_001 },
    );
  });

  it('tracks the median of a lognormal stream to within 5 %', () => {
    const random = new SeededRandom(1401);
    const est = new LatencyQuantiles();
    const values: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const z = Math.sqrt(-2 * Math.log(1 - random.next())) * Math.cos(2 * Math.PI * random.next());
      const v = 20 * Math.exp(0.5 * z);
      values.push(v);
      est.record(v, i * 0.1);
    }
    // Over 2 s the decay (half-life 10 s) barely reweights: compare with the exact values.
    for (const q of [0.5, 0.9, 0.99]) {
      const got = est.quantile(q) as number;
      expect(Math.abs(got / exact(values, q) - 1)).toBeLessThan(0.05);
    }
  });

  it('forgets: after a level shift, the estimate follows within a few half-lives', () => {
    const est = new LatencyQuantiles({ halfLifeMs: 1_000 });
    for (let t = 0; t < 10_000; t += 10) est.record(10, t);
    expect(est.quantile(0.5)).toBeCloseTo(10, 0);
    for (let t = 10_000; t < 13_000; t += 10) est.record(40, t);
    // Three half-lives: the old level weighs 1/8 of what it did, so it holds 12.5 % of the weight.
    expect(est.quantile(0.5) as number).toBeGreaterThan(38);
    expect(est.quantile(0.2) as number).toBeGreaterThan(38);
    expect(est.quantile(0.05) as number).toBeLessThan(11);
  });

  it('weight decays by half per half-life and survives rescaling over a long run', () => {
    const est = new LatencyQuantiles({ halfLifeMs: 100 });
    est.record(5, 0);
    expect(est.weight(0)).toBeCloseTo(1, 9);
    expect(est.weight(100)).toBeCloseTo(0.5, 9);
    // 10 000 half-lives: the scale factor would overflow without rescaling.
    for (let t = 0; t <= 1_000_000; t += 50) est.record(7, t);
    expect(Number.isFinite(est.weight(1_000_000))).toBe(true);
    expect(est.quantile(0.99) as number).toBeCloseTo(7, 0);
  });

  it('property: the estimate is monotone in q and within the recorded range', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ v: fc.double({ min: 0, max: 5e4, noNaN: true }), dt: fc.integer({ min: 0, max: 5_000 }) }), {
          minLength: 1,
          maxLength: 200,
        }),
        (samples) => {
          const est = new LatencyQuantiles({ halfLifeMs: 1_000 });
          let t = 0;
          for (const s of samples) {
            t += s.dt;
            est.record(s.v, t);
          }
          let previous = -1;
          for (const q of [0, 0.1, 0.5, 0.9, 0.99, 1]) {
            const got = est.quantile(q) as number;
            expect(got).toBeGreaterThanOrEqual(previous);
            previous = got;
          }
          const max = Math.max(...samples.map((s) => s.v));
          expect(est.quantile(1) as number).toBeLessThanOrEqual(Math.max(max, 0.01) * 1.05 + 1e-9);
        },
      ),
      { seed: 14_002 },
    );
  });

  it('ignores NaN and negative latencies', () => {
    const est = new LatencyQuantiles();
    est.record(Number.NaN, 0);
    est.record(-1, 0);
    expect(est.count).toBe(0);
  });
});
