import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventQueue } from '../../src/sim/event-queue.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

describe('EventQueue', () => {
  it('pops nothing when empty', () => {
    const q = new EventQueue();
    expect(q.pop()).toBe(false);
    expect(q.peekTime()).toBe(Number.POSITIVE_INFINITY);
  });

  it('pops earliest first, ties in insertion order', () => {
    const q = new EventQueue(16);
    q.push(5, 1, 10);
    q.push(3, 2, 20);
    q.push(5, 3, 30);
    q.push(3, 4, 40);
    const out: [number, number, number][] = [];
    while (q.pop()) out.push([q.poppedTime, q.poppedKind, q.poppedArg]);
    expect(out).toEqual([
      [3, 2, 20],
      [3, 4, 40],
      [5, 1, 10],
      [5, 3, 30],
    ]);
  });

  it('grows past its initial capacity without losing events', () => {
    const q = new EventQueue(16);
    for (let i = 0; i < 1000; i++) q.push(1000 - i, 0, i);
    expect(q.size).toBe(1000);
    let prev = -1;
    let n = 0;
    while (q.pop()) {
      expect(q.poppedTime).toBeGreaterThanOrEqual(prev);
      prev = q.poppedTime;
      n++;
    }
    expect(n).toBe(1000);
  });

  // The queue replaces VirtualClock on the simulator's hot path; it must order events exactly
  // as VirtualClock does, including events scheduled while others fire.
  it('fires in the same order as VirtualClock, including events scheduled while running', () => {
    const op = fc.record({ delay: fc.integer({ min: 0, max: 20 }), spawn: fc.integer({ min: 0, max: 2 }) });
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 60 }), fc.array(op, { maxLength: 60 }), (initial, spawned) => {
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

        const q = new EventQueue(16);
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
    );
  });
});
