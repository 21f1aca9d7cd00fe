import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import {
  ADAPTIVE_CONCURRENCY_DEFAULTS,
  AdaptiveConcurrencyLimit,
  LIMIT_REJECTED,
} from '../../src/policies/adaptive-concurrency.js';
import { SeededRandom } from '../../src/random/random.js';

/** The probes' jitter draws from this named seed. */
const random = () => new SeededRandom(14);

/**
 * A saturated closed loop on virtual time: callers keep as many attempts in flight as the
 * limit admits; a callee with `capacity` workers answers each after
 * `serviceMs × max(1, inFlight / capacity)` (queueing). Steps of 1 ms.
 */
function saturate(limiter: AdaptiveConcurrencyLimit, capacityAt: (t: number) => number, untilMs: number, serviceMs = 10) {
  const running: { start: number; end: number; partition: number }[] = [];
  const limits: number[] = [];
  for (let t = 0; t < untilMs; t++) {
    for (let i = running.length - 1; i >= 0; i--) {
      const r = running[i]!;
      if (r.end <= t) {
        running.splice(i, 1);
        limiter.release(r.partition, r.start, t, 'ok');
      }
    }
    for (;;) {
      const p = limiter.tryAcquire(t);
      if (p === LIMIT_REJECTED) break;
      const latency = serviceMs * Math.max(1, (running.length + 1) / capacityAt(t));
      running.push({ start: t, end: t + latency, partition: p });
    }
    limits.push(limiter.limit);
  }
  return limits;
}

