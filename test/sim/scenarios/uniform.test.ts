import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { uniform } from '../../../src/sim/scenarios/uniform.js';

describe('uniform scenario', () => {
  it('jitter or not, the load is exactly 3.00× with 3 attempts', () => {
    const { json } = uniform.run(withDefaults(uniform), {});
    expect(json.loadMultiplier).toEqual({ withoutJitter: 3, withJitter: 3 });
    expect(json.parameters).toMatchObject({ ratePerSecond: 11, attempts: 3 });
  });

  it('steady arrivals: without jitter the peak is exactly rate × attempts; jitter never lowers it', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const { json } = uniform.run(withDefaults(uniform, { seed }), {});
      const peak = json.peakPerSecond as { withoutJitter: number; withJitter: number };
      expect(peak.withoutJitter).toBe(33);
      expect(peak.withJitter).toBeGreaterThanOrEqual(peak.withoutJitter);
    }
  });

  it('jitter raises the per-second peak for most seeds', () => {
    let raised = 0;
    for (let seed = 1; seed <= 10; seed++) {
      const peak = uniform.run(withDefaults(uniform, { seed }), {}).json.peakPerSecond as {
        withoutJitter: number;
        withJitter: number;
      };
      if (peak.withJitter > peak.withoutJitter) raised++;
    }
    expect(raised).toBeGreaterThanOrEqual(8);
  });

  it('the load multiplier follows --attempts, and a config row uses the user’s options', () => {
    const { json } = uniform.run(withDefaults(uniform, { attempts: 2, duration: 10 }), {
      retry: { maxAttempts: 4, backoff: { jitter: 'none' } },
    });
    const variants = json.variants as { variant: string; loadMultiplier: number }[];
    expect(variants.map((v) => [v.variant, v.loadMultiplier])).toEqual([
      ['no jitter', 2],
      ['full jitter', 2],
      ['config', 4],
    ]);
  });

  it('identical seed ⇒ identical JSON', () => {
    const a = JSON.stringify(uniform.run(withDefaults(uniform, { seed: 9 }), {}).json);
    expect(JSON.stringify(uniform.run(withDefaults(uniform, { seed: 9 }), {}).json)).toBe(a);
  });
});
