import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/random/random.js';
import { Simulation } from '../../src/sim/engine.js';

describe('Simulation', () => {
  it('runs handlers in time order with their argument and the current time', () => {
    const sim = new Simulation({ seed: 1 });
    const seen: [number, number][] = [];
    const k = sim.on((arg, now) => seen.push([arg, now]));
    sim.at(30, k, 3);
    sim.at(10, k, 1);
    sim.after(20, k, 2);
    expect(sim.run()).toBe(3);
    expect(seen).toEqual([
      [1, 10],
      [2, 20],
      [3, 30],
    ]);
    expect(sim.now).toBe(30);
    expect(sim.eventsFired).toBe(3);
  });

  it('never schedules into the past: earlier times and negative delays mean now', () => {
    const sim = new Simulation({ seed: 1 });
    const times: number[] = [];
    const k = sim.on((_a, now) => times.push(now));
    const first = sim.on(() => {
      sim.at(5, k);
      sim.after(-3, k);
    });
    sim.at(50, first);
    sim.run();
    expect(times).toEqual([50, 50]);
  });

  it('schedules events that carry any payload, in order with plain events, and cancels them until they fire', () => {
    const sim = new Simulation({ seed: 1 });
    const log: string[] = [];
    const plain = sim.on((arg, now) => log.push(`plain ${arg}@${now}`));
    type Request = { id: string; attempt: number };
    const deliver = (r: Request, now: number) => log.push(`${r.id}#${r.attempt}@${now}`);
    const a = sim.schedule(10, deliver, { id: 'a', attempt: 1 });
    sim.after(10, plain, 7);
    const timeout = sim.schedule(20, deliver, { id: 'timeout', attempt: 0 });
    const b = sim.scheduleAt(5, deliver, { id: 'b', attempt: 2 });
    expect([a.atMs, b.atMs, timeout.atMs]).toEqual([10, 5, 20]);
    expect(timeout.cancel()).toBe(true);
    expect(timeout.cancel()).toBe(false);
    sim.run();
    expect(log).toEqual(['b#2@5', 'a#1@10', 'plain 7@10']);
    expect(a.cancel()).toBe(false);
    // Slots are reused once fired: many short-lived events keep the table small.
    for (let i = 0; i < 1_000; i++) sim.schedule(1, () => {}, i).cancel();
    sim.run();
    let fired = 0;
    for (let i = 0; i < 1_000; i++) sim.schedule(1, () => fired++, i);
    sim.run();
    expect(fired).toBe(1_000);
    expect((sim as unknown as { payloads: unknown[] }).payloads.length).toBeLessThanOrEqual(1_000);
  });

  it('stops at untilMs, moving time there, and resumes later', () => {
    const sim = new Simulation({ seed: 1 });
    const fired: number[] = [];
    const k = sim.on((arg) => fired.push(arg));
    sim.at(10, k, 1);
    sim.at(100, k, 2);
    expect(sim.run(50)).toBe(1);
    expect(sim.now).toBe(50);
    expect(sim.pending).toBe(1);
    sim.run();
    expect(fired).toEqual([1, 2]);
  });

  it('stop() ends the run after the current event', () => {
    const sim = new Simulation({ seed: 1 });
    const fired: number[] = [];
    const k = sim.on((arg) => {
      fired.push(arg);
      if (arg === 2) sim.stop();
    });
    for (let i = 1; i <= 4; i++) sim.at(i, k, i);
    sim.run();
    expect(fired).toEqual([1, 2]);
    sim.run();
    expect(fired).toEqual([1, 2, 3, 4]);
  });

  it('creates one SeededRandom from the seed before anything runs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 31 }), (seed) => {
        const sim = new Simulation({ seed });
        const reference = new SeededRandom(seed);
        for (let i = 0; i < 5; i++) expect(sim.random.next()).toBe(reference.next());
      }),
    );
  });
  it('refuses a time that is not a finite number (NaN would fire at once, +Infinity never end a run)', () => {
    const sim = new Simulation({ seed: 1 });
    const kind = sim.on(() => {});
    expect(() => sim.after(Number.NaN, kind)).toThrow('Simulation.after: `delayMs` must be a finite number of ms, got NaN');
    expect(() => sim.at(Number.POSITIVE_INFINITY, kind)).toThrow(
      /Simulation\.at: `time` must be a finite number of ms, got Infinity/,
    );
    expect(() => sim.schedule(Number.NaN, () => {}, 0)).toThrow(/Simulation\.schedule: `delayMs`/);
    expect(() => sim.scheduleAt(Number.POSITIVE_INFINITY, () => {}, 0)).toThrow(/Simulation\.scheduleAt: `timeMs`/);
    // A time in the past still means now.
    sim.after(Number.NEGATIVE_INFINITY, kind);
    expect(sim.pending).toBe(1);
  });
});
