import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { background, interactive, RETRY_DEFAULTS, RetryPolicy } from '../../src/policies/retry-decision.js';
import { SeededRandom } from '../../src/random/random.js';

const retryable: Classification = { outcome: 'unknown', retryable: true };
const base = {
  attempt: 1,
  classification: retryable,
  idempotent: true,
  verifiable: false,
  elapsedMs: 0,
  deadlineRemainingMs: Number.POSITIVE_INFINITY,
  previousDelayMs: undefined,
};
const random = () => new SeededRandom(42);

describe('RetryPolicy.decide', () => {
  it('pins its defaults', () => {
    expect(RETRY_DEFAULTS).toEqual({ maxAttempts: 3, maxRetryAfterMs: 300_000, hintJitter: 0.2, minAttemptTimeMs: 1 });
  });

  it('each step has its own reason', () => {
    const p = new RetryPolicy();
    const r = random();
    expect(p.decide({ ...base, classification: { ...retryable, dontRetry: true } }, r)).toMatchObject({
      retry: false,
      reason: 'dont-retry',
    });
    expect(p.decide({ ...base, classification: { outcome: 'failed', retryable: false } }, r)).toMatchObject({
      retry: false,
      reason: 'not-retryable',
    });
    expect(p.decide({ ...base, idempotent: false }, r)).toMatchObject({ retry: false, reason: 'not-idempotent' });
    expect(p.decide({ ...base, attempt: 3 }, r)).toMatchObject({ retry: false, reason: 'max-attempts' });
    expect(new RetryPolicy({ maxElapsedMs: 100 }).decide({ ...base, elapsedMs: 100 }, r)).toMatchObject({
      retry: false,
      reason: 'max-elapsed',
    });
    expect(p.decide({ ...base, deadlineRemainingMs: 0 }, r)).toMatchObject({ retry: false, reason: 'deadline' });
    expect(p.decide({ ...base, admit: () => 'budget' }, r)).toMatchObject({ retry: false, reason: 'budget' });
    expect(p.decide({ ...base, classification: { ...retryable, hintMs: 400_000 } }, r)).toEqual({
      retry: false,
      reason: 'hint-too-long',
      retryAfterMs: 400_000,
    });
  });

  it('backoffStep sets the delay’s step, attempt still counts toward maxAttempts', () => {
    const p = new RetryPolicy({ maxAttempts: 4, backoff: { baseMs: 100, factor: 2, jitter: 'none' } });
    expect(p.decide({ ...base, attempt: 3 }, random())).toMatchObject({ retry: true, backoffMs: 400 });
    expect(p.decide({ ...base, attempt: 3, backoffStep: 1 }, random())).toMatchObject({ retry: true, backoffMs: 100 });
    expect(p.decide({ ...base, attempt: 4, backoffStep: 1 }, random())).toMatchObject({ retry: false, reason: 'max-attempts' });
  });

  it('a failed outcome of a non-idempotent call may be retried; unknown only through verify', () => {
    const p = new RetryPolicy();
    expect(
      p.decide({ ...base, idempotent: false, classification: { outcome: 'failed', retryable: true } }, random()),
    ).toMatchObject({
      retry: true,
      verify: false,
    });
    expect(p.decide({ ...base, idempotent: false, verifiable: true }, random())).toMatchObject({ retry: true, verify: true });
  });

  it('a hint is a minimum, jittered upward by at most 20%', () => {
    const p = new RetryPolicy({ backoff: { baseMs: 10, jitter: 'none' } });
    for (let seed = 0; seed < 200; seed++) {
      const d = p.decide({ ...base, classification: { ...retryable, hintMs: 1000 } }, new SeededRandom(seed));
      if (!d.retry) throw new Error('expected a retry');
      expect(d.delayMs).toBeGreaterThanOrEqual(1000);
      expect(d.delayMs).toBeLessThanOrEqual(1200);
    }
  });

  it('regression: the upward hint jitter is clamped by maxRetryAfterMs (Retry-After: 2, maxRetryAfterMs 2000 sleeps 2000 ms)', () => {
    const p = new RetryPolicy({ maxRetryAfterMs: 2_000, backoff: { baseMs: 10, capMs: 20 } });
    for (let seed = 0; seed < 200; seed++) {
      const d = p.decide({ ...base, classification: { ...retryable, hintMs: 2_000 } }, new SeededRandom(seed));
      expect(d).toMatchObject({ retry: true, delayMs: 2_000, hintMs: 2_000 });
    }
  });

  it('property: a hint within maxRetryAfterMs leads to a wait within [hint, max(backoff, maxRetryAfterMs)]', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer(),
        (max, f, seed) => {
          const hintMs = Math.floor(max * f);
          const p = new RetryPolicy({ maxRetryAfterMs: max, hintJitter: 1 });
          const d = p.decide({ ...base, classification: { ...retryable, hintMs } }, new SeededRandom(seed));
          if (!d.retry) throw new Error('expected a retry');
          expect(d.delayMs).toBeGreaterThanOrEqual(hintMs);
          expect(d.delayMs).toBeLessThanOrEqual(Math.max(d.backoffMs, max));
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('a hint longer than the time left ends retrying now, carrying retryAfterMs', () => {
    const p = new RetryPolicy();
    const d = p.decide({ ...base, deadlineRemainingMs: 500, classification: { ...retryable, hintMs: 2000 } }, random());
    expect(d).toEqual({ retry: false, reason: 'hint-too-long', retryAfterMs: 2000 });
  });

  it('a backoff that would end past the deadline is not started: the call stops now', () => {
    const p = new RetryPolicy({ backoff: { baseMs: 10_000, jitter: 'none' } });
    expect(p.decide({ ...base, deadlineRemainingMs: 300 }, random())).toEqual({
      retry: false,
      reason: 'deadline',
      retryAfterMs: undefined,
    });
    expect(
      new RetryPolicy({ maxElapsedMs: 300, backoff: { baseMs: 10_000, jitter: 'none' } }).decide(base, random()),
    ).toMatchObject({
      retry: false,
      reason: 'max-elapsed',
    });
    expect(p.decide({ ...base, deadlineRemainingMs: 10_002 }, random())).toMatchObject({ retry: true, delayMs: 10_000 });
  });

  it('property: never retries past maxAttempts, and no sleep ends after the deadline or maxElapsedMs', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 20 }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 1e6, noNaN: true }),
        fc.double({ min: 0, max: 2e6, noNaN: true }),
        fc.option(fc.double({ min: 0, max: 1e6, noNaN: true }), { nil: undefined }),
        fc.integer(),
        (maxAttempts, attempt, elapsed, maxElapsedMs, remaining, hintMs, seed) => {
          const p = new RetryPolicy({ maxAttempts, maxElapsedMs });
          const d = p.decide(
            { ...base, attempt, elapsedMs: elapsed, deadlineRemainingMs: remaining, classification: { ...retryable, hintMs } },
            new SeededRandom(seed),
          );
          if (d.retry) {
            expect(attempt).toBeLessThan(maxAttempts);
            expect(d.delayMs).toBeLessThanOrEqual(remaining);
            expect(elapsed + d.delayMs).toBeLessThanOrEqual(maxElapsedMs);
            expect(d.delayMs).toBeGreaterThanOrEqual(0);
            if (hintMs !== undefined) expect(d.delayMs).toBeGreaterThanOrEqual(hintMs);
          }
        },
      ),
      { numRuns: 5_000 },
    );
  });

  it('property: non-retryable errors are never retried', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('failed', 'unknown' as const),
        fc.boolean(),
        fc.boolean(),
        (outcome, idempotent, verifiable) => {
          const d = new RetryPolicy().decide(
            { ...base, idempotent, verifiable, classification: { outcome, retryable: false } },
            random(),
          );
          expect(d.retry).toBe(false);
        },
      ),
    );
  });

  it('unbounded retrying must be written explicitly and bounded in time', () => {
    expect(() => new RetryPolicy({ maxAttempts: Number.POSITIVE_INFINITY })).toThrow('finite `maxElapsedMs`');
    expect(new RetryPolicy({ maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 60_000 }).maxAttempts).toBe(
      Number.POSITIVE_INFINITY,
    );
    expect(() => new RetryPolicy({ maxAttempts: 0 })).toThrow('`maxAttempts` to be an integer ≥ 1, got 0');
    expect(() => new RetryPolicy({ maxAttempts: -3, hintJitter: 2 })).toThrow(/maxAttempts[\s\S]*hintJitter/);
  });

  it('presets are valid and shaped for their audience', () => {
    const i = new RetryPolicy(interactive);
    const b = new RetryPolicy(background);
    expect(i.maxAttempts).toBeLessThan(b.maxAttempts);
    expect(i.backoff.capMs).toBeLessThan(b.backoff.capMs);
    expect(i.maxElapsedMs).toBeLessThan(b.maxElapsedMs);
    expect(b.backoff.floorMs).toBe(1000);
  });
});

describe('RetryPolicy.decide — system limits are asked last', () => {
  it('a retry stopped by its delay never spends a budget token', () => {
    let asked = 0;
    const admit = () => {
      asked++;
      return undefined;
    };
    const p = new RetryPolicy();
    expect(p.decide({ ...base, admit, classification: { ...retryable, hintMs: 400_000 } }, random())).toMatchObject({
      reason: 'hint-too-long',
    });
    expect(p.decide({ ...base, admit, deadlineRemainingMs: 0 }, random())).toMatchObject({ reason: 'deadline' });
    expect(asked).toBe(0);
    expect(p.decide({ ...base, admit }, random())).toMatchObject({ retry: true });
    expect(asked).toBe(1);
  });
});
