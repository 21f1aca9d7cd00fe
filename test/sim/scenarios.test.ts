import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../src/sim/scenario.js';
import { findScenario, SCENARIOS } from '../../src/sim/scenarios.js';

describe('scenario registry', () => {
  it('lists the built-in scenarios', () => {
    expect(SCENARIOS.map((s) => s.name)).toEqual([
      'herd',
      'uniform',
      'amplification',
      'dead-dependency',
      'budget',
      'queueing',
      'hedging',
      'latency-spike',
      'fleet',
    ]);
    expect(findScenario('budget')?.name).toBe('budget');
    expect(findScenario('nope')).toBeUndefined();
  });

  it('every option has a default within its own range', () => {
    for (const s of SCENARIOS) {
      for (const o of s.options) {
        if (o.kind === 'choice') expect(o.choices).toContain(o.default);
        else {
          expect(typeof o.default).toBe('number');
          if (o.min !== undefined) expect(o.default).toBeGreaterThanOrEqual(o.min);
          if (o.max !== undefined) expect(o.default).toBeLessThanOrEqual(o.max);
          if (o.kind === 'integer') expect(Number.isInteger(o.default)).toBe(true);
        }
      }
    }
  });

  it('every scenario is deterministic: the same parameters give the same JSON string', () => {
    const small: Record<string, Record<string, number>> = {
      herd: { seeds: 5 },
      uniform: { duration: 10 },
      amplification: { requests: 5 },
      'dead-dependency': { duration: 30, 'down-from': 5, 'down-for': 10 },
      budget: { duration: 5 },
      queueing: { duration: 3 },
      hedging: { duration: 2 },
      'latency-spike': { duration: 5, 'spike-at': 2, ramp: 1 },
    };
    for (const s of SCENARIOS) {
      const params = withDefaults(s, small[s.name]);
      const a = JSON.stringify(s.run(params, {}).json);
      const b = JSON.stringify(s.run(params, {}).json);
      expect(a, s.name).toBe(b);
      expect(a).not.toMatch(/Infinity|NaN/);
    }
  });
});
