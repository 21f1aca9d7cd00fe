// The second look the quiet tests take at an undisturbed herd over a per-herd guard: one herd
// per run, said with its account, and every herd run handed back for the means.
import { describe, expect, it } from 'vitest';
import { SecondLook } from '../support/second-look.js';

/** Herds given by ratio, in order: a guard breaks over 1.25. */
function herds(...ratios: number[]) {
  let next = 0;
  return {
    once: async () => ratios[next++] as number,
    over: (ratio: number) => (ratio > 1.25 ? `${ratio}× the bound` : undefined),
    account: (ratio: number) => `account of ${ratio}`,
    run: () => next,
  };
}

describe('a second look at a herd over its guard', () => {
  it('runs a herd within its guards once', async () => {
    const said: string[] = [];
    const look = new SecondLook({ log: (line) => said.push(line) });
    const h = herds(1.1, 1.4);
    expect(await look.run('seed 1', h.once, h.over, h.account)).toEqual([1.1]);
    expect(h.run()).toBe(1);
    expect(said).toEqual([]);
  });

  it('runs a herd over a guard once more, says so with its account, and gives both', async () => {
    const said: string[] = [];
    const look = new SecondLook({ log: (line) => said.push(line) });
    const h = herds(1.34, 1.1);
    expect(await look.run('seed 9', h.once, h.over, h.account)).toEqual([1.34, 1.1]);
    expect(said).toEqual(['[figure] seed 9: 1.34× the bound, over its guard; a second look (0 more allowed)\naccount of 1.34']);
  });

  it('hands back a second herd over its guard as it came: the test fails on it', async () => {
    const look = new SecondLook({ log: () => {} });
    const h = herds(1.5, 1.6, 1.7);
    expect(await look.run('seed 2', h.once, h.over, h.account)).toEqual([1.5, 1.6]);
    expect(h.run()).toBe(2);
  });

  it('takes one look a run by default: the next herd over a guard is kept as it came', async () => {
    const said: string[] = [];
    const look = new SecondLook({ log: (line) => said.push(line) });
    const h = herds(1.3, 1.1, 1.3, 1.1);
    expect(await look.run('seed 1', h.once, h.over, h.account)).toEqual([1.3, 1.1]);
    expect(await look.run('seed 2', h.once, h.over, h.account)).toEqual([1.3]);
    expect(said).toHaveLength(1);
  });
});
