import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { HEDGING_DEFAULTS, type HedgeInput, HedgingPolicy } from '../../src/policies/hedging.js';
import { RetryBudget } from '../../src/policies/retry-budget.js';

const calm = (nowMs: number): HedgeInput => ({ nowMs, idempotent: true, hedgesSent: 0, trouble: false, retryBudget: undefined });

describe('HedgingPolicy', () => {
  it('defaults are pinned', () => {
    expect(HEDGING_DEFAULTS).toEqual({ percentile: 0.95, maxHedges: 1, maxExtraLoad: 0.05, minSamples: 20, halfLifeMs: 10_000 });
  });

  it('rejects bad options, every problem at once', () => {
    try {
      new HedgingPolicy({ percentile: 0, maxHedges: 0, maxExtraLoad: 2, delayMs: -1 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const text = (error as InvalidOptionsError).problems.join('\n');
      for (const f of ['`percentile`', '`maxHedges`', '`maxExtraLoad`', '`delayMs`']) expect(text).toContain(f);
    }
  });

  it('a learned delay waits for minSamples, then follows the percentile', () => {
    const h = new HedgingPolicy({ minSamples: 10, percentile: 0.9 });
    expect(h.delayMs(0)).toBeUndefined();
    for (let i = 1; i <= 100; i++) h.recordLatency(i, 0);
    expect(Math.abs((h.delayMs(0) as number) / 90 - 1)).toBeLessThan(0.05);
    expect(new HedgingPolicy({ delayMs: 25 }).delayMs(0)).toBe(25);
  });

  it('never hedges a non-idempotent call, past maxHedges, or while the callee is in trouble', () => {
    const h = new HedgingPolicy({ maxExtraLoad: 1 });
    for (let i = 0; i < 100; i++) h.recordRequest(0);
    expect(h.decide({ ...calm(0), idempotent: false })).toBe('not-idempotent');
    expect(h.decide({ ...calm(0), hedgesSent: 1 })).toBe('max-hedges');
    expect(h.decide({ ...calm(0), trouble: true })).toBe('trouble');
    expect(h.decide(calm(0))).toBeUndefined();
    expect(h.sent).toBe(1);
  });

  it('hedges stay within maxExtraLoad of the requests', () => {
    const h = new HedgingPolicy({ maxExtraLoad: 0.05 });
    let granted = 0;
    for (let t = 0; t < 10_000; t++) {
      h.recordRequest(t);
      // Every call asks for a hedge: only 5 % get one.
      if (h.decide(calm(t)) === undefined) granted++;
    }
    expect(granted).toBeLessThanOrEqual(500);
    expect(granted).toBeGreaterThanOrEqual(490);
  });

  it('hedges draw on the retry budget: none when it is empty', () => {
    const h = new HedgingPolicy({ maxExtraLoad: 1 });
    const budget = new RetryBudget({ ratio: 0, reservePerSecond: 0 });
    h.recordRequest(0);
    expect(h.decide({ ...calm(0), retryBudget: () => budget.tryRetry(0) })).toBe('budget');
    const roomy = new RetryBudget({ ratio: 1, reservePerSecond: 0 });
    roomy.recordRequest(0);
    h.recordRequest(0);
    expect(h.decide({ ...calm(0), retryBudget: () => roomy.tryRetry(0) })).toBeUndefined();
    expect(roomy.tryRetry(0)).toBe(false);
  });
});
