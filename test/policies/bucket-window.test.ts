import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BucketWindow } from '../../src/policies/bucket-window.js';

describe('BucketWindow', () => {
  it('sums the current bucket and the buckets − 1 before it', () => {
    const w = new BucketWindow(1_000, 10, 1); // 100 ms buckets
    w.add(0, 0, 1);
    w.add(950, 0, 2);
    expect(w.sum(999, 0)).toBe(3);
    // At 1000 the bucket [0, 100) has left the window; [900, 1000) is still in.
    expect(w.sum(1_000, 0)).toBe(2);
    expect(w.sum(1_899, 0)).toBe(2);
    expect(w.sum(1_900, 0)).toBe(0);
  });

  it('a gap longer than the window clears everything at once', () => {
    const w = new BucketWindow(1_000, 10, 2);
    w.add(5, 0, 7);
    w.add(5, 1, 9);
    expect(w.sum(1e9, 0)).toBe(0);
    expect(w.sum(1e9, 1)).toBe(0);
    w.add(1e9, 1, 1);
    expect(w.sum(1e9, 1)).toBe(1);
  });

  it('counts an earlier time in the current bucket', () => {
    const w = new BucketWindow(1_000, 10, 1);
    w.add(500, 0, 1);
    w.add(100, 0, 1);
    expect(w.sum(500, 0)).toBe(2);
  });

  it('reset forgets everything', () => {
    const w = new BucketWindow(1_000, 10, 1);
    w.add(10, 0, 4);
    w.reset();
    expect(w.sum(10, 0)).toBe(0);
  });

  it('matches a list of timestamps with the same bucket rule (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 10, max: 5_000 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2_000 }), fc.integer({ min: 1, max: 5 })), { maxLength: 200 }),
        (buckets, windowMs, steps) => {
          const w = new BucketWindow(windowMs, buckets, 1);
          const bucketMs = windowMs / buckets;
          const events: Array<[number, number]> = [];
          let now = 0;
          for (const [dt, by] of steps) {
            now += dt;
            w.add(now, 0, by);
            events.push([Math.floor(now / bucketMs), by]);
            const head = Math.floor(now / bucketMs);
            const expected = events.filter(([b]) => b > head - buckets).reduce((s, [, v]) => s + v, 0);
            if (w.sum(now, 0) !== expected) return false;
          }
          return true;
        },
      ),
    );
  });
});
