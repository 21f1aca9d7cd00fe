import { describe, expect, it } from 'vitest';
import type { LineWaiter, VirtualLine } from '../../src/orchestration/stage.js';
import type { RetryClaim } from '../../src/orchestration/stages/budget-stage.js';
import type { SharedTicket } from '../../src/orchestration/stages/pacing-stage.js';
import { Pacer } from '../../src/policies/pacer.js';
import { Simulation } from '../../src/sim/engine.js';
import { SimFleetBudget } from '../../src/sim/sim-fleet-budget.js';
import { SimFleetPacing } from '../../src/sim/sim-fleet-pacing.js';

/** Records how a wait in a line ended, and when. */
function waiter(log: string[]): LineWaiter {
  return {
    granted: (at, value) =>
      log.push(
        typeof value === 'object' && value !== null
          ? `granted a ticket due in ${(value as SharedTicket).slotWait(at)} @${at}`
          : `granted ${String(value)} @${at}`,
      ),
    refused: (at) => log.push(`refused @${at}`),
  };
}

/** A pacer throttled by a burst of rejections at `at` (searching for the callee's rate). */
function throttledPacer(at: number): Pacer {
  const pacer = new Pacer();
  for (let i = 0; i < 20; i++) pacer.onResult(at, i < 5 ? 'ok' : 'rejected', undefined, at - 5);
  return pacer;
}

describe('SimFleetPacing (FleetLink on virtual time)', () => {
  it('books nothing while the fleet is calm, leaves a searching pacer its own probes, and grants a shared slot one round trip later', () => {
    const sim = new Simulation({ seed: 1 });
    const fleet = new SimFleetPacing(sim, 2);
    const calm = fleet.link('calm', new Pacer(), 0);
    expect(calm.reserve(0)).toBe(0);
    sim.run(10);
    const pacer = throttledPacer(10);
    const link = fleet.link('busy', pacer, 10);
    expect(pacer.searching).toBe(true);
    // Searching: probe slots move as the pacer learns, a fleet slot cannot — book locally…
    expect(link.reserve(10)).toBeUndefined();
    // …and once a probe ticket is due, in the fleet's queue.
    const line = link.reserve(10, true) as VirtualLine;
    const log: string[] = [];
    expect(line.join(waiter(log), 10, Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(log).toEqual([]); // never from inside join
    sim.run(12);
    // The slot was free at once (10): known at 12, so no wait is left.
    expect(log).toEqual(['granted a ticket due in 0 @12']);
    fleet.stop();
  });
});

describe('SimFleetBudget (FleetBudgets on virtual time)', () => {
  it('a retry with no token is claimed and decided by the store a round trip later, never from inside join', () => {
    const sim = new Simulation({ seed: 1 });
    const fleet = new SimFleetBudget(sim, 4);
    const budget = fleet.process('a', 0);
    budget.recordRequest('k', 0);
    // Before the first sync returns, nothing is leased: the credit a process may borrow
    // (FLEET_BUDGET_CREDIT, 2) goes first, then a retry is claimed and decided by the store.
    expect(budget.claimRetry?.('k', 0)).toBe(true);
    expect(budget.claimRetry?.('k', 0)).toBe(true);
    const third = budget.claimRetry?.('k', 0) as RetryClaim | boolean;
    expect(typeof third).toBe('object');
    const claim = third as RetryClaim;
    expect(claim.granted).toBeUndefined();
    const log: string[] = [];
    (claim.settled as VirtualLine).join(waiter(log), 0, Number.POSITIVE_INFINITY);
    expect(log).toEqual([]);
    sim.run(3);
    expect(log).toEqual([]); // the store's answer is half a round trip away still
    sim.run(10);
    // The reserve (10/s over a 10 s window) grants it.
    expect(claim.granted).toBe(true);
    expect(log).toEqual(['granted true @4']);
    fleet.stop();
    sim.run();
  });

  it('with the fleet allowance spent, claims are refused, oldest first', () => {
    const sim = new Simulation({ seed: 1 });
    const fleet = new SimFleetBudget(sim, 1);
    const budget = fleet.process('a', 0);
    for (let i = 0; i < 10; i++) budget.recordRequest('k', 0);
    sim.run(50);
    const granted: boolean[] = [];
    // The reserve floor is 100 retries per window: spend it, then claim more.
    for (let i = 0; i < 130; i++) {
      const answer = budget.claimRetry?.('k', 50 + i) as RetryClaim | boolean;
      if (typeof answer === 'boolean') granted.push(answer);
      else
        (answer.settled as VirtualLine).join({ granted: (_at, ok) => granted.push(ok === true), refused: () => {} }, 50 + i, 1e9);
      sim.run(50 + i + 5);
    }
    fleet.stop();
    sim.run();
    expect(granted).toHaveLength(130);
    const yes = granted.filter(Boolean).length;
    // At most the fleet's allowance plus the credit a process may borrow (FLEET_BUDGET_CREDIT).
    expect(yes).toBeGreaterThanOrEqual(100);
    expect(yes).toBeLessThanOrEqual(102);
    expect(granted.slice(-20).every((g) => !g)).toBe(true);
  });
});
