import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withDefaults } from '../../../src/sim/scenario.js';
import { amplification, runAmplification } from '../../../src/sim/scenarios/amplification.js';

describe('amplification scenario', () => {
  it('3 layers × 3 attempts, dead innermost: 27 calls per client request without the signal, 3 with it', () => {
    const { json } = amplification.run(withDefaults(amplification), {});
    expect(json.innermostCallsPerRequest).toEqual({ withoutSignal: 27, withSignal: 3 });
    const [without, withSignal] = json.variants as { callsPerHop: number[]; requests: number; failedRequests: number }[];
    expect(without!.callsPerHop).toEqual([100, 300, 900, 2700]);
    expect(withSignal!.callsPerHop).toEqual([100, 100, 100, 300]);
    expect(without!.failedRequests).toBe(100);
  });

  it('k attempts per layer and n layers: kⁿ calls without the signal, k with it', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 1000 }),
        (layers, k, seed) => {
          const setup = { layers, requests: 3, seed };
          expect(runAmplification(setup, 'a', { maxAttempts: k }, false).innermostCallsPerRequest).toBe(k ** layers);
          expect(runAmplification(setup, 'b', { maxAttempts: k }, true).innermostCallsPerRequest).toBe(k);
        },
      ),
      { numRuns: 30 },
    );
  });

  it('a config file adds rows run with the user’s options', () => {
    const { json } = amplification.run(withDefaults(amplification, { requests: 5 }), { retry: { maxAttempts: 2 } });
    const variants = json.variants as { variant: string; innermostCallsPerRequest: number }[];
    expect(variants.map((v) => [v.variant, v.innermostCallsPerRequest])).toEqual([
      ['without signal', 27],
      ['with signal', 3],
      ['config, without signal', 8],
      ['config, with signal', 2],
    ]);
  });
});
