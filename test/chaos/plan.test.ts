import { describe, expect, it } from 'vitest';
import { ChaosPlan } from '../../src/chaos/plan.js';
import { isInvalidOptionsError } from '../../src/options/validate.js';

describe('ChaosPlan', () => {
  it('reports every bad option at once, with the bad value', () => {
    let error: unknown;
    try {
      new ChaosPlan({
        faults: [
          { kind: 'latency', rate: 2, ms: { min: 5, max: 1 } },
          { kind: 'status', rate: 0.1, status: 200 },
          { kind: 'explode' as never, rate: 0.1 },
          { kind: 'error', rate: 0.1, outcome: 'maybe' as never },
        ],
        seed: -1,
      });
    } catch (e) {
      error = e;
    }
    expect(isInvalidOptionsError(error)).toBe(true);
    const problems = (error as { problems: string[] }).problems.join('\n');
    expect(problems).toMatch(/faults\[0\]\.rate.*2/);
    expect(problems).toMatch(/faults\[0\]\.ms\.max/);
    expect(problems).toMatch(/faults\[1\]\.status.*200/);
    expect(problems).toMatch(/faults\[2\]\.kind.*explode/);
    expect(problems).toMatch(/faults\[3\]\.outcome.*maybe/);
    expect(problems).toMatch(/seed/);
  });

  it('draws at the configured rate (seed 42: the count lies inside the binomial 99.9% band)', () => {
    const plan = new ChaosPlan({ faults: [{ kind: 'reset', rate: 0.1 }], seed: 42 });
    let hits = 0;
    for (let i = 0; i < 10_000; i++) if (plan.decide('api') !== undefined) hits++;
    // mean 1000, sd 30: ±3.3 sd
    console.log(`[figure] chaos rate 0.1, seed 42: ${hits} faults in 10000 attempts`);
    expect(hits).toBeGreaterThan(900);
    expect(hits).toBeLessThan(1100);
  });

  it('each key has its own stream: its faults do not depend on other keys’ traffic', () => {
    const faults = [{ kind: 'error' as const, rate: 0.3, outcome: 'failed' as const }];
    const alone = new ChaosPlan({ faults, seed: 7 });
    const mixed = new ChaosPlan({ faults, seed: 7 });
    const seqAlone: boolean[] = [];
    const seqMixed: boolean[] = [];
    for (let i = 0; i < 200; i++) {
      seqAlone.push(alone.decide('a') !== undefined);
      mixed.decide('b');
      mixed.decide('c');
      seqMixed.push(mixed.decide('a') !== undefined);
    }
    expect(seqMixed).toEqual(seqAlone);
    expect(seqAlone.filter(Boolean).length).toBeGreaterThan(0);
  });

  it('applies a fault only to matching keys (string, RegExp, function)', () => {
    const plan = new ChaosPlan({
      faults: [
        { kind: 'timeout', rate: 1, key: 'payments' },
        { kind: 'reset', rate: 1, key: /^search/ },
        { kind: 'latency', rate: 1, ms: 5, key: (k) => k.endsWith(':8443') },
      ],
    });
    expect(plan.decide('payments')?.kind).toBe('timeout');
    expect(plan.decide('search-eu')?.kind).toBe('reset');
    expect(plan.decide('api:8443')).toEqual({ kind: 'latency', ms: 5 });
    expect(plan.decide('other')).toBeUndefined();
  });

  it('latency distributions: uniform within [min, max], exponential with the given mean', () => {
    const uniform = new ChaosPlan({ faults: [{ kind: 'latency', rate: 1, ms: { min: 10, max: 20 } }], seed: 3 });
    const exp = new ChaosPlan({ faults: [{ kind: 'latency', rate: 1, ms: { mean: 50 } }], seed: 3 });
    let sum = 0;
    for (let i = 0; i < 5_000; i++) {
      const u = uniform.decide('k') as { ms: number };
      expect(u.ms).toBeGreaterThanOrEqual(10);
      expect(u.ms).toBeLessThanOrEqual(20);
      sum += (exp.decide('k') as { ms: number }).ms;
    }
    // mean 50, sd of the mean 50/√5000 ≈ 0.7
    expect(sum / 5_000).toBeGreaterThan(47);
    expect(sum / 5_000).toBeLessThan(53);
  });
});
