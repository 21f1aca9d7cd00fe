import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { latencySpike } from '../../../src/sim/scenarios/latency-spike.js';

interface Doc {
  promisedRate: number;
  rows: { timeouts: string; falseTimeoutRate: number; falseTimeoutRateBefore: number }[];
}

describe('latency-spike scenario', () => {
  it('while latency doubles, derived timeouts stay within 2× of the promise; a fixed one does not', () => {
    for (const ramp of [10, 0]) {
      const doc = latencySpike.run(withDefaults(latencySpike, { ramp, duration: 40 }), {}).json as unknown as Doc;
      expect(doc.promisedRate).toBeCloseTo(0.01, 10);
      const [fixed, derived] = doc.rows as [Doc['rows'][0], Doc['rows'][0]];
      expect([fixed.timeouts, derived.timeouts]).toEqual(['fixed', 'derived']);
      expect(derived.falseTimeoutRate, `ramp ${ramp}`).toBeLessThanOrEqual(2 * doc.promisedRate);
      expect(derived.falseTimeoutRate, `ramp ${ramp}`).toBeGreaterThan(doc.promisedRate / 2);
      expect(fixed.falseTimeoutRate, `ramp ${ramp}`).toBeGreaterThan(10 * doc.promisedRate);
    }
  });

  it('at p99.9 the promise is 0.1 %, and derived timeouts keep it', () => {
    const doc = latencySpike.run(withDefaults(latencySpike, { percentile: 0.999, rate: 1_000, duration: 40 }), {})
      .json as unknown as Doc;
    expect(doc.promisedRate).toBeCloseTo(0.001, 10);
    const derived = doc.rows[1]!;
    expect(derived.timeouts).toBe('derived');
    expect(derived.falseTimeoutRate).toBeLessThanOrEqual(2 * doc.promisedRate);
    expect(derived.falseTimeoutRate).toBeGreaterThan(doc.promisedRate / 2);
  });
});