describe('AdaptiveConcurrencyLimit', () => {
  it('defaults are pinned', () => {
    expect(ADAPTIVE_CONCURRENCY_DEFAULTS).toEqual({
      initialLimit: 20,
      minLimit: 1,
      maxLimit: 1_000,
      windowSamples: 50,
      percentile: 0.5,
      tolerance: 0.1,
      probeIntervalMs: 30_000,
      probeJitter: 0.1,
      probeConcurrency: 3,
      maxQueue: 0,
      queueTimeoutMs: 1_000,
    });
  });

  it('rejects bad options, every problem at once', () => {
    try {
      new AdaptiveConcurrencyLimit(
        {
          minLimit: 10,
          maxLimit: 5,
          windowSamples: 0,
          tolerance: -1,
          partitions: { live: 0.9, batch: 0.5 },
          probeJitter: 2,
          speed: 1,
        } as never,
        'dice' as never,
      );
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const text = (error as InvalidOptionsError).problems.join('\n');
      for (const f of ['`speed`', '10 > 5', '`windowSamples`', '`tolerance`', 'sum to ≤ 1, got 1.4', '`probeJitter`', 'a Random'])
        expect(text).toContain(f);
    }
  });

  it('starts by probing the no-load latency at probeConcurrency', () => {
    const l = new AdaptiveConcurrencyLimit({}, random());
    expect([l.tryAcquire(0), l.tryAcquire(0), l.tryAcquire(0), l.tryAcquire(0)]).toEqual([0, 0, 0, LIMIT_REJECTED]);
    expect(l.probing).toBe(true);
    expect(l.rejected).toBe(1);
  });

  it('learns a callee’s capacity from latency alone, and follows it when it halves and doubles', () => {
    const capacity = (t: number) => (t < 4_000 ? 40 : t < 8_000 ? 20 : 40);
    const limits = saturate(new AdaptiveConcurrencyLimit({}, random()), capacity, 12_000);
    // Just above the capacity (a small queue keeps every worker busy), well below 2×, in each phase.
    for (const [from, to, c] of [
      [2_000, 4_000, 40],
      [5_000, 8_000, 20],
      [9_000, 12_000, 40],
    ] as const) {
      const phase = limits.slice(from, to);
      expect(Math.min(...phase)).toBeGreaterThanOrEqual(c);
      expect(Math.max(...phase)).toBeLessThanOrEqual(1.6 * c);
    }
  });

  it('jitters each wait for the next no-load measurement through the injected Random: callers started together drift apart', () => {
    // When does each limiter start its second probe (the first is at t = 0)?
    const secondProbeAt = (seed: number) => {
      const l = new AdaptiveConcurrencyLimit({ windowSamples: 5, probeIntervalMs: 30_000 }, new SeededRandom(seed));
      for (let t = 0; t < 40_000; t += 10) {
        const slot = l.tryAcquire(t);
        if (slot !== LIMIT_REJECTED) l.release(slot, t, t + 5, 'ok');
        if (t > 1_000 && l.probing) return t;
      }
      return Number.NaN;
    };
    const starts = [1, 2, 3, 4].map(secondProbeAt);
    for (const at of starts) {
      expect(at).toBeGreaterThanOrEqual(30_000);
      expect(at).toBeLessThan(33_100); // interval × (1 + 0.1 × u), after the first probe's few ms
    }
    expect(new Set(starts).size).toBe(4);
    expect(secondProbeAt(1)).toBe(starts[0]); // and the same seed gives the same time
  });

  it('does not grow while callers use less than half the limit', () => {
    const l = new AdaptiveConcurrencyLimit(
      { initialLimit: 20, windowSamples: 5, probeIntervalMs: Number.POSITIVE_INFINITY },
      random(),
    );
    // The first window is the probe.
    for (let i = 0; i < 5; i++) l.release(l.tryAcquire(i), i, i + 10, 'ok');
    expect(l.probing).toBe(false);
    // One attempt at a time, fast: no reason to allow more.
    for (let t = 100; t < 10_000; t += 20) l.release(l.tryAcquire(t), t, t + 10, 'ok');
    expect(l.limit).toBe(20);
  });

  it('backs off after a window with a timeout', () => {
    const l = new AdaptiveConcurrencyLimit(
      { initialLimit: 20, windowSamples: 5, probeIntervalMs: Number.POSITIVE_INFINITY },
      random(),
    );
    for (let i = 0; i < 5; i++) l.release(l.tryAcquire(i), i, i + 10, 'ok');
    const before = l.limit;
    for (let i = 0; i < 5; i++) l.release(l.tryAcquire(100), 100, 130 + 10 * i, i === 0 ? 'dropped' : 'ok');
    expect(l.limit).toBeLessThan(before);
  });

  it('partitions: each class keeps its share; a class may borrow what others leave', () => {
    const l = new AdaptiveConcurrencyLimit(
      {
        initialLimit: 10,
        windowSamples: 5,
        probeIntervalMs: Number.POSITIVE_INFINITY,
        partitions: { live: 0.9, batch: 0.1 },
      },
      random(),
    );
    const live = l.partitionIndex('live');
    const batch = l.partitionIndex('batch');
    // The probe first (no borrowing while the limit is held low to measure).
    for (let i = 0; i < 5; i++) l.release(l.tryAcquire(i, live), i, i + 10, 'ok');
    expect([l.probing, l.limit]).toEqual([false, 10]);
    // Batch borrows the whole limit while live is idle.
    const held: number[] = [];
    for (let i = 0; i < 10; i++) held.push(l.tryAcquire(0, batch));
    expect(held.every((p) => p === batch)).toBe(true);
    expect(l.tryAcquire(0, batch)).toBe(LIMIT_REJECTED);
    // Live still gets its 90 % (9 of 10) although the total is at the limit.
    let admitted = 0;
    while (l.tryAcquire(0, live) !== LIMIT_REJECTED) admitted++;
    expect(admitted).toBe(9);
    // No class, or an unknown one: only under the limit.
    expect(l.tryAcquire(0, l.partitionIndex(undefined))).toBe(LIMIT_REJECTED);
    expect(l.partitionIndex('nope')).toBe(l.partitionIndex(undefined));
  });

  it('property: in-flight count and limit stay within bounds under any sequence', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            dt: fc.integer({ min: 0, max: 200 }),
            op: fc.constantFrom('acquire', 'acquire', 'release'),
            latency: fc.integer({ min: 0, max: 500 }),
            sample: fc.constantFrom('ok', 'ok', 'dropped', 'ignore'),
            partition: fc.constantFrom(undefined, 'a', 'b'),
          }),
          { maxLength: 400 },
        ),
        (ops) => {
          const l = new AdaptiveConcurrencyLimit(
            {
              minLimit: 2,
              maxLimit: 40,
              initialLimit: 10,
              windowSamples: 3,
              probeIntervalMs: 1_000,
              partitions: { a: 0.5, b: 0.5 },
            },
            random(),
          );
          const held: { p: number; start: number }[] = [];
          let t = 0;
          for (const o of ops) {
            t += o.dt;
            if (o.op === 'acquire') {
              const p = l.tryAcquire(t, l.partitionIndex(o.partition));
              if (p !== LIMIT_REJECTED) held.push({ p, start: t });
            } else if (held.length > 0) {
              const h = held.shift()!;
              l.release(h.p, h.start, Math.max(t, h.start + o.latency), o.sample as 'ok');
            }
            expect(l.inFlight).toBe(held.length);
            expect(l.limit).toBeGreaterThanOrEqual(l.probing ? 1 : 2);
            expect(l.limit).toBeLessThanOrEqual(40);
            // Partitions may push the total past the limit only by their guaranteed shares.
            expect(l.inFlight).toBeLessThanOrEqual(2 * Math.max(l.limit, 10) + 2);
          }
        },
      ),
      { seed: 14_004 },
    );
  });
});
