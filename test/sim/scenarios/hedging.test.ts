import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { hedging, runHedging } from '../../../src/sim/scenarios/hedging.js';

interface Doc {
  withoutHedging: { p99Ms: number; p999Ms: number };
  withHedging: { p99Ms: number; p999Ms: number; extraLoad: number; hedges: number };
  p99RatioRange: [number, number];
  p999Ratio: number;
  p99OnTheTailBoundary: boolean;
  perSeed: { seed: number; p99Ratio: number; extraLoad: number }[];
}

describe('hedging scenario', () => {
  it('a tail of 1 %+ at 10× that sets the p99: p99 ≤ 0.4× without hedging on every seed, for ≤ 5 % extra load', () => {
    const doc = hedging.run(withDefaults(hedging, { duration: 30, seeds: 3 }), {}).json as unknown as Doc;
    expect(doc.p99OnTheTailBoundary).toBe(false);
    expect(doc.perSeed.map((r) => r.seed)).toEqual([1, 2, 3]);
    for (const r of doc.perSeed) {
      expect(r.p99Ratio, `seed ${r.seed}`).toBeLessThanOrEqual(0.4);
      expect(r.extraLoad, `seed ${r.seed}`).toBeLessThanOrEqual(0.05);
    }
    expect(doc.p99RatioRange[1]).toBeLessThanOrEqual(0.4);
    expect(doc.withHedging.hedges).toBeGreaterThan(0);
  });

  it('with a tail of exactly 1 % the report says the p99 is on the boundary, and the p99.9 shows the cut', () => {
    const doc = hedging.run(withDefaults(hedging, { duration: 30, tail: 0.01, seeds: 1 }), {}).json as unknown as Doc;
    expect(doc.p99OnTheTailBoundary).toBe(true);
    expect(doc.p999Ratio).toBeLessThanOrEqual(0.4);
    expect(doc.withHedging.extraLoad).toBeLessThanOrEqual(0.05);
  });

  it('paired runs: with and without hedging see the same traffic and the same slow first attempts', () => {
    const setup = {
      ratePerSecond: 500,
      durationMs: 10_000,
      medianMs: 10,
      sigma: 0.2,
      tail: 0.012,
      slowdown: 10,
      percentile: 0.95,
      seed: 7,
    };
    const without = runHedging(setup, false);
    const withHedging = runHedging(setup, true);
    expect(withHedging.hedges).toBeGreaterThan(0);
    expect(withHedging.requests).toBe(without.requests);
    expect(withHedging.slowShare).toBe(without.slowShare);
  });

  it('maxExtraLoad holds even when every call is slow enough to hedge', () => {
    // Half of all attempts are slow: the learned p95 sits inside the tail, yet hedges stay capped.
    const doc = hedging.run(withDefaults(hedging, { duration: 20, tail: 0.5, percentile: 0.5 }), {}).json as unknown as Doc;
    expect(doc.withHedging.extraLoad).toBeLessThanOrEqual(0.05 + 0.001);
    expect(doc.withHedging.extraLoad).toBeGreaterThan(0.04);
  });
});
