import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import {
  KEYED_RETRY_BUDGETS_DEFAULTS,
  KeyedRetryBudgets,
  RETRY_BUDGET_DEFAULTS,
  RetryBudget,
  SHRINK_ON_ERRORS_DEFAULTS,
} from '../../src/policies/retry-budget.js';

/** A random schedule of budget operations: time steps, then what happens. */
const operations = fc.array(
  fc.record({
    dt: fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 3_000 })),
    op: fc.constantFrom('request', 'request', 'request', 'retry', 'retry', 'ok', 'error'),
  }),
  { maxLength: 400 },
);

const budgetOptions = fc.record({
  ratio: fc.constantFrom(0, 0.1, 0.2, 0.5, 1),
  windowMs: fc.constantFrom(1_000, 2_000, 10_000),
  reservePerSecond: fc.constantFrom(0, 0.5, 1, 3),
  buckets: fc.integer({ min: 1, max: 12 }),
});

describe('RetryBudget', () => {
  it('defaults are pinned', () => {
    expect(RETRY_BUDGET_DEFAULTS).toEqual({
      ratio: 0.2,
      windowMs: 10_000,
      reservePerSecond: 10,
      buckets: 10,
      shrinkOnErrors: false,
    });
    expect(SHRINK_ON_ERRORS_DEFAULTS).toEqual({ minSamples: 20, minRatio: 0 });
    const b = new RetryBudget();
    expect([b.ratio, b.windowMs, b.reservePerSecond, b.buckets, b.reserve, b.shrinkOnErrors]).toEqual([
      0.2,
      10_000,
      10,
      10,
      100,
      undefined,
    ]);
  });

  it('rejects bad options, listing every problem with its value', () => {
    const bad = () =>
      new RetryBudget({ ratio: 1.5, windowMs: -1, reservePerSecond: Number.NaN, buckets: 2.5, extra: 1 } as never);
    expect(bad).toThrow(InvalidOptionsError);
    try {
      bad();
    } catch (error) {
      const problems = (error as InvalidOptionsError).problems.join('\n');
      for (const fragment of ['`extra`', '`ratio`', '1.5', '`windowMs`', '-1', '`reservePerSecond`', 'NaN', '`buckets`', '2.5']) {
        expect(problems).toContain(fragment);
      }
    }
    expect(() => new RetryBudget({ shrinkOnErrors: { minRatio: 0.5 }, ratio: 0.2 })).toThrow(/minRatio/);
    expect(() => new RetryBudget({ shrinkOnErrors: 'yes' as never })).toThrow(/shrinkOnErrors/);
  });

  it('with no traffic, exactly the reserve: reservePerSecond × window seconds', () => {
    const b = new RetryBudget();
    let granted = 0;
    while (b.tryRetry(0)) granted++;
    expect(granted).toBe(100);
    expect(b.available(0)).toBe(0);
    expect(b.rejected).toBe(1);
  });

  it('ratio × requests on top of the reserve', () => {
    const b = new RetryBudget({ reservePerSecond: 0 });
    for (let i = 0; i < 100; i++) b.recordRequest(i);
    expect(b.available(100)).toBe(20);
    let granted = 0;
    while (b.tryRetry(100)) granted++;
    expect(granted).toBe(20);
  });

  it('the last retry of an exactly full budget is granted despite rounding (0.2 × 3 = 0.6000000000000001)', () => {
    const b = new RetryBudget({ ratio: 0.2, reservePerSecond: 0 });
    for (let i = 0; i < 15; i++) b.recordRequest(0);
    expect(b.available(0)).toBe(3);
    expect([b.tryRetry(0), b.tryRetry(0), b.tryRetry(0), b.tryRetry(0)]).toEqual([true, true, true, false]);
  });

  it('slides: deposits and withdrawals leave the window with their bucket', () => {
    const b = new RetryBudget({ ratio: 0.5, reservePerSecond: 0, windowMs: 1_000, buckets: 10 });
    for (let i = 0; i < 10; i++) b.recordRequest(0);
    for (let i = 0; i < 5; i++) expect(b.tryRetry(500)).toBe(true);
    expect(b.tryRetry(500)).toBe(false);
    // At 1000 the deposits (bucket 0) expired, the withdrawals (bucket 5) did not: overdrawn.
    expect(b.available(1_000)).toBe(0);
    b.recordRequest(1_000);
    b.recordRequest(1_000);
    expect(b.tryRetry(1_000)).toBe(false);
    // At 1500 the withdrawals expired too.
    expect(b.available(1_500)).toBe(1);
  });

  it('shrinkOnErrors: ratio × (1 − error rate), once minSamples outcomes are in', () => {
    const b = new RetryBudget({ ratio: 0.4, reservePerSecond: 0, shrinkOnErrors: { minSamples: 10 } });
    for (let i = 0; i < 100; i++) b.recordRequest(0);
    for (let i = 0; i < 9; i++) b.recordOutcome(0, false);
    expect(b.effectiveRatio(0)).toBe(0.4); // 9 < minSamples
    b.recordOutcome(0, true); // 9 errors out of 10
    expect(b.effectiveRatio(0)).toBeCloseTo(0.04, 12);
    expect(b.available(0)).toBe(4);
    for (let i = 0; i < 90; i++) b.recordOutcome(0, true); // 9 out of 100
    expect(b.effectiveRatio(0)).toBeCloseTo(0.364, 12);
    const floored = new RetryBudget({ ratio: 0.4, shrinkOnErrors: { minSamples: 1, minRatio: 0.1 } });
    floored.recordOutcome(0, false);
    expect(floored.effectiveRatio(0)).toBe(0.1);
    const off = new RetryBudget();
    off.recordOutcome(0, false);
    expect(off.effectiveRatio(0)).toBe(0.2);
    expect(new RetryBudget({ shrinkOnErrors: true }).shrinkOnErrors).toEqual(SHRINK_ON_ERRORS_DEFAULTS);
  });

  it('available stays in [0, ratio_eff × requests + reserve] and matches what tryRetry grants (property)', () => {
    fc.assert(
      fc.property(budgetOptions, fc.boolean(), operations, (options, shrink, ops) => {
        const b = new RetryBudget({ ...options, shrinkOnErrors: shrink && { minSamples: 5 } });
        let now = 0;
        for (const { dt, op } of ops) {
          now += dt;
          const available = b.available(now);
          const max = b.effectiveRatio(now) * b.requests(now) + b.reserve;
          if (!(available >= 0 && available <= max + 1e-9 && Number.isInteger(available))) return false;
          if (op === 'request') b.recordRequest(now);
          else if (op === 'retry') {
            if (b.tryRetry(now) !== available >= 1) return false;
          } else b.recordOutcome(now, op === 'ok');
        }
        return true;
      }),
    );
  });

  it('never grants more than ratio × requests + reserve (property)', () => {
    fc.assert(
      fc.property(budgetOptions, operations, (options, ops) => {
        const b = new RetryBudget(options);
        const bucketMs = options.windowMs / options.buckets;
        const reserve = (options.reservePerSecond * options.windowMs) / 1000;
        const requests: number[] = [];
        const grants: number[] = [];
        let now = 0;
        for (const { dt, op } of ops) {
          now += dt;
          if (op === 'request') {
            b.recordRequest(now);
            requests.push(now);
          } else if (op === 'retry' && b.tryRetry(now)) {
            grants.push(now);
            // At the grant: over the window ending now (current bucket and buckets − 1 before).
            const from = (Math.floor(now / bucketMs) - options.buckets + 1) * bucketMs;
            const inWindow = (ts: number[]) => ts.filter((t) => t >= from).length;
            if (inWindow(grants) > options.ratio * inWindow(requests) + reserve + 1e-9) return false;
          }
        }
        // Over any window [a, a + W): grants ≤ ratio × requests in [a − W, a + W) + reserve,
        // since a deposit supports retries for one window after it was made.
        for (let a = 0; a <= now; a += bucketMs) {
          const granted = grants.filter((t) => t >= a && t < a + options.windowMs).length;
          const deposited = requests.filter((t) => t >= a - options.windowMs && t < a + options.windowMs).length;
          if (granted > options.ratio * deposited + reserve + 1e-9) return false;
        }
        return true;
      }),
    );
  });

  it('costs O(1) per operation: a long idle gap and a million requests keep it flat', () => {
    const b = new RetryBudget();
    for (let i = 0; i < 1_000_000; i++) b.recordRequest(i / 100); // 10 s at 100 000 rps
    // At 10 000 the window is buckets [1 000, 11 000): nine tenths of them.
    expect(b.requests(10_000)).toBe(900_000);
    expect(b.requests(1e12)).toBe(0);
    expect(b.available(1e12)).toBe(100);
  });
});

