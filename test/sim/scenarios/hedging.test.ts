import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { hedging } from '../../../src/sim/scenarios/hedging.js';

interface Doc {
  withoutHedging: { p99Ms: number; p999Ms: number };
  withHedging: { p99Ms: number; p999Ms: number; extraLoad: number; hedges: number };
}

describe('hedging scenario', () => {
  it('a ~1 %-at-10× tail: p99 ≤ 0.4× without hedging, for ≤ 5 % extra load', () => {
    for (const seed of [1, 2, 3]) {
      const doc = hedging.run(withDefaults(hedging, { duration: 30, seed }), {}).json as unknown as Doc;
      expect(doc.withHedging.p99Ms / doc.withoutHedging.p99Ms, `seed ${seed}`).toBeLessThanOrEqual(0.4);
      expect(doc.withHedging.extraLoad, `seed ${seed}`).toBeLessThanOrEqual(0.05);
      expect(doc.withHedging.hedges).toBeGreaterThan(0);
    }
  });

  it('with a tail of exactly 1 % the p99.9 still shows the cut', () => {
    const doc = hedging.run(withDefaults(hedging, { duration: 30, tail: 0.01 }), {}).json as unknown as Doc;
    expect(doc.withHedging.p999Ms / doc.withoutHedging.p999Ms).toBeLessThanOrEqual(0.4);
    expect(doc.withHedging.extraLoad).toBeLessThanOrEqual(0.05);
  });

  it('maxExtraLoad holds even when every call is slow enough to hedge', () => {
    // Half of all attempts are slow: the learned p95 sits inside the tail, yet hedges stay capped.
    const doc = hedging.run(withDefaults(hedging, { duration: 20, tail: 0.5, percentile: 0.5 }), {}).json as unknown as Doc;
    expect(doc.withHedging.extraLoad).toBeLessThanOrEqual(0.05 + 0.001);
    expect(doc.withHedging.extraLoad).toBeGreaterThan(0.04);
  });
});
