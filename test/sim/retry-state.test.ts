import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RetryPolicy } from '../../src/policies/retry-decision.js';
import { SeededRandom } from '../../src/random/random.js';
import { REFUSED } from '../../src/sim/dependency.js';
import { GIVE_UP, RetryState } from '../../src/sim/retry-state.js';

describe('RetryState', () => {
  it('numbers attempts per call and gives up at maxAttempts, by reason', () => {
    const s = new RetryState(new RetryPolicy({ maxAttempts: 3, backoff: { jitter: 'none' } }), new SeededRandom(1), 2);
    expect(s.attempt(0, 0)).toBe(1);
    expect(s.next(0, REFUSED, 10)).toBe(100);
    expect(s.attempt(0, 110)).toBe(2);
    expect(s.next(0, REFUSED, 120)).toBe(200);
    expect(s.attempt(0, 320)).toBe(3);
    expect(s.next(0, REFUSED, 330)).toBe(GIVE_UP);
    expect(s.gaveUp).toEqual({ 'max-attempts': 1 });
    expect(s.gaveUpCount).toBe(1);
  });

  it('passes elapsed time since the first attempt, so maxElapsedMs ends a call', () => {
    const s = new RetryState(
      new RetryPolicy({
        maxAttempts: Number.POSITIVE_INFINITY,
        maxElapsedMs: 1000,
        backoff: { shape: 'constant', baseMs: 400, jitter: 'none' },
      }),
      new SeededRandom(1),
      1,
    );
    s.attempt(0, 5000);
    expect(s.next(0, REFUSED, 5500)).toBe(400);
    s.attempt(0, 5900);
    expect(s.next(0, REFUSED, 6000)).toBe(GIVE_UP);
    expect(s.gaveUp).toEqual({ 'max-elapsed': 1 });
  });

  it('asks admit (step 4) and reports its refusal', () => {
    const s = new RetryState(new RetryPolicy({ maxAttempts: 5 }), new SeededRandom(1), 1);
    s.attempt(0, 0);
    expect(s.next(0, REFUSED, 1, () => 'budget')).toBe(GIVE_UP);
    expect(s.gaveUp).toEqual({ budget: 1 });
  });

  it('grows for ids beyond the expected number of calls', () => {
    const s = new RetryState(new RetryPolicy({}), new SeededRandom(1), 1);
    expect(s.attempt(5000, 0)).toBe(1);
    expect(s.attempt(5000, 1)).toBe(2);
    expect(s.attemptsOf(5000)).toBe(2);
  });

  it('feeds decorrelated jitter the previous delay of the same call', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), (seed) => {
        const policy = new RetryPolicy({ maxAttempts: 10, backoff: { baseMs: 100, jitter: 'decorrelated', capMs: 100_000 } });
        const s = new RetryState(policy, new SeededRandom(seed), 1);
        let prev = 100;
        let now = 0;
        for (let i = 0; i < 9; i++) {
          s.attempt(0, now);
          const d = s.next(0, REFUSED, now);
          expect(d).toBeGreaterThanOrEqual(100);
          expect(d).toBeLessThanOrEqual(Math.max(100, 3 * prev));
          prev = d;
          now += d;
        }
      }),
    );
  });
});
