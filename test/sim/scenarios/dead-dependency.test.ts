import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { deadDependency } from '../../../src/sim/scenarios/dead-dependency.js';

type Variant = { variant: string; requestsToDead: number; recoveryDelayMs: number; breakerOpens: number; succeeded: number };

describe('dead-dependency scenario', () => {
  for (const failure of ['refuse', 'timeout'] as const) {
    it(`kindly's breaker cuts requests to a dead callee at least 5× (${failure})`, () => {
      const { json } = deadDependency.run(withDefaults(deadDependency, { failure }), {});
      const r = json.requestsToDead as { withoutBreaker: number; withBreaker: number };
      expect(r.withoutBreaker).toBeGreaterThan(0);
      expect(r.withoutBreaker).toBeGreaterThanOrEqual(5 * r.withBreaker);
    });
  }

  it('the published figure, pinned on the default seed: 8,985 requests to the dead callee without a breaker, 7 with (1,284×)', () => {
    const { json } = deadDependency.run(withDefaults(deadDependency), {});
    expect(json.requestsToDead).toEqual({ withoutBreaker: 8_985, withBreaker: 7 });
  });

  it('without a breaker every request retries into the outage: about rate × outage × attempts', () => {
    const { json } = deadDependency.run(withDefaults(deadDependency), {});
    const without = (json.variants as Variant[])[0]!;
    // 100/s × 30 s × 3 attempts, less the few retries that land after the callee is back.
    expect(without.requestsToDead).toBeGreaterThan(8_800);
    expect(without.requestsToDead).toBeLessThanOrEqual(9_000);
  });

  it('the recovery delay is the time from the callee’s return until the breaker closed', () => {
    const { json } = deadDependency.run(withDefaults(deadDependency), {});
    const withBreaker = (json.variants as Variant[])[1]!;
    expect(json.recoveryDelayMs).toBe(withBreaker.recoveryDelayMs);
    expect(withBreaker.breakerOpens).toBeGreaterThanOrEqual(1);
    // The last break (at most 60 s) ends after the callee is back; it closes on the first probe then.
    expect(withBreaker.recoveryDelayMs).toBeGreaterThan(0);
    expect(withBreaker.recoveryDelayMs).toBeLessThanOrEqual(60_000);
    expect(withBreaker.succeeded).toBeGreaterThan(0);
  });

  it('a callee that never goes down: no requests to the dead one, no recovery delay', () => {
    const { json } = deadDependency.run(withDefaults(deadDependency, { 'down-for': 0, duration: 5 }), {});
    expect(json.requestsToDead).toEqual({ withoutBreaker: 0, withBreaker: 0 });
    expect(json.recoveryDelayMs).toBe(0);
  });
});
