import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReleasedTickets } from '../../src/policies/released-tickets.js';

describe('ReleasedTickets (tickets handed back to a pacer)', () => {
  it('behaves as a sorted set taken smallest first, for any order of releases and bookings (seed 0x71c)', () => {
    type Op = { add: number } | { take: true } | { clear: true };
    const op: fc.Arbitrary<Op> = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 1, max: 200 }).map((add) => ({ add })) },
      { weight: 3, arbitrary: fc.constant({ take: true as const }) },
      { weight: 1, arbitrary: fc.constant({ clear: true as const }) },
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const tickets = new ReleasedTickets();
        const model: number[] = [];
        for (const o of ops) {
          if ('add' in o) {
            tickets.add(o.add);
            if (!model.includes(o.add)) model.push(o.add);
            model.sort((a, b) => a - b);
          } else if ('take' in o) {
            expect(tickets.takeSmallest()).toBe(model.shift());
          } else {
            tickets.clear();
            model.length = 0;
          }
          expect(tickets.size).toBe(model.length);
          for (const t of [1, 50, 100, 150, 200]) expect(tickets.has(t)).toBe(model.includes(t));
        }
      }),
      { seed: 0x71c, numRuns: 300 },
    );
  });
});
