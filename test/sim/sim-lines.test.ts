import { describe, expect, it } from 'vitest';
import { isBulkheadRejectedError, isConcurrencyLimitError } from '../../src/errors/errors.js';
import type { LineWaiter } from '../../src/orchestration/stage.js';
import { LatencyPolicies } from '../../src/policies/latency-policies.js';
import { Simulation } from '../../src/sim/engine.js';
import { SimBulkhead, SimLimitLine } from '../../src/sim/sim-lines.js';

/** A waiter that logs how and when its wait ended. */
function waiter(log: string[], name: string): LineWaiter {
  return {
    granted: (now, value) => log.push(`${name} granted@${now}${value === undefined ? '' : ` slot ${String(value)}`}`),
    refused: (now, error) =>
      log.push(`${name} refused@${now}: ${isBulkheadRejectedError(error) || isConcurrencyLimitError(error) ? error.why : '?'}`),
  };
}

describe('SimBulkhead: the bulkhead line on virtual time', () => {
  it('a freed slot goes to the longest waiter, told by an event at that instant; a full line refuses at once', () => {
    const sim = new Simulation({ seed: 1 });
    const bulkhead = new SimBulkhead(sim, { maxConcurrent: 1, maxQueue: 2, queueTimeoutMs: 100 });
    const log: string[] = [];
    expect(bulkhead.tryAcquire()).toBe(true);
    expect(bulkhead.join(waiter(log, 'a'), 0, Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(bulkhead.join(waiter(log, 'b'), 0, Number.POSITIVE_INFINITY)).toBeUndefined();
    const full = bulkhead.join(waiter(log, 'c'), 0, Number.POSITIVE_INFINITY);
    expect(isBulkheadRejectedError(full) && full.why).toBe('queue-full');
    const release = sim.on(() => {
      bulkhead.release();
      log.push(`released@${sim.now}`);
    });
    sim.at(30, release);
    sim.run();
    // b waits until its queue timeout (100 ms).
    expect(log).toEqual(['released@30', 'a granted@30', 'b refused@100: queue-timeout']);
    expect([bulkhead.active, bulkhead.queued, bulkhead.rejected]).toEqual([1, 0, 2]);
  });

  it('the wait is also bounded by the caller (the time left before its deadline)', () => {
    const sim = new Simulation({ seed: 1 });
    const bulkhead = new SimBulkhead(sim, { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 100 });
    const log: string[] = [];
    bulkhead.tryAcquire();
    bulkhead.join(waiter(log, 'a'), 0, 40);
    sim.run();
    expect(log).toEqual(['a refused@40: queue-timeout']);
    const none = bulkhead.join(waiter(log, 'b'), 40, 0);
    expect(isBulkheadRejectedError(none) && none.why).toBe('queue-timeout');
  });
});

describe('SimLimitLine: the adaptive limit line on virtual time', () => {
  it('waits for a slot of the limit, granted when an attempt settles; refused when the line is full or the wait runs out', () => {
    const sim = new Simulation({ seed: 1 });
    const policies = new LatencyPolicies(
      {
        concurrency: { initialLimit: 1, probeConcurrency: 1, maxQueue: 1, queueTimeoutMs: 50 },
        attemptTimeoutMs: undefined,
        hedging: undefined,
      },
      sim.random,
    );
    const line = new SimLimitLine(sim, policies);
    const log: string[] = [];
    const slot = policies.admit(0, undefined);
    expect(slot).toBeGreaterThanOrEqual(0);
    expect(line.of(undefined).join(waiter(log, 'a'), 0, Number.POSITIVE_INFINITY)).toBeUndefined();
    const full = line.of(undefined).join(waiter(log, 'b'), 0, Number.POSITIVE_INFINITY);
    expect(isConcurrencyLimitError(full) && full.why).toBe('queue-full');
    sim.at(
      20,
      sim.on(() => policies.settle(slot, 0, sim.now, 'ok', 1_000)),
    );
    sim.run();
    expect(log).toEqual([`a granted@20 slot ${slot}`]);
    expect(policies.queued).toBe(0);
    // Now the limit is full again (a holds the slot): the next waiter times out.
    const joinedAt = sim.now;
    line.of(undefined).join(waiter(log, 'c'), joinedAt, Number.POSITIVE_INFINITY);
    sim.run();
    expect(log.at(-1)).toBe(`c refused@${joinedAt + 50}: queue-timeout`);
    expect(policies.queued).toBe(0);
  });
});
