import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/random/random.js';
import { exponential, lognormal, normal, sampleLatency } from '../../src/sim/distributions.js';

function mean(draw: () => number, n = 20_000): number {
  let s = 0;
  for (let i = 0; i < n; i++) s += draw();
  return s / n;
}

describe('distributions', () => {
  it('have the mean they are asked for (seed 11, 20,000 draws, within 3 %)', () => {
    const r = new SeededRandom(11);
    expect(mean(() => exponential(r, 50))).toBeCloseTo(50, -0.5);
    expect(Math.abs(mean(() => exponential(r, 50)) / 50 - 1)).toBeLessThan(0.03);
    expect(Math.abs(mean(() => normal(r, 100, 10)) / 100 - 1)).toBeLessThan(0.03);
    expect(Math.abs(mean(() => lognormal(r, 100, 0.5)) / 100 - 1)).toBeLessThan(0.03);
  });

  it('latencies are never negative, and constant ones draw nothing', () => {
    const r = new SeededRandom(3);
    for (let i = 0; i < 5_000; i++)
      expect(sampleLatency({ ms: 1, distribution: 'normal', sigma: 3 }, r)).toBeGreaterThanOrEqual(0);
    const counting = {
      calls: 0,
      next() {
        counting.calls++;
        return 0.5;
      },
    };
    expect(sampleLatency({ ms: 7 }, counting)).toBe(7);
    expect(counting.calls).toBe(0);
  });

  it('measured samples: every draw is one of them, each about equally often (seed 5, 30,000 draws)', () => {
    const r = new SeededRandom(5);
    const samples = [100.8, 101.5, 163];
    const counts = new Map<number, number>();
    for (let i = 0; i < 30_000; i++) {
      const x = sampleLatency({ ms: 121.8, distribution: 'lognormal', samples }, r);
      counts.set(x, (counts.get(x) ?? 0) + 1);
    }
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual(samples);
    for (const n of counts.values()) expect(Math.abs(n / 10_000 - 1)).toBeLessThan(0.05);
  });
});
