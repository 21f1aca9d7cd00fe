import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/policies/pacer.js';
import { PacedAnswerTally, paceContribution } from '../../src/store/fleet-pace-rate.js';
import { RATE_SHARE, RATE_WHOLE } from '../../src/store/fleet-store.js';

/** A pacer whose search ended on a guess of `perSecond` adopted from the fleet: starting up, not yet cut. */
function guessing(perSecond: number): Pacer {
  const pacer = new Pacer();
  pacer.onResult(0, 'rejected', undefined, 0);
  expect(pacer.searching).toBe(true);
  expect(pacer.adopt(perSecond, 1)).toBe(true);
  expect(pacer.rateKind(1)).toBe('whole');
  return pacer;
}

describe('what one process reports to its fleet', () => {
  it('a guess at the whole rate counts for at most twice the fleet’s estimate last heard (regression: a follower’s start-up guess reached 1.6 × 10⁹/s)', () => {
    const tally = new PacedAnswerTally();
    const alone = paceContribution(guessing(10_000), 1, tally);
    expect([alone.kind, alone.rate]).toEqual([RATE_WHOLE, 10]);
    tally.heardEstimate = 0.1;
    const heard = paceContribution(guessing(10_000), 1, tally);
    expect([heard.kind, heard.rate]).toEqual([RATE_WHOLE, 0.2]);
    // Below the lead it stands.
    expect(paceContribution(guessing(150), 1, tally).rate).toBeCloseTo(0.15, 12);
  });

  it('carries the first tries let go since the last report once, and again when a report was lost', () => {
    const tally = new PacedAnswerTally();
    const pacer = new Pacer();
    tally.sentFirst();
    tally.sentFirst();
    const first = paceContribution(pacer, 0, tally);
    expect([first.kind, first.rate, first.unpaced]).toEqual([RATE_SHARE, 0, 2]);
    expect(paceContribution(pacer, 0, tally).unpaced).toBe(0);
    tally.sentFirst();
    const lost = paceContribution(pacer, 0, tally);
    tally.unsent(lost);
    tally.sentFirst();
    expect(paceContribution(pacer, 0, tally).unpaced).toBe(2);
  });
});
