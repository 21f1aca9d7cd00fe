import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { InvalidOptionsError } from '../../src/options/validate.js';
import {
  BREAKER_ALLOWED,
  BREAKER_REJECTED,
  type BreakerState,
  CIRCUIT_BREAKER_DEFAULTS,
  CircuitBreaker,
  DEFAULT_BREAKER_FAILURE_PREDICATE,
} from '../../src/policies/circuit-breaker.js';
import { SeededRandom } from '../../src/random/random.js';

const fixed = (value: number) => ({ next: () => value });
const noJitter = { breakJitter: 0 } as const;

/** Trips a consecutive-mode breaker at `now`. */
function trip(b: CircuitBreaker, now: number): void {
  for (let i = 0; i < b.threshold; i++) b.onFailure(now, b.tryAcquire(now));
}

describe('CircuitBreaker', () => {
  it('defaults are pinned', () => {
    expect(CIRCUIT_BREAKER_DEFAULTS).toEqual({
      mode: 'consecutive',
      threshold: 5,
      failureRatio: 0.5,
      windowMs: 10_000,
      buckets: 10,
      minThroughput: 20,
      halfOpenProbes: 1,
      successesToClose: 1,
      breakMs: 5_000,
      breakGrowth: 2,
      maxBreakMs: 60_000,
      breakJitter: 0.1,
      isFailure: DEFAULT_BREAKER_FAILURE_PREDICATE,
    });
    const b = new CircuitBreaker({}, fixed(0.5));
    expect([b.mode, b.threshold, b.halfOpenProbes, b.breakMs, b.maxBreakMs, b.breakJitter]).toEqual([
      'consecutive',
      5,
      1,
      5_000,
      60_000,
      0.1,
    ]);
  });

  it('rejects bad options, listing every problem with its value', () => {
    try {
      new CircuitBreaker(
        {
          mode: 'sometimes',
          threshold: 0,
          failureRatio: 0,
          halfOpenProbes: 1.5,
          breakMs: 10_000,
          maxBreakMs: 1_000,
          nope: 1,
        } as never,
        fixed(0),
      );
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const text = (error as InvalidOptionsError).problems.join('\n');
      for (const fragment of [
        '`nope`',
        '"sometimes"',
        '`threshold`',
        '`failureRatio`',
        '`halfOpenProbes`',
        '1.5',
        'breakMs 10000 > maxBreakMs 1000',
      ]) {
        expect(text).toContain(fragment);
      }
    }
    expect(() => new CircuitBreaker({}, undefined as never)).toThrow(/Random/);
  });

  it('default failure predicate: timeouts and retryable errors count, no 4xx does', () => {
    const c = (x: Partial<Classification>): Classification => ({ outcome: 'failed', retryable: false, ...x });
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ retryable: true, status: 503 }))).toBe(true);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ retryable: true, status: 500, outcome: 'unknown' }))).toBe(true);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ retryable: true, code: 'ECONNREFUSED' }))).toBe(true);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ timeout: true, outcome: 'unknown' }))).toBe(true);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ status: 404 }))).toBe(false);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ status: 400 }))).toBe(false);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ retryable: true, status: 429, throttled: true }))).toBe(false);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ retryable: true, status: 408 }))).toBe(false);
    expect(DEFAULT_BREAKER_FAILURE_PREDICATE(c({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))).toBe(false);
  });

  it('consecutive: opens on exactly the threshold-th failure in a row; a success resets the count', () => {
    const b = new CircuitBreaker({ threshold: 3, ...noJitter }, fixed(0));
    b.onFailure(0, b.tryAcquire(0));
    b.onFailure(0, b.tryAcquire(0));
    b.onSuccess(0, b.tryAcquire(0));
    b.onFailure(0, b.tryAcquire(0));
    b.onFailure(0, b.tryAcquire(0));
    expect(b.state(0)).toBe('closed');
    b.onFailure(1, b.tryAcquire(1));
    expect(b.state(1)).toBe('open');
    expect(b.opens).toBe(1);
  });

  it('neutral outcomes neither count nor reset', () => {
    const b = new CircuitBreaker({ threshold: 2 }, fixed(0));
    b.onFailure(0, b.tryAcquire(0));
    const counted = b.onError(0, b.tryAcquire(0), { outcome: 'failed', retryable: false, status: 404 });
    expect(counted).toBe(false);
    expect(b.state(0)).toBe('closed');
    expect(b.onError(0, b.tryAcquire(0), { outcome: 'failed', retryable: true, status: 503 })).toBe(true);
    expect(b.state(0)).toBe('open');
  });

  it('consecutive mode opens at the right moment (property, against a model)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(fc.constantFrom('ok', 'fail', 'neutral'), { maxLength: 60 }),
        (threshold, outcomes) => {
          const b = new CircuitBreaker({ threshold }, fixed(0));
          let run = 0;
          for (const o of outcomes) {
            const permit = b.tryAcquire(0);
            if (permit === BREAKER_REJECTED) return run >= threshold;
            if (o === 'ok') {
              b.onSuccess(0, permit);
              run = 0;
            } else if (o === 'fail') {
              b.onFailure(0, permit);
              run++;
            } else b.onNeutral(0, permit);
            if ((b.state(0) === 'open') !== run >= threshold) return false;
          }
          return true;
        },
      ),
    );
  });

  it('ratio mode opens when calls ≥ minThroughput and failures/calls ≥ failureRatio (property, against a model)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 30 }),
        fc.constantFrom(0.1, 0.25, 0.5, 0.9, 1),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 400 }), fail: fc.boolean() }), { maxLength: 150 }),
        (minThroughput, failureRatio, events) => {
          const b = new CircuitBreaker({ mode: 'ratio', minThroughput, failureRatio, windowMs: 1_000, buckets: 10 }, fixed(0));
          const log: Array<[number, boolean]> = [];
          let now = 0;
          for (const { dt, fail } of events) {
            now += dt;
            const permit = b.tryAcquire(now);
            if (permit === BREAKER_REJECTED) return true; // opened earlier and checked then
            if (fail) b.onFailure(now, permit);
            else b.onSuccess(now, permit);
            log.push([now, fail]);
            const from = (Math.floor(now / 100) - 9) * 100;
            const inWindow = log.filter(([t]) => t >= from);
            const failures = inWindow.filter(([, f]) => f).length;
            const shouldOpen = fail && inWindow.length >= minThroughput && failures >= failureRatio * inWindow.length;
            if ((b.state(now) === 'open') !== shouldOpen) return false;
            if (shouldOpen) return true;
          }
          return true;
        },
      ),
    );
  });

  it('ratio mode ignores a high ratio below the minimum throughput', () => {
    const b = new CircuitBreaker({ mode: 'ratio', minThroughput: 10 }, fixed(0));
    for (let i = 0; i < 9; i++) b.onFailure(i, b.tryAcquire(i));
    expect(b.state(9)).toBe('closed');
    b.onFailure(9, b.tryAcquire(9));
    expect(b.state(9)).toBe('open');
  });

  it('open: rejects and reports the time left until half-open', () => {
    const b = new CircuitBreaker({ threshold: 1, ...noJitter }, fixed(0));
    b.onFailure(1_000, b.tryAcquire(1_000));
    expect(b.tryAcquire(1_000)).toBe(BREAKER_REJECTED);
    expect(b.retryAfterMs(1_000)).toBe(5_000);
    expect(b.retryAfterMs(5_999)).toBe(1);
    expect(b.tryAcquire(5_999)).toBe(BREAKER_REJECTED);
    expect(b.rejected).toBe(2);
    const probe = b.tryAcquire(6_000);
    expect(probe).toBeGreaterThan(0);
    expect(b.state(6_000)).toBe('half-open');
    expect(b.retryAfterMs(6_000)).toBeUndefined();
  });

  it('half-open: at most halfOpenProbes probes; neutral ends release a slot; successes close it', () => {
    const b = new CircuitBreaker({ threshold: 1, halfOpenProbes: 2, successesToClose: 2, ...noJitter }, fixed(0));
    b.onFailure(0, b.tryAcquire(0));
    const p1 = b.tryAcquire(5_000);
    const p2 = b.tryAcquire(5_000);
    expect([p1 > 0, p2 > 0, b.tryAcquire(5_000)]).toEqual([true, true, BREAKER_REJECTED]);
    b.onNeutral(5_001, p1);
    const p3 = b.tryAcquire(5_002);
    expect(p3).toBeGreaterThan(0);
    b.onSuccess(5_003, p2);
    expect(b.state(5_003)).toBe('half-open');
    b.onSuccess(5_004, p3);
    expect(b.state(5_004)).toBe('closed');
    expect(b.tryAcquire(5_004)).toBe(BREAKER_ALLOWED);
  });

  it('a failed probe re-opens with a longer break, growing by breakGrowth up to maxBreakMs', () => {
    const b = new CircuitBreaker({ threshold: 1, breakMs: 1_000, breakGrowth: 3, maxBreakMs: 20_000, ...noJitter }, fixed(0));
    b.onFailure(0, b.tryAcquire(0));
    const breaks = [b.lastBreakMs];
    let now = 0;
    for (let i = 0; i < 5; i++) {
      now += b.lastBreakMs;
      b.onFailure(now, b.tryAcquire(now));
      breaks.push(b.lastBreakMs);
    }
    expect(breaks).toEqual([1_000, 3_000, 9_000, 20_000, 20_000, 20_000]);
    // Closing resets the growth.
    now += b.lastBreakMs;
    b.onSuccess(now, b.tryAcquire(now));
    trip(b, now);
    expect(b.lastBreakMs).toBe(1_000);
  });

  it('late results are ignored: calls admitted before opening, and probes of an earlier half-open period', () => {
    const b = new CircuitBreaker({ threshold: 1, halfOpenProbes: 2, ...noJitter }, fixed(0));
    const early = b.tryAcquire(0);
    b.onFailure(0, b.tryAcquire(0)); // opens
    b.onSuccess(1, early); // a call from before the opening: no effect
    expect(b.state(1)).toBe('open');
    const old1 = b.tryAcquire(5_000);
    const old2 = b.tryAcquire(5_000);
    b.onFailure(5_001, old1); // re-opens, break 10 s
    b.onSuccess(5_002, old2); // a probe of the previous half-open period: ignored
    expect(b.state(5_002)).toBe('open');
    const fresh = b.tryAcquire(15_001);
    expect(fresh).toBeGreaterThan(old2);
    b.onSuccess(15_002, old2); // still stale
    expect(b.state(15_002)).toBe('half-open');
    expect(b.probes).toBe(1);
    b.onSuccess(15_003, fresh);
    expect(b.state(15_003)).toBe('closed');
  });

  it('reports every state change, open → half-open at the end of the break', () => {
    const changes: Array<[BreakerState, BreakerState, number]> = [];
    const b = new CircuitBreaker(
      { threshold: 1, ...noJitter, onStateChange: (from, to, at) => changes.push([from, to, at]) },
      fixed(0),
    );
    b.onFailure(10, b.tryAcquire(10));
    const probe = b.tryAcquire(7_000);
    b.onSuccess(7_001, probe);
    expect(changes).toEqual([
      ['closed', 'open', 10],
      ['open', 'half-open', 5_010],
      ['half-open', 'closed', 7_001],
    ]);
  });

  it('half-open never admits more than halfOpenProbes at once (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 3 }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 3_000 }), op: fc.constantFrom('acquire', 'ok', 'fail', 'neutral') }), {
          maxLength: 200,
        }),
        fc.integer(),
        (probes, successesToClose, ops, seed) => {
          const b = new CircuitBreaker(
            { threshold: 2, halfOpenProbes: probes, successesToClose, breakMs: 1_000, maxBreakMs: 4_000 },
            new SeededRandom(seed),
          );
          const held: number[] = [];
          let now = 0;
          for (const { dt, op } of ops) {
            now += dt;
            if (op === 'acquire') {
              const permit = b.tryAcquire(now);
              if (permit !== BREAKER_REJECTED) held.push(permit);
            } else if (held.length > 0) {
              const permit = held.shift() as number;
              if (op === 'ok') b.onSuccess(now, permit);
              else if (op === 'fail') b.onFailure(now, permit);
              else b.onNeutral(now, permit);
            }
            if (b.probes > probes || b.probes < 0) return false;
            // Probes handed out in the current half-open period and not yet reported.
            if (b.state(now) === 'half-open') {
              const current = Math.max(0, ...held);
              if (held.filter((p) => p === current && p > 0).length > probes) return false;
            }
          }
          return true;
        },
      ),
    );
  });

  it('an open breaker lets nothing through before its break ends (property)', () => {
    fc.assert(
      fc.property(
        fc.record({
          breakMs: fc.integer({ min: 0, max: 10_000 }),
          breakGrowth: fc.constantFrom(1, 1.5, 2, 4),
          breakJitter: fc.constantFrom(0, 0.1, 0.5),
        }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 5_000 }), fail: fc.boolean() }), { maxLength: 120 }),
        fc.integer(),
        (opts, steps, seed) => {
          let openUntil = Number.NEGATIVE_INFINITY;
          const b: CircuitBreaker = new CircuitBreaker(
            {
              threshold: 1,
              maxBreakMs: 30_000,
              ...opts,
              onStateChange: (_from, to, at) => {
                if (to === 'open') openUntil = at + b.lastBreakMs;
              },
            },
            new SeededRandom(seed),
          );
          let now = 0;
          for (const { dt, fail } of steps) {
            now += dt;
            const permit = b.tryAcquire(now);
            if (permit === BREAKER_REJECTED) continue;
            if (now < openUntil) return false;
            if (fail) b.onFailure(now, permit);
            else b.onSuccess(now, permit);
          }
          return true;
        },
      ),
    );
  });

  it('break durations: the k-th opening in a row lasts breakMs × growth^(k−1) ± jitter, capped (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000 }),
        fc.constantFrom(1, 1.5, 2, 3),
        fc.integer({ min: 5_000, max: 60_000 }),
        fc.constantFrom(0, 0.1, 0.3),
        fc.integer(),
        (breakMs, breakGrowth, maxBreakMs, breakJitter, seed) => {
          const b = new CircuitBreaker({ threshold: 1, breakMs, breakGrowth, maxBreakMs, breakJitter }, new SeededRandom(seed));
          let now = 0;
          b.onFailure(now, b.tryAcquire(now));
          let previousCeiling = 0;
          for (let k = 1; k <= 12; k++) {
            const ceiling = Math.min(maxBreakMs, breakMs * breakGrowth ** (k - 1));
            const d = b.lastBreakMs;
            if (!(d >= ceiling * (1 - breakJitter) - 1e-9 && d <= Math.min(maxBreakMs, ceiling * (1 + breakJitter)) + 1e-9))
              return false;
            if (ceiling < previousCeiling || d > maxBreakMs) return false;
            previousCeiling = ceiling;
            now += d;
            b.onFailure(now, b.tryAcquire(now)); // the probe fails
          }
          return true;
        },
      ),
    );
  });
});
