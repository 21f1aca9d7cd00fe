// The benchmarks' turn orders: every case must follow every other case equally often, or a
// case's figure carries its neighbour's leftovers in the CPU's caches (docs/benchmarks.md,
// "The order of the turns").
import { describe, expect, it } from 'vitest';
import { balancedOrders } from '../../bench/rounds.js';

/** How often each ordered pair (a right before b) and each (case, position) occurs. */
function tally(orders: number[][]): { follows: Map<string, number>; positions: Map<string, number> } {
  const follows = new Map<string, number>();
  const positions = new Map<string, number>();
  const bump = (map: Map<string, number>, key: string) => map.set(key, (map.get(key) ?? 0) + 1);
  for (const order of orders) {
    order.forEach((c, i) => {
      bump(positions, `${c}@${i}`);
      if (i > 0) bump(follows, `${order[i - 1]}>${c}`);
    });
  }
  return { follows, positions };
}

describe('balancedOrders', () => {
  for (let n = 2; n <= 9; n++) {
    it(`${n} cases: each order runs every case once; every case follows every other equally often, at every position equally often`, () => {
      const orders = balancedOrders(n);
      expect(orders).toHaveLength(n % 2 === 0 ? n : 2 * n);
      for (const order of orders) expect([...order].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
      const { follows, positions } = tally(orders);
      // Every ordered pair of distinct cases occurs, and all equally often.
      expect(follows.size).toBe(n * (n - 1));
      expect(new Set(follows.values()).size).toBe(1);
      expect(positions.size).toBe(n * n);
      expect(new Set(positions.values()).size).toBe(1);
    });
  }

  it('a rotation of one order is not balanced: each case always follows the same neighbour', () => {
    const n = 5;
    const rotation = Array.from({ length: n }, (_, k) => Array.from({ length: n }, (_, i) => (i + k) % n));
    // n of the n × (n − 1) ordered pairs: case c only ever runs after case c − 1.
    expect(tally(rotation).follows.size).toBe(n);
  });

  it('one case: one order of one', () => {
    expect(balancedOrders(1)).toEqual([[0]]);
  });

  it('refuses a count that is not a whole number of at least one', () => {
    expect(() => balancedOrders(0)).toThrow(/whole number of cases, got 0/);
    expect(() => balancedOrders(2.5)).toThrow(/got 2.5/);
  });
});