describe('KeyedRetryBudgets', () => {
  it('defaults are pinned and options are validated', () => {
    expect(KEYED_RETRY_BUDGETS_DEFAULTS).toEqual({ maxKeys: 1_000 });
    expect(new KeyedRetryBudgets().maxKeys).toBe(1_000);
    expect(() => new KeyedRetryBudgets({ maxKeys: 0 })).toThrow(/maxKeys/);
    expect(() => new KeyedRetryBudgets({ budget: { ratio: 2 } })).toThrow(/ratio/);
  });

  it('one key exhausting its budget never affects another (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ key: fc.constantFrom('a', 'b', 'c'), dt: fc.integer({ min: 0, max: 500 }), request: fc.boolean() }),
          {
            maxLength: 300,
          },
        ),
        (ops) => {
          const keyed = new KeyedRetryBudgets({ budget: { reservePerSecond: 0.5, windowMs: 2_000 } });
          const alone = new Map(['a', 'b', 'c'].map((k) => [k, new RetryBudget({ reservePerSecond: 0.5, windowMs: 2_000 })]));
          let now = 0;
          for (const { key, dt, request } of ops) {
            now += dt;
            const own = alone.get(key) as RetryBudget;
            if (request) {
              keyed.recordRequest(key, now);
              own.recordRequest(now);
            } else if (keyed.tryRetry(key, now) !== own.tryRetry(now)) return false;
            for (const [k, b] of alone) if (keyed.available(k, now) !== b.available(now)) return false;
          }
          return true;
        },
      ),
    );
  });

  it('evicts the least recently used key beyond maxKeys', () => {
    const keyed = new KeyedRetryBudgets({ maxKeys: 2, budget: { reservePerSecond: 0.1 } });
    expect(keyed.tryRetry('a', 0)).toBe(true); // a's reserve (1) spent
    keyed.get('b');
    keyed.get('a'); // a is now the most recent
    keyed.get('c'); // evicts b
    expect([...keyed.keys()]).toEqual(['a', 'c']);
    expect(keyed.evicted).toBe(1);
    expect(keyed.has('b')).toBe(false);
    expect(keyed.available('a', 0)).toBe(0); // a kept its state (and is the most recent again)
    keyed.get('c');
    keyed.get('d'); // evicts a, now the least recent: its window is forgotten
    expect(keyed.available('a', 0)).toBe(1);
    expect(keyed.size).toBe(2);
    expect(keyed.delete('a')).toBe(true);
    expect(keyed.size).toBe(1);
  });
});
