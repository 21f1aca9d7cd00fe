import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FlatHeap } from '../../src/sim/flat-heap.js';

describe('FlatHeap', () => {
  it('pops in (time, seq) order whatever the push order, growing as needed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 1000 })), { maxLength: 300 }),
        (pairs) => {
          const h = new FlatHeap(4);
          pairs.forEach(([t], seq) => {
            h.push(t, seq, 1, seq * 2);
          });
          const expected = pairs.map(([t], seq) => [t, seq]).sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
          const got: number[][] = [];
          while (h.size > 0) {
            h.pop();
            expect(h.arg).toBe(h.seq * 2);
            got.push([h.time, h.seq]);
          }
          expect(got).toEqual(expected);
        },
      ),
    );
  });
});
