import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { PACER_DEFAULTS, Pacer, type PacerSignal } from '../../src/policies/pacer.js';

/** A burst of `answers` requests sent at 0 and answered together at `at`, the first `served` ok. */
function burst(pacer: Pacer, at: number, answers: number, served: number): void {
  for (let i = 0; i < answers; i++) pacer.onResult(at, i < served ? 'ok' : 'rejected', undefined, 0);
}

describe('Pacer', () => {
  it('defaults are pinned', () => {
    expect(PACER_DEFAULTS).toEqual({
      decrease: 0.85,
      probeGain: 1.5,
      recoveryMs: 1_000,
      quietMs: 2_000,
      windowMs: 500,
      buckets: 10,
      maxSpacingMs: 1_000,
      paceFirstAttempts: false,
    });
    const p = new Pacer();
    expect([
      p.decrease,
      p.probeGain,
      p.recoveryMs,
      p.quietMs,
      p.windowMs,
      p.buckets,
      p.maxSpacingMs,
      p.paceFirstAttempts,
    ]).toEqual([0.85, 1.5, 1_000, 2_000, 500, 10, 1_000, false]);
  });

  it('rejects bad options, listing every problem with its value', () => {
    try {
      new Pacer({ decrease: 1, probeGain: 0.5, recoveryMs: 0, buckets: 0, paceFirstAttempts: 'yes', rate: 100 } as never);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const text = (error as InvalidOptionsError).problems.join('\n');
      for (const fragment of [
        '`rate`',
        '`decrease`',
        '`probeGain`',
        '0.5',
        '`recoveryMs`',
        '`buckets`',
        '`paceFirstAttempts`',
        '"yes"',
      ]) {
        expect(text).toContain(fragment);
      }
    }
  });

  it('costs nothing while the callee is healthy: no throttling, no wait, no booking', () => {
    const p = new Pacer();
    for (let t = 0; t < 10_000; t += 7) p.onResult(t, 'ok', undefined, t - 30);
    expect(p.throttling(10_000)).toBe(false);
    expect([p.reserve(10_000), p.reserve(10_000), p.reserve(10_000)]).toEqual([0, 0, 0]);
    expect(p.paced).toBe(0);
    expect(p.rate(10_000)).toBeGreaterThan(130); // it measured 1 per 7 ms meanwhile
  });

  it('a rejection starts throttling at the measured delivery rate, staggering simultaneous callers', () => {
    const p = new Pacer();
    burst(p, 100, 100, 10); // the herd's first slot: 10 of 100 served in 100 ms
    expect(p.throttling(100)).toBe(true);
    expect(p.rate(100)).toBeCloseTo(100, 9);
    expect([0, 1, 2, 3, 4].map(() => p.reserve(100))).toEqual([0, 10, 20, 30, 40]);
    expect(p.paced).toBe(4);
    // Later callers queue behind the booked slots.
    expect(p.reserve(120)).toBe(30);
  });

  it('learns any scale: k callers at one instant get slots latency/served apart (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 5, max: 2_000 }),
        fc.integer({ min: 1, max: 50 }),
        (served, rejected, latency, k) => {
          const p = new Pacer();
          burst(p, latency, served + rejected, served);
          // …never further apart than maxSpacingMs (the floor on the learned rate).
          const spacing = Math.min(latency / served, p.maxSpacingMs);
          for (let i = 0; i < k; i++) {
            if (Math.abs(p.reserve(latency) - i * spacing) > 1e-6 * (1 + i * spacing)) return false;
          }
          return true;
        },
      ),
    );
  });

  it('a wait hint puts the first slot no earlier than now + hint', () => {
    const p = new Pacer();
    for (let t = 0; t < 500; t += 10) p.onResult(t + 20, 'ok', undefined, t); // 100/s delivered
    p.onResult(520, 'rejected', 3_000, 500);
    expect(p.throttling(520)).toBe(true);
    expect(p.reserve(520)).toBe(3_000);
    const second = p.reserve(520);
    expect(second).toBeGreaterThan(3_000);
    expect(second).toBeLessThan(3_020);
    // A success carrying a hint (remaining 0, reset in 1 s) is a hint too.
    const q = new Pacer();
    q.onResult(50, 'ok', 1_000, 0);
    expect(q.throttling(50)).toBe(true);
    expect(q.reserve(50)).toBe(1_000);
  });

  it('timeouts count like rejections', () => {
    const p = new Pacer();
    p.onResult(100, 'timeout', undefined, 0);
    expect(p.throttling(100)).toBe(true);
  });

  it('stops throttling after quietMs without rejection, once the queue has drained', () => {
    const p = new Pacer();
    burst(p, 100, 20, 10);
    for (let i = 0; i < 30; i++) p.reserve(100); // booked until 100 + 30 × 10 ms
    expect(p.throttling(2_099)).toBe(true); // quiet for 1 999 ms
    expect(p.throttling(2_100)).toBe(false);
    expect(p.reserve(2_100)).toBe(0);
    const busy = new Pacer({ quietMs: 100 });
    burst(busy, 100, 20, 10);
    for (let i = 0; i < 30; i++) busy.reserve(100);
    expect(busy.throttling(300)).toBe(true); // quiet, but callers are still queued until 400
    expect(busy.throttling(400)).toBe(false);
  });

  it('cuts the rate when a paced request is still rejected, once per round', () => {
    const p = new Pacer();
    burst(p, 100, 100, 10); // throttling at 100/s
    for (let i = 0; i < 10; i++) p.reserve(100); // slots 100 … 190
    p.onResult(150, 'rejected', undefined, 50); // sent before throttling began: no cut
    expect(p.cuts).toBe(0);
    p.onResult(250, 'rejected', undefined, 150); // a paced request: the rate is too high
    expect(p.cuts).toBe(1);
    expect(p.rate(250)).toBeCloseTo(85, 6); // β × min(rate, D̂) = 0.85 × 100
    const next = p.reserve(250); // the queue ends at 200; new slots at the new spacing
    expect(next).toBe(0);
    expect(p.reserve(250)).toBeCloseTo(1_000 / 85, 6);
    p.onResult(260, 'rejected', undefined, 190); // booked before the cut: no second cut
    expect(p.cuts).toBe(1);
    p.onResult(300, 'rejected', undefined, 262); // sent after the cut's backlog: cuts again
    expect(p.cuts).toBe(2);
  });

  it('climbs back to the cut level within recoveryMs and probes beyond it, capped by probeGain × D̂', () => {
    const p = new Pacer({ quietMs: 10_000 });
    burst(p, 100, 100, 10);
    p.reserve(100);
    p.onResult(200, 'rejected', undefined, 150);
    expect(p.rate(200)).toBeCloseTo(85, 6);
    expect(p.rate(700)).toBeGreaterThan(85);
    expect(p.rate(1_200)).toBeCloseTo(100, 6); // back at W after K = 1 s
    expect(p.rate(2_200)).toBeGreaterThan(100);
    expect(p.rate(2_200)).toBeLessThanOrEqual(150 + 1e-9); // probeGain × D̂
  });

  it('reserve never returns NaN, a negative or an unbounded wait; rate stays positive (property)', () => {
    const step = fc.record({
      dt: fc.integer({ min: 0, max: 700 }),
      signal: fc.constantFrom<PacerSignal | 'reserve'>('ok', 'rejected', 'timeout', 'reserve', 'reserve'),
      latency: fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: undefined }),
      hint: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const p = new Pacer();
        let now = 0;
        let reservations = 0;
        for (const { dt, signal, latency, hint } of steps) {
          now += dt;
          if (signal === 'reserve') {
            const wait = p.reserve(now);
            reservations++;
            // The rate never drops below 1 / maxSpacingMs, and no hint exceeds 5 s.
            if (!(wait >= 0 && wait <= 5_000 + reservations * p.maxSpacingMs)) return false;
          } else {
            p.onResult(now, signal, hint, latency === undefined ? undefined : now - latency);
          }
          const rate = p.rate(now);
          if (rate !== undefined && !(rate > 0 && Number.isFinite(rate))) return false;
          if (p.throttling(now) && rate! < 1_000 / p.maxSpacingMs - 1e-9) return false;
        }
        return true;
      }),
    );
  });

  it('only successes: never throttles, never waits (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 500 })), { maxLength: 200 }),
        (steps) => {
          const p = new Pacer();
          let now = 0;
          for (const [dt, latency] of steps) {
            now += dt;
            p.onResult(now, 'ok', undefined, now - latency);
            if (p.reserve(now) !== 0 || p.throttling(now)) return false;
          }
          return true;
        },
      ),
    );
  });
});

describe('Pacer.cancelLastReservation', () => {
  it('gives the latest slot back, so the queue does not run ahead of real sends (review regression)', () => {
    const pacer = new Pacer();
    for (let i = 0; i < 10; i++) pacer.onResult(100, 'ok', undefined, 0);
    for (let i = 0; i < 20; i++) pacer.onResult(100, 'rejected', undefined, 0);
    const first = pacer.reserve(100);
    const second = pacer.reserve(100);
    expect(second).toBeGreaterThan(first);
    expect(pacer.cancelLastReservation()).toBe(true);
    expect(pacer.cancelLastReservation()).toBe(false); // only the latest, once
    expect(pacer.reserve(100)).toBe(second); // the same slot is booked again
  });
});
