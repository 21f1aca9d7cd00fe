import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BACKOFF_DEFAULTS, Backoff, type BackoffOptions } from '../../src/backoff/backoff.js';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { SeededRandom } from '../../src/random/random.js';

const fixed = (value: number) => ({ next: () => value });

describe('Backoff shapes', () => {
  it('defaults are pinned', () => {
    expect(BACKOFF_DEFAULTS).toEqual({ shape: 'exponential', baseMs: 100, factor: 2, jitter: 'full', capMs: 20_000, floorMs: 0 });
    const b = new Backoff();
    expect([b.shape, b.baseMs, b.factor, b.jitter, b.capMs, b.floorMs]).toEqual(['exponential', 100, 2, 'full', 20_000, 0]);
  });

  it('exponential: base × factor^(n−1), capped', () => {
    const b = new Backoff({ shape: 'exponential', baseMs: 200, factor: 2, jitter: 'none', capMs: 5_000 });
    expect([1, 2, 3, 4, 5, 6, 7, 50, 5000].map((n) => b.delay(n, fixed(0.5)))).toEqual([
      200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000,
    ]);
  });

  it('linear and constant', () => {
    const linear = new Backoff({ shape: 'linear', baseMs: 100, stepMs: 50, jitter: 'none' });
    expect([1, 2, 3].map((n) => linear.delay(n, fixed(0)))).toEqual([100, 150, 200]);
    const constant = new Backoff({ shape: 'constant', baseMs: 1000, jitter: 'none' });
    expect([1, 9].map((n) => constant.delay(n, fixed(0)))).toEqual([1000, 1000]);
  });

  it('full, equal and decorrelated jitter follow their formulas', () => {
    const opts: BackoffOptions = { baseMs: 100, capMs: 10_000 };
    expect(new Backoff({ ...opts, jitter: 'full' }).delay(3, fixed(0.25))).toBe(100); // 0.25 × 400
    expect(new Backoff({ ...opts, jitter: 'equal' }).delay(3, fixed(0.5))).toBe(300); // 200 + 0.5 × 200
    // decorrelated: base + u × (3 × previous − base)
    expect(new Backoff({ ...opts, jitter: 'decorrelated' }).delay(2, fixed(0.5), 1000)).toBe(100 + 0.5 * 2900);
    expect(new Backoff({ ...opts, jitter: 'decorrelated' }).delay(1, fixed(0.5))).toBe(200); // previous₀ = base
  });

  it('floor raises short delays (the "minimum wait")', () => {
    const b = new Backoff({ baseMs: 100, jitter: 'full', floorMs: 1000, capMs: 5000 });
    expect(b.delay(1, fixed(0))).toBe(1000);
  });

  it('a floor at or above the ceiling still spreads: the window is [floor, max(c, 2 × floor)], capped', () => {
    const b = new Backoff({ baseMs: 1000, jitter: 'full', floorMs: 1000, capMs: 60_000 }); // the background preset's backoff
    expect([0, 0.5, 0.999].map((u) => b.delay(1, fixed(u)))).toEqual([1000, 1500, 1999]);
    const equal = new Backoff({ baseMs: 200, jitter: 'equal', floorMs: 1000, capMs: 5000 });
    expect([0, 0.5].map((u) => equal.delay(1, fixed(u)))).toEqual([1500, 1750]);
    // The cap still wins: no delay may be longer, so floor = cap leaves exactly one value.
    const pinned = new Backoff({ baseMs: 100, jitter: 'full', floorMs: 1000, capMs: 1000 });
    expect(pinned.delay(1, fixed(0.7))).toBe(1000);
    const capped = new Backoff({ baseMs: 100, jitter: 'full', floorMs: 1000, capMs: 1500 });
    expect(capped.delay(1, fixed(0.5))).toBe(1250);
  });

  it('regression (floor removed jitter): two clients with different seeds never wait the same for any attempt', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('constant', 'linear', 'exponential' as const),
        fc.constantFrom('full', 'equal', 'decorrelated' as const),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 30 }),
        (shape, jitter, base, floor, failures, seed) => {
          // A cap above the floor: only floor = cap pins a delay (documented).
          const b = new Backoff({ shape, jitter, baseMs: base, floorMs: floor, capMs: Math.max(20_000, 2 * floor + 1) });
          const first = new SeededRandom(seed);
          const second = new SeededRandom(seed + 1);
          let previousA: number | undefined;
          let previousB: number | undefined;
          for (let n = 1; n <= failures; n++) {
            previousA = b.delay(n, first, previousA);
            previousB = b.delay(n, second, previousB);
            expect(previousA, `attempt ${n}`).not.toBe(previousB);
          }
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('property: floor ≤ delay ≤ cap for every shape, jitter and attempt, never NaN or Infinity', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('constant', 'linear', 'exponential' as const),
        fc.constantFrom('none', 'full', 'equal', 'decorrelated' as const),
        fc.double({ min: 0, max: 1e7, noNaN: true }),
        fc.double({ min: 1, max: 1000, noNaN: true }),
        fc.double({ min: 0, max: 1e9, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.option(fc.double({ min: 0, max: 1e12, noNaN: true }), { nil: undefined }),
        fc.integer(),
        (shape, jitter, base, factor, cap, floorShare, n, previous, seed) => {
          const floor = cap * floorShare;
          const b = new Backoff({ shape, jitter, baseMs: base, factor, capMs: cap, floorMs: floor, stepMs: base });
          const d = b.delay(n, new SeededRandom(seed), previous);
          expect(Number.isFinite(d)).toBe(true);
          expect(d).toBeGreaterThanOrEqual(floor);
          expect(d).toBeLessThanOrEqual(cap);
        },
      ),
      { numRuns: 5_000 },
    );
  });
});

describe('Backoff validation', () => {
  it('lists every problem with its value', () => {
    let error: unknown;
    try {
      new Backoff({ baseMs: -1, capMs: Number.NaN, factor: 0.5, jitter: 'wild' as never, extra: 1 } as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidOptionsError);
    const problems = (error as InvalidOptionsError).problems.join('\n');
    expect(problems).toContain('Unknown option `extra`');
    expect(problems).toContain('`jitter`');
    expect(problems).toContain('got "wild"');
    expect(problems).toContain('`baseMs` ≥ 0, got -1');
    expect(problems).toContain('`factor` in [1, 1000], got 0.5');
    expect(problems).toContain('`capMs` to be a number of milliseconds, got NaN');
  });

  it('rejects floor > cap', () => {
    expect(() => new Backoff({ floorMs: 2000, capMs: 1000 })).toThrow('floorMs 2000 > capMs 1000');
  });
});
