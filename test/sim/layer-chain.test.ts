import { describe, expect, it } from 'vitest';
import type { RetryOptions } from '../../src/policies/retry-decision.js';
import { Dependency } from '../../src/sim/dependency.js';
import { Simulation } from '../../src/sim/engine.js';
import { LayerChain } from '../../src/sim/layer-chain.js';

describe('LayerChain', () => {
  it('passes a success straight back, one call per hop', () => {
    const sim = new Simulation({ seed: 1 });
    const answers: [number, boolean, number][] = [];
    const chain = new LayerChain(sim, { layers: 2, retry: {}, signal: true }, new Dependency({ latencyMs: 10 }), (r, ok, now) =>
      answers.push([r, ok, now]),
    );
    chain.request(7, 0);
    sim.run();
    // 2 hops down (1 ms each), 10 ms at the dependency, 3 hops back.
    expect(answers).toEqual([[7, true, 15]]);
    expect(chain.callsAt).toEqual([1, 1, 1]);
  });

  it('a hanging dependency times out at the innermost layer; with the signal only that layer retries', () => {
    const sim = new Simulation({ seed: 1 });
    let failed = 0;
    const dead = new Dependency({ whenDown: 'hang', down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] });
    const chain = new LayerChain(
      sim,
      { layers: 2, retry: { maxAttempts: 2 }, signal: true, attemptTimeoutMs: 50 },
      dead,
      (_r, ok) => {
        if (!ok) failed++;
      },
    );
    chain.request(0, 0);
    sim.run();
    expect(failed).toBe(1);
    expect(chain.callsAt).toEqual([1, 1, 2]);
    expect(sim.now).toBeGreaterThanOrEqual(100);
  });

  it('validates its options, listing every problem', () => {
    const sim = new Simulation({ seed: 1 });
    expect(
      () =>
        new LayerChain(
          sim,
          { layers: 0, retry: 3 as unknown as RetryOptions, signal: 'yes' as unknown as boolean, hopMs: -1 },
          new Dependency(),
          () => {},
        ),
    ).toThrow(/layers[\s\S]*retry[\s\S]*signal[\s\S]*hopMs/);
  });
});
