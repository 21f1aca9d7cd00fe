// The benchmarks' turn order: every case must follow every other case equally often, or a
// case's figure carries its neighbour's leftovers in the CPU's caches (docs/benchmarks.md,
// "The order of the turns").
import { describe, expect, it } from 'vitest';
import { balancedCycle } from '../../bench/rounds.js';

/** How often each ordered pair (a right before b) occurs when `cycle` runs `times` times in a row. */
function follows(cycle: number[], times: number): Map<string, number> {
  const run = Array.from({ length: times }, () => cycle).flat();
  const tally = new Map<string, number>();
  for (let i = 1; i < run.length; i++) {
    const key = `${run[i - 1]}>${run[i]}`;
    tally.set(key, (tally.get(key) ?? 0) + 1);
  }
  return tally;
}

describe('balancedCycle', () => {
  for (let n = 2; n <= 9; n++) {
    it(`${n} cases: every case follows every other exactly once a cycle, across the cycle's end too, and never itself`, () => {
      const cycle = balancedCycle(n);
      expect(cycle).toHaveLength(n * (n - 1));
      for (let c = 0; c < n; c++) expect(cycle.filter((x) => x === c)).toHaveLength(n - 1);
      // One cycle read round (its last turn followed by its first), then run five times over:
      // the steps from one cycle into the next are pairs of the cycle, not extra ones.
      const once = follows([...cycle, cycle[0] as number], 1);
      expect(once.size).toBe(n * (n - 1));
      expect(new Set(once.values())).toEqual(new Set([1]));
      const five = follows(cycle, 5);
      expect(five.size).toBe(n * (n - 1));
      for (const [pair, count] of five) {
        const [a, b] = pair.split('>');
        expect(a).not.toBe(b);
        // 5 × per pair, but for the last cycle's closing step, which the run does not take.
        expect(count === 5 || (count === 4 && a === String(cycle.at(-1)) && b === String(cycle[0]))).toBe(true);
      }
    });
  }

  it('a rotation of one order is not balanced: each case nearly always follows the same neighbour', () => {
    const n = 5;
    const rotation = Array.from({ length: n }, (_, k) => Array.from({ length: n }, (_, i) => (i + k) % n)).flat();
    const tally = follows(rotation, 4);
    // Case c runs after case c − 1 in n − 1 of its n turns a rotation; the other pairs come
    // only where one order meets the next, and some never.
    expect(tally.get('0>1')).toBe(4 * (n - 1));
    expect(tally.size).toBeLessThan(n * (n - 1));
  });

  it('one case: a cycle of one', () => {
    expect(balancedCycle(1)).toEqual([0]);
  });

  it('refuses a count that is not a whole number of at least one', () => {
    expect(() => balancedCycle(0)).toThrow(/whole number of cases, got 0/);
    expect(() => balancedCycle(2.5)).toThrow(/got 2.5/);
  });
});
