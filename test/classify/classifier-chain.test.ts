import { describe, expect, it } from 'vitest';
import { classifyThrough } from '../../src/classify/classifier-chain.js';
import type { Classification } from '../../src/classify/outcome.js';

const mine: Classification = { outcome: 'failed', retryable: false };

describe('classifyThrough: the one order every classifying place uses', () => {
  it('the first answer wins: first, then second, then kindly', () => {
    const never = () => undefined;
    expect(
      classifyThrough(
        new Error('x'),
        0,
        () => mine,
        () => ({ outcome: 'unknown', retryable: true }),
      ),
    ).toBe(mine);
    expect(classifyThrough(new Error('x'), 0, never, () => mine)).toBe(mine);
    expect(classifyThrough(new Error('x'), 0, undefined, () => mine)).toBe(mine);
    // kindly's own reading of a plain Error: an unknown outcome
    expect(classifyThrough(new Error('x'), 0, never, never).outcome).toBe('unknown');
  });

  it('a classifier that throws is skipped, not propagated', () => {
    const broken = () => {
      throw new Error('bug in a hook');
    };
    expect(classifyThrough(new Error('x'), 0, broken, () => mine)).toBe(mine);
    expect(() => classifyThrough(new Error('x'), 0, broken, broken)).not.toThrow();
  });
});
