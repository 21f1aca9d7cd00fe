import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { Simulation } from '../../src/sim/engine.js';
import { SteadyArrivals } from '../../src/sim/steady-arrivals.js';

describe('SteadyArrivals', () => {
  it('sends request i at start + i × 1000 / rate', () => {
    const sim = new Simulation({ seed: 1 });
    const seen: [number, number][] = [];
    const a = new SteadyArrivals(sim, { ratePerSecond: 4, durationMs: 1000, startMs: 10 }, (i, now) => seen.push([i, now]));
    a.start();
    sim.run();
    expect(a.count).toBe(4);
    expect(seen).toEqual([
      [0, 10],
      [1, 260],
      [2, 510],
      [3, 760],
    ]);
  });

  it('rejects a bad rate or duration', () => {
    const sim = new Simulation({ seed: 1 });
    expect(() => new SteadyArrivals(sim, { ratePerSecond: 0, durationMs: 1 }, () => {})).toThrow(InvalidOptionsError);
    expect(() => new SteadyArrivals(sim, { ratePerSecond: -1, durationMs: Number.NaN }, () => {})).toThrow(
      /ratePerSecond.*-1[\s\S]*durationMs.*NaN/,
    );
  });

  it('puts exactly `rate` arrivals in every whole second when the rate is a whole number', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 5 }), (rate, secondsLong) => {
        const sim = new Simulation({ seed: 1 });
        const perSecond = new Array<number>(secondsLong).fill(0);
        const a = new SteadyArrivals(sim, { ratePerSecond: rate, durationMs: secondsLong * 1000 }, (_i, now) => {
          perSecond[Math.floor(now / 1000)]!++;
        });
        a.start();
        sim.run();
        expect(perSecond).toEqual(new Array<number>(secondsLong).fill(rate));
      }),
    );
  });
});
