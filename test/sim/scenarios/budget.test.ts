import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { budget } from '../../../src/sim/scenarios/budget.js';

describe('budget scenario', () => {
  it('1,000 requests/s, 3 attempts, everything failing: 3× without a budget, ≤ 1.2× with ratio 0.2', () => {
    const { json } = budget.run(withDefaults(budget, { duration: 30 }), {});
    const a = json.amplification as { withoutBudget: number; withBudget: number; withBudgetDefaultReserve: number };
    expect(a.withoutBudget).toBe(3);
    expect(a.withBudget).toBeLessThanOrEqual(1.2);
    expect(a.withBudget).toBeGreaterThan(1.15);
    // kindly's default reserve (10 retries/s) is a floor for quiet traffic: at 1,000 requests/s
    // the ratio earns 200/s, so the reserve adds nothing and the bound stays 1.2×.
    expect(a.withBudgetDefaultReserve).toBe(a.withBudget);
  });

  it('the scenario picks its reserve explicitly (0 by default) and reports it', () => {
    const { json } = budget.run(withDefaults(budget, { duration: 5, reserve: 50 }), {});
    expect(json.parameters).toMatchObject({ ratio: 0.2, reservePerSecond: 50 });
    const variants = json.variants as { budget: { reservePerSecond: number } | null }[];
    expect(variants.map((v) => v.budget?.reservePerSecond ?? null)).toEqual([null, 50, 10]);
  });
});
