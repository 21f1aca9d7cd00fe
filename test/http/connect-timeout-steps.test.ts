import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CONNECT_TIMEOUT_AGENTS, connectTimeoutFetch, connectTimeoutStep } from '../../src/http/connect-timeout.js';

describe('connectTimeoutStep — rounds up to a few steps per decade', () => {
  it('pins the number of agents kept: 8', () => {
    expect(CONNECT_TIMEOUT_AGENTS).toBe(8);
  });

  it('keeps round values, and rounds any other up to the next step', () => {
    for (const ms of [1, 100, 250, 500, 1_000, 2_000, 3_000, 5_000, 10_000, 60_000]) expect(connectTimeoutStep(ms)).toBe(ms);
    expect(connectTimeoutStep(1.1)).toBe(1.2);
    expect(connectTimeoutStep(999.5)).toBe(1_000);
    expect(connectTimeoutStep(1_000.5)).toBe(1_200);
    expect(connectTimeoutStep(2_999)).toBe(3_000);
    expect(connectTimeoutStep(3_001)).toBe(4_000);
    expect(connectTimeoutStep(8_001)).toBe(10_000);
  });

  it('property: never shorter than asked, at most a third longer, and a step is its own step', () => {
    fc.assert(
      fc.property(fc.double({ min: 1, max: 1e9, noNaN: true }), (ms) => {
        const step = connectTimeoutStep(ms);
        expect(step).toBeGreaterThanOrEqual(ms);
        expect(step).toBeLessThanOrEqual((ms * 4) / 3);
        expect(connectTimeoutStep(step)).toBe(step);
      }),
    );
  });

  it('values within one step share one fetch; invalid values are refused', async () => {
    expect(await connectTimeoutFetch(1_999.5)).toBe(await connectTimeoutFetch(2_000));
    await expect(connectTimeoutFetch(0)).rejects.toThrow(RangeError);
    await expect(connectTimeoutFetch(Number.NaN)).rejects.toThrow(RangeError);
    await expect(connectTimeoutFetch(Number.POSITIVE_INFINITY)).rejects.toThrow(RangeError);
  });
});
