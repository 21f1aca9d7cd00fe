import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventQueue, type EventQueueOptions } from '../../src/sim/event-queue.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

/** Layouts that push events through every part: lane, calendar buckets, near and far heaps. */
const LAYOUTS: EventQueueOptions[] = [
  {},
  { bucketMs: 1, buckets: 4 },
  { bucketMs: 3, buckets: 2 },
  { bucketMs: 0.7, buckets: 8 },
];

function drain(q: EventQueue): [number, number, number][] {
  const out: [number, number, number][] = [];
  while (q.pop()) out.push([q.poppedTime, q.poppedKind, q.poppedArg]);
  return out;
}

describe('EventQueue', () => {
  it('pops nothing when empty', () => {
    const q = new EventQueue();
    expect(q.pop()).toBe(false);
    expect(q.peekTime()).toBe(Number.POSITIVE_INFINITY);
    expect(q.size).toBe(0);
  });

  it.each(LAYOUTS)('pops earliest first, ties in insertion order (%j)', (layout) => {
    const q = new EventQueue(layout);
    q.push(5, 1, 10);
    q.push(3, 2, 20);
    q.push(5, 3, 30);
    q.push(3, 4, 40);
    q.push(100, 5, 50);
    q.push(4.5, 6, 60);
    expect(q.size).toBe(6);
    expect(q.peekTime()).toBe(3);
    expect(drain(q)).toEqual([
      [3, 2, 20],
      [3, 4, 40],
      [4.5, 6, 60],
      [5, 1, 10],
      [5, 3, 30],
      [100, 5, 50],
    ]);
  });

  it('rejects a bad bucket width or count, listing both', () => {
    expect(() => new EventQueue({ bucketMs: 0, buckets: 1 })).toThrow(/bucketMs[\s\S]*buckets/);
  });

  it('keeps every event through growth of its parts', () => {
    const q = new EventQueue({ buckets: 16 });
    for (let i = 0; i < 5000; i++) q.push(((i * 7919) % 5000) / 10, 0, i);
    for (let i = 0; i < 5000; i++) q.push(1000 + i, 1, i);
    expect(q.size).toBe(10_000);
    const out = drain(q);
    expect(out).toHaveLength(10_000);
    for (let i = 1; i < out.length; i++) expect(out[i]![0]).toBeGreaterThanOrEqual(out[i - 1]![0]);
  });

  // The queue replaces VirtualClock on the simulator's hot path; it must order events exactly
  // as VirtualClock does, including events scheduled while others fire.
  it.each(LAYOUTS)('fires in the same order as VirtualClock, including events scheduled while running (%j)', (layout) => {
    const op = fc.record({
      delay: fc.oneof(fc.integer({ min: 0, max: 20 }), fc.double({ min: 0, max: 40, noNaN: true })),
      spawn: fc.integer({ min: 0, max: 2 }),
    });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), fc.array(op, { maxLength: 80 }), (initial, spawned) => {
        // Both sides: initial events at t = delay; firing event i schedules `spawn` more from `spawned`.
        const clock = new VirtualClock({ startMs: 0 });
        const viaClock: number[] = [];
        let nextSpawnA = 0;
        let idA = 0;
        const scheduleA = (delay: number, spawn: number) => {
          const id = idA++;
          clock.schedule(delay, () => {
            viaClock.push(id);
            for (let s = 0; s < spawn && nextSpawnA < spawned.length; s++) {
              const o = spawned[nextSpawnA++]!;
              scheduleA(o.delay, o.spawn);
            }
          });
        };
        for (const o of initial) scheduleA(o.delay, o.spawn);
        while (clock.runNext()) {}

        const q = new EventQueue(layout);
        const viaQueue: number[] = [];
        const spawnOf: number[] = [];
        let nextSpawnB = 0;
        let now = 0;
        const scheduleB = (delay: number, spawn: number) => {
          spawnOf.push(spawn);
          q.push(now + delay, 0, spawnOf.length - 1);
        };
        for (const o of initial) scheduleB(o.delay, o.spawn);
        while (q.pop()) {
          now = q.poppedTime;
          const id = q.poppedArg;
          viaQueue.push(id);
          for (let s = 0; s < spawnOf[id]! && nextSpawnB < spawned.length; s++) {
            const o = spawned[nextSpawnB++]!;
            scheduleB(o.delay, o.spawn);
          }
        }
        expect(viaQueue).toEqual(viaClock);
      }),
      { numRuns: 200 },
    );
  });
});
