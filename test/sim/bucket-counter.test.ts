import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BucketCounter } from '../../src/sim/bucket-counter.js';

describe('BucketCounter', () => {
  it('counts per bucket, half-open on the right', () => {
    const c = new BucketCounter(100);
    for (const t of [0, 99.9, 100, 250, 1000]) c.add(t);
    expect(c.toArray()).toEqual([2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 1]);
    expect(c.max()).toBe(2);
    expect(c.total()).toBe(5);
    expect(c.get(99)).toBe(0);
  });

  it('rejects a non-positive width', () => {
    expect(() => new BucketCounter(0)).toThrow(RangeError);
  });

  it('total equals the number of events and max is the largest bucket', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { maxLength: 200 }), (times) => {
        const c = new BucketCounter(1000);
        for (const t of times) c.add(t);
        expect(c.total()).toBe(times.length);
        const counts = new Map<number, number>();
        for (const t of times) counts.set(Math.floor(t / 1000), (counts.get(Math.floor(t / 1000)) ?? 0) + 1);
        expect(c.max()).toBe(Math.max(0, ...counts.values()));
      }),
    );
  });
});
