import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveryRate } from '../../src/policies/delivery-rate.js';

describe('DeliveryRate', () => {
  it('knows nothing before a success', () => {
    const d = new DeliveryRate(1_000, 10);
    expect(d.rate(0)).toBeUndefined();
    d.record(100, 0, false);
    expect(d.rate(100)).toBeUndefined();
    expect(d.answerRate(100)).toBe(1 / 100);
  });

  it('one burst answered at one instant: successes over the flight time', () => {
    const d = new DeliveryRate(1_000, 10);
    for (let i = 0; i < 100; i++) d.record(100, 0, i < 10);
    expect(d.rate(100)! * 1000).toBeCloseTo(100, 9); // 10 per 100 ms
    expect(d.answerRate(100)! * 1000).toBeCloseTo(1_000, 9);
  });

  it('flightRate: one flight’s successes over the callee’s time, the path taken out', () => {
    const d = new DeliveryRate(1_000, 10);
    // 10 sent at 0, served by 100 ms workers that they reached 20 ms late and answered 20 ms
    // back: the flight form reads 10 per 140 ms, the callee served 10 per 100 ms.
    for (let i = 0; i < 10; i++) d.record(140, 0, true);
    expect(d.rate(140)! * 1000).toBeCloseTo(1000 / 14, 9);
    expect(d.flightRate(140, 40)! * 1000).toBeCloseTo(100, 9);
    expect(d.flightRate(140, 0)! * 1000).toBeCloseTo(1000 / 14, 9);
    // Never more than the successes in one ms.
    expect(d.flightRate(140, 500)! * 1000).toBeCloseTo(10_000, 9);
    expect(new DeliveryRate(1_000, 10).flightRate(0, 1)).toBeUndefined();
  });

  it('the earliest success (its send and its answer) and the fastest answer of any kind, within the window', () => {
    const d = new DeliveryRate(1_000, 10);
    expect(d.earliestServedSend(0)).toBeUndefined();
    expect(d.earliestServedAnswer(0)).toBeUndefined();
    expect(d.fastestLatency(0)).toBeUndefined();
    d.record(130, 10, false); // a rejection: no success, but the fastest answer so far (120 ms)
    d.record(150, 20, true);
    d.record(160, 5, true);
    d.record(400, 398, false); // a fast rejection: 2 ms
    expect(d.earliestServedSend(400)).toBe(5);
    expect(d.earliestServedAnswer(400)).toBe(150);
    expect(d.fastestLatency(400)).toBe(2);
    // Out of the window, forgotten; successes-only estimators read the successes' latency.
    expect(d.earliestServedSend(1_300)).toBeUndefined();
    expect(d.fastestLatency(1_300)).toBe(2);
    const lean = new DeliveryRate(1_000, 10, { answers: false });
    lean.record(130, 10, false);
    lean.record(150, 20, true);
    expect(lean.fastestLatency(150)).toBe(130);
  });

  it('a steady flow reads its own rate whatever the latency (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 5, max: 2_000 }), fc.integer({ min: 1, max: 800 }), (perSecond, latency) => {
        const d = new DeliveryRate(1_000, 10);
        const gap = 1_000 / perSecond;
        let last = 0;
        for (let sent = 0; sent < 5_000; sent += gap) {
          d.record(sent + latency, sent, true);
          last = sent + latency;
        }
        const measured = d.rate(last)! * 1000;
        // (n − 1) gaps over the spread: exact up to one gap of bucket-edge effect.
        return Math.abs(measured - perSecond) <= perSecond * 0.02 + 1;
      }),
    );
  });

  it('built without the answers’ extremes, it reads the same rate, peak and flight as with them, and no answer rate (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            gap: fc.double({ min: 0, max: 200, noNaN: true }),
            latency: fc.double({ min: 0, max: 500, noNaN: true }),
            ok: fc.boolean(),
          }),
          { maxLength: 200 },
        ),
        (answers) => {
          const full = new DeliveryRate(500, 10);
          const lean = new DeliveryRate(500, 10, { answers: false });
          let sent = 0;
          for (const a of answers) {
            sent += a.gap;
            const now = sent + a.latency;
            full.record(now, sent, a.ok);
            lean.record(now, sent, a.ok);
            if (lean.rate(now) !== full.rate(now)) return false;
            if (lean.peak(now, a.ok) !== full.peak(now, a.ok)) return false;
            if (lean.flightRate(now, 5) !== full.flightRate(now, 5) || lean.served(now) !== full.served(now)) return false;
            if (lean.answerRate(now) !== undefined || lean.earliestSend(now) !== undefined) return false;
          }
          return true;
        },
      ),
    );
  });

  it('answers bunched at slot ends are judged by when they were sent', () => {
    // 10 requests paced 10 ms apart per 100 ms slot, all answered at the end of their slot.
    const d = new DeliveryRate(1_000, 10);
    for (let slot = 1; slot <= 20; slot++) {
      for (let k = 0; k < 10; k++) d.record((slot + 1) * 100, slot * 100 + k * 10, true);
      const perSecond = d.rate((slot + 1) * 100)! * 1000;
      expect(perSecond).toBeGreaterThan(95);
      expect(perSecond).toBeLessThanOrEqual(100);
    }
  });

  it('peak keeps the best recent sample through an app-limited stretch, then forgets it', () => {
    const d = new DeliveryRate(1_000, 10);
    for (let i = 0; i < 10; i++) d.record(100, 0, true); // 100/s
    expect(d.peak(100)! * 1000).toBeCloseTo(100, 9);
    d.record(900, 850, true); // a lone success much later: D falls
    expect(d.rate(900)! * 1000).toBeLessThan(20);
    expect(d.peak(900)! * 1000).toBeCloseTo(100, 9);
    expect(d.peak(1_200)! * 1000).toBeCloseTo(20, 9); // the 100/s sample left the window: 1 per 50 ms flight
    expect(d.peak(5_000)).toBeUndefined();
  });
});
