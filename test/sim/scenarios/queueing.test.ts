import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { queueing, runQueueing } from '../../../src/sim/scenarios/queueing.js';

interface Row {
  strategy: string;
  goodputRatio: number;
  p99Ms: number;
  rejected: number;
  convergenceMs: { halving: number | null; doubling: number | null };
}

describe('queueing scenario', () => {
  it('the adaptive limit, with no number configured: goodput ≥ 95 %, p99 ≤ 1.5× unloaded, settled within 2 s of each capacity change', () => {
    const { json } = queueing.run(withDefaults(queueing), {});
    const rows = json.rows as Row[];
    const unloaded = json.unloadedP99Ms as number;
    expect(rows.map((r) => r.strategy)).toEqual(['none', 'bulkhead', 'adaptive']);
    const [none, bulkhead, adaptive] = rows as [Row, Row, Row];
    expect(adaptive.goodputRatio).toBeGreaterThanOrEqual(0.95);
    expect(adaptive.p99Ms).toBeLessThanOrEqual(1.5 * unloaded);
    expect(adaptive.convergenceMs.halving).not.toBeNull();
    expect(adaptive.convergenceMs.halving as number).toBeLessThanOrEqual(2_000);
    expect(adaptive.convergenceMs.doubling as number).toBeLessThanOrEqual(2_000);
    // Without a limit the callee collapses; a bulkhead sized for the start never settles
    // while the capacity is halved.
    expect(none.goodputRatio).toBeLessThan(0.1);
    expect(none.rejected).toBe(0);
    expect(bulkhead.convergenceMs.halving).toBeNull();
  });

  it('the same holds for a callee five times larger (200 workers)', () => {
    const setup = {
      workers: 200,
      serviceMedianMs: 20,
      serviceSigma: 0.3,
      load: 1.5,
      timeoutMs: 1_000,
      bulkhead: 200,
      durationMs: 30_000,
      capacityChanges: true,
      seed: 1,
    };
    const unloaded = runQueueing({ ...setup, load: 0.1, capacityChanges: false }, 'none', Number.POSITIVE_INFINITY).p99Ms;
    const adaptive = runQueueing(setup, 'adaptive', unloaded);
    expect(adaptive.goodputRatio).toBeGreaterThanOrEqual(0.95);
    expect(adaptive.p99Ms).toBeLessThanOrEqual(1.5 * unloaded);
    expect(adaptive.convergenceMs?.halving as number).toBeLessThanOrEqual(2_000);
    expect(adaptive.convergenceMs?.doubling as number).toBeLessThanOrEqual(2_000);
  });
});

describe('queueing scenario: the convergence criterion', () => {
  const base = {
    workers: 40,
    serviceMedianMs: 20,
    serviceSigma: 0.3,
    load: 1.5,
    timeoutMs: 1_000,
    bulkhead: 40,
    durationMs: 30_000,
    capacityChanges: true,
    seed: 1,
  };
  it.each([
    ['a slow callee (100 ms)', { serviceMedianMs: 100 }],
    ['a small callee (10 workers)', { workers: 10 }],
    ['a long-tailed callee (σ 0.8)', { serviceSigma: 0.8 }],
  ])('a limit that knows the capacity settles at once on %s: the criterion judges the limit, not sampling noise', (_, change) => {
    for (const seed of [1, 2, 3]) {
      const setup = { ...base, ...change, seed };
      const unloaded = runQueueing({ ...setup, load: 0.1, capacityChanges: false }, 'none', Number.POSITIVE_INFINITY).p99Ms;
      const oracle = runQueueing(setup, 'oracle', unloaded);
      expect(oracle.convergenceMs, `seed ${seed}`).toEqual({ halving: 0, doubling: 0 });
      expect(oracle.goodputRatio, `seed ${seed}`).toBeGreaterThanOrEqual(0.95);
    }
  });
});
