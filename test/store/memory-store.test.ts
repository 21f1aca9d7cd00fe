import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RetryBudget } from '../../src/policies/retry-budget.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { StateStore } from '../../src/store/state-store.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

describe('MemoryStore', () => {
  it('addToWindow sums the window ending at the given bucket and drops older buckets', () => {
    const store = new MemoryStore(new VirtualClock());
    expect(store.addToWindow('k', 0, 2, 3, 1_000)).toEqual({ applied: true, sum: 2 });
    expect(store.addToWindow('k', 2, 5, 3, 1_000)).toEqual({ applied: true, sum: 7 });
    expect(store.sumWindow('k', 2, 3)).toBe(7);
    expect(store.sumWindow('k', 3, 3)).toBe(5); // bucket 0 left the window
    expect(store.addToWindow('k', 10, 1, 3, 1_000)).toEqual({ applied: true, sum: 1 });
    expect(store.sumWindow('absent', 10, 3)).toBe(0);
  });

  it('addToWindow with a floor refuses an add that would go below it, atomically', () => {
    const store = new MemoryStore(new VirtualClock());
    expect(store.addToWindow('probes', 0, -1, 1, 1_000, -2)).toEqual({ applied: true, sum: -1 });
    expect(store.addToWindow('probes', 0, -1, 1, 1_000, -2)).toEqual({ applied: true, sum: -2 });
    expect(store.addToWindow('probes', 0, -1, 1, 1_000, -2)).toEqual({ applied: false, sum: -2 });
    expect(store.addToWindow('probes', 0, 1, 1, 1_000, -2)).toEqual({ applied: true, sum: -1 });
  });

  it('compareAndSet writes only over the expected version', () => {
    const store = new MemoryStore(new VirtualClock());
    expect(store.get('cb')).toBeUndefined();
    expect(store.compareAndSet('cb', 1, 'x', 1_000)).toBeUndefined();
    expect(store.compareAndSet('cb', 0, '{"state":"open"}', 1_000)).toBe(1);
    expect(store.compareAndSet('cb', 0, 'late', 1_000)).toBeUndefined();
    expect(store.compareAndSet('cb', 1, '{"state":"half-open"}', 1_000)).toBe(2);
    expect(store.get('cb')).toEqual({ value: '{"state":"half-open"}', version: 2 });
  });

  it('bookSlot is a virtual queue: max(notBefore, next), then next += spacing', () => {
    const store = new MemoryStore(new VirtualClock());
    expect([0, 1, 2].map(() => store.bookSlot('q', 100, 10, 1_000))).toEqual([100, 110, 120]);
    expect(store.bookSlot('q', 500, 10, 1_000)).toBe(500);
    expect(store.bookSlot('q', 0, 25, 1_000)).toBe(510);
    expect(store.bookSlot('q', 0, 25, 1_000)).toBe(535);
  });

  it('keys expire ttlMs after their last write, on the injected clock', async () => {
    const clock = new VirtualClock();
    const store = new MemoryStore(clock);
    store.addToWindow('w', 0, 1, 10, 100);
    store.compareAndSet('r', 0, 'v', 200);
    store.bookSlot('s', 0, 5, 300);
    expect(store.size).toBe(3);
    await clock.advance(100);
    expect(store.sumWindow('w', 0, 10)).toBe(0);
    expect(store.get('r')?.version).toBe(1);
    await clock.advance(100);
    expect(store.get('r')).toBeUndefined();
    expect(store.compareAndSet('r', 0, 'again', 200)).toBe(1); // an expired record counts as absent
    await clock.advance(100);
    expect(store.bookSlot('s', 0, 5, 300)).toBe(0); // the queue was forgotten
    await clock.advance(1_000);
    expect(store.size).toBe(0);
  });

  it('refuses to treat one kind of key as another; delete forgets any kind', () => {
    const store = new MemoryStore(new VirtualClock());
    store.bookSlot('k', 0, 1, 1_000);
    expect(() => store.addToWindow('k', 0, 1, 1, 1_000)).toThrow(/holds a slot/);
    expect(() => store.get('k')).toThrow(/not a record/);
    store.delete('k');
    expect(store.get('k')).toBeUndefined();
  });

  it('the Finagle mapping of the interface docs grants exactly what RetryBudget grants (property)', () => {
    // Ratios and reserves that are exact in binary, so both sides compute the same sums.
    fc.assert(
      fc.property(
        fc.constantFrom(0.25, 0.5, 1),
        fc.constantFrom(0, 1, 2),
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.record({ dt: fc.integer({ min: 0, max: 700 }), retry: fc.boolean() }), { maxLength: 200 }),
        (ratio, reservePerSecond, buckets, ops) => {
          const windowMs = 1_000;
          const budget = new RetryBudget({ ratio, reservePerSecond, windowMs, buckets });
          const store: StateStore = new MemoryStore(new VirtualClock());
          const bucketMs = windowMs / buckets;
          const reserve = (reservePerSecond * windowMs) / 1000;
          let now = 0;
          for (const { dt, retry } of ops) {
            now += dt;
            const bucket = Math.floor(now / bucketMs);
            if (!retry) {
              budget.recordRequest(now);
              store.addToWindow('budget:{payments}', bucket, ratio, buckets, windowMs);
            } else {
              const viaStore = (
                store.addToWindow('budget:{payments}', bucket, -1, buckets, windowMs, -reserve) as { applied: boolean }
              ).applied;
              if (viaStore !== budget.tryRetry(now)) return false;
            }
          }
          return true;
        },
      ),
    );
  });
});
