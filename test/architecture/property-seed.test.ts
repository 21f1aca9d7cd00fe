// Property tests are deterministic: every run, here or in CI, tries the same cases.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PROPERTY_SEED } from '../support/property-seed.js';

function casesTried(): number[] {
  const seen: number[] = [];
  fc.assert(
    fc.property(fc.integer(), (n) => {
      seen.push(n);
    }),
    { numRuns: 20 },
  );
  return seen;
}

describe('the seed property tests draw from', () => {
  it('is the named seed, for every test file (vitest setupFiles)', () => {
    expect(fc.readConfigureGlobal().seed).toBe(PROPERTY_SEED);
  });

  it('gives a property the same cases each time it runs', () => {
    const first = casesTried();
    expect(first).toHaveLength(20);
    expect(casesTried()).toEqual(first);
  });
});
