import { describe, expect, it } from 'vitest';
import { downstream } from '../../../src/runtime/downstream.js';
import { type HedgingSetup, runHedging } from '../../../src/sim/scenarios/hedging.js';
import { runHedgingOnDownstream } from '../../../src/sim/scenarios/hedging-runtime.js';
import type { SimCallEnd } from '../../../src/sim/sim-downstream.js';

/**
 * The hedging scenario through the simulator's driver and through the real `downstream()` on
 * a `VirtualClock`: one orchestration, so on the same seed the same hedges are admitted (by the
 * stages: the hedging policy's learned delay and extra-load cap, the retry budget), the same
 * attempts win, and every call ends at the same instant — exactly.
 */
const SETUP: HedgingSetup = {
  ratePerSecond: 400,
  durationMs: 8_000,
  medianMs: 10,
  sigma: 0.3,
  tail: 0.05,
  slowdown: 10,
  percentile: 0.9,
  seed: 1,
};

async function both(setup: HedgingSetup, hedging: boolean) {
  const simEnds: SimCallEnd[] = [];
  const realEnds: SimCallEnd[] = [];
  const sim = runHedging(setup, hedging, (e) => simEnds.push(e));
  const real = await runHedgingOnDownstream(setup, hedging, downstream, (e) => realEnds.push(e));
  const byCall = (a: SimCallEnd, b: SimCallEnd) => a.call - b.call;
  return { sim, real, simEnds: simEnds.sort(byCall), realEnds: realEnds.sort(byCall) };
}

describe('hedging: the simulator agrees with downstream() on a VirtualClock', () => {
  for (const seed of [1, 2]) {
    it(`seed ${seed}: the same hedges, the same winners, every call ending at the same instant`, async () => {
      const { sim, real, simEnds, realEnds } = await both({ ...SETUP, seed }, true);
      expect(real).toEqual(sim);
      expect(realEnds).toEqual(simEnds);
      // Not trivial: hedges went, some won, and the extra-load cap refused others.
      expect(sim.hedges).toBeGreaterThan(10);
      expect(sim.hedgeWins).toBeGreaterThan(0);
      expect(sim.hedgeWins).toBeLessThan(sim.hedges);
      expect(sim.extraLoad).toBeLessThanOrEqual(0.05 + 1e-9);
    });
  }

  it('the retry budget binds before the extra-load cap: the same hedges refused in both', async () => {
    // Half of all attempts slow, hedging at the median: nearly every call asks for a hedge.
    const setup = { ...SETUP, tail: 0.5, percentile: 0.5, durationMs: 4_000 };
    const { sim, real, realEnds, simEnds } = await both(setup, true);
    expect(real).toEqual(sim);
    expect(realEnds).toEqual(simEnds);
    expect(sim.extraLoad).toBeGreaterThan(0.04);
  });

  it('without hedging: the same calls, no hedge', async () => {
    const { sim, real, realEnds, simEnds } = await both({ ...SETUP, durationMs: 2_000 }, false);
    expect(real).toEqual(sim);
    expect(realEnds).toEqual(simEnds);
    expect(sim.hedges).toBe(0);
  });
});
