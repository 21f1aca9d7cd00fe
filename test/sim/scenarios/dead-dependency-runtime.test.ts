import { describe, expect, it } from 'vitest';
import type { RetryBudgetOptions } from '../../../src/policies/retry-budget.js';
import { downstream } from '../../../src/runtime/downstream.js';
import { type DeadDependencySetup, runDeadDependency } from '../../../src/sim/scenarios/dead-dependency.js';
import { runDeadDependencyOnDownstream } from '../../../src/sim/scenarios/dead-dependency-runtime.js';
import type { SimCallEnd } from '../../../src/sim/sim-downstream.js';

/**
 * The simulator's driver and the real `downstream()` on a `VirtualClock` run one orchestration
 * (src/orchestration): on the same seed they must make the same calls, the same attempts and
 * give up for the same reasons — exactly, call by call. A difference here means the simulator
 * no longer measures the pipeline users run.
 */
const BASE: DeadDependencySetup = {
  ratePerSecond: 20,
  durationMs: 60_000,
  downFromMs: 10_000,
  downForMs: 30_000,
  failure: 'refuse',
  timeoutMs: 1_000,
  seed: 1,
};

async function both(setup: DeadDependencySetup, breaker: boolean, budget: RetryBudgetOptions | false = false) {
  const simEnds: SimCallEnd[] = [];
  const realEnds: SimCallEnd[] = [];
  const retry = { maxAttempts: 3 };
  const breakerOptions = breaker ? {} : undefined;
  const policies = { variant: 'v', retry, breaker: breakerOptions, budget };
  const sim = runDeadDependency(setup, { ...policies, observe: (e) => simEnds.push(e) });
  const real = await runDeadDependencyOnDownstream(setup, { ...policies, downstream, observe: (e) => realEnds.push(e) });
  const byCall = (a: SimCallEnd, b: SimCallEnd) => a.call - b.call;
  return { sim, real, simEnds: simEnds.sort(byCall), realEnds: realEnds.sort(byCall) };
}

describe('dead-dependency: the simulator agrees with downstream() on a VirtualClock', () => {
  for (const failure of ['refuse', 'timeout'] as const) {
    for (const breaker of [false, true]) {
      for (const seed of [1, 2]) {
        it(`${failure}, ${breaker ? 'with' : 'without'} breaker, seed ${seed}: same counts, same calls`, async () => {
          const { sim, real, simEnds, realEnds } = await both({ ...BASE, failure, seed }, breaker);
          expect(real).toEqual(sim);
          expect(realEnds).toEqual(simEnds);
          expect(realEnds.length).toBe(sim.requests);
          // Not a trivial agreement: calls were retried, some gave up, and with the breaker some failed fast.
          expect(simEnds.some((e) => e.attempts > 1)).toBe(true);
          expect(sim.failed).toBeGreaterThan(0);
          if (breaker) expect(sim.failedFast).toBeGreaterThan(0);
        });
      }
    }
  }

  it('with the retry budget (deposit at call start, a withdrawal per retry): same counts, same calls', async () => {
    const budget = { ratio: 0.2, reservePerSecond: 2 };
    const { sim, real, simEnds, realEnds } = await both(BASE, false, budget);
    expect(real).toEqual(sim);
    expect(realEnds).toEqual(simEnds);
    // The budget did refuse retries, which ended calls with reason `budget`.
    expect(simEnds.some((e) => e.reason === 'budget')).toBe(true);
  });
});
