import { describe, expect, it } from 'vitest';
import type { InvalidOptionsError } from '../../src/options/validate.js';
import { BULKHEAD_DEFAULTS, BulkheadSlots } from '../../src/policies/bulkhead-slots.js';

describe('BulkheadSlots (the sans-IO accounting the runtime line and the simulator share)', () => {
  it('defaults are pinned and bad options are listed with their values', () => {
    expect(BULKHEAD_DEFAULTS).toEqual({ maxConcurrent: 25, maxQueue: 0, queueTimeoutMs: 1_000 });
    const problems = (() => {
      try {
        new BulkheadSlots({ maxConcurrent: 0, maxQueue: -1 });
      } catch (e) {
        return (e as InvalidOptionsError).problems;
      }
      return [];
    })();
    expect(problems).toHaveLength(2);
    expect(problems.join('\n')).toContain('got 0');
    expect(problems.join('\n')).toContain('got -1');
  });

  it('grants up to maxConcurrent slots; release frees one when nobody waits', () => {
    const slots = new BulkheadSlots({ maxConcurrent: 2 });
    expect([slots.tryAcquire(), slots.tryAcquire(), slots.tryAcquire()]).toEqual([true, true, false]);
    expect(slots.active).toBe(2);
    expect(slots.release()).toBe(false);
    expect(slots.active).toBe(1);
    expect(slots.tryAcquire()).toBe(true);
  });

  it('waitAllowance: refuses with queue-full at maxQueue, queue-timeout when no time is allowed, else the wait', () => {
    const noQueue = new BulkheadSlots({ maxConcurrent: 1 });
    expect(noQueue.waitAllowance()).toBe('queue-full');
    const slots = new BulkheadSlots({ maxConcurrent: 1, maxQueue: 3, queueTimeoutMs: 500 });
    expect(slots.waitAllowance()).toBe(500);
    expect(slots.waitAllowance(200)).toBe(200); // the deadline is nearer than the queue timeout
    expect(slots.waitAllowance(900)).toBe(500);
    expect(slots.waitAllowance(0)).toBe('queue-timeout');
    expect(slots.rejected).toBe(1);
    expect(noQueue.rejected).toBe(1);
  });

  it('release with someone in line keeps the slot taken (it passes to the waiter)', () => {
    class Line extends BulkheadSlots {
      join(): void {
        this.joined();
      }
    }
    const line = new Line({ maxConcurrent: 1, maxQueue: 1 });
    expect(line.tryAcquire()).toBe(true);
    line.join();
    expect(line.queued).toBe(1);
    expect(line.tryAcquire()).toBe(false); // nobody barges the line
    expect(line.release()).toBe(true);
    expect(line.active).toBe(1);
  });
});
