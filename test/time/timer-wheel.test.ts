import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TimerWheel, WheelEntry } from '../../src/time/timer-wheel.js';

/**
 * The wheel reads time through the function it is given; here a variable the test moves.
 * Its one native timer is real, so each test waits for that timer to fire — an event, not
 * a duration with a tolerance.
 */
function wheelAt(start = 0) {
  const time = { now: start };
  const wheel = new TimerWheel(() => time.now, 25);
  return { time, wheel };
}

/** Resolves once `count` callbacks ran (or rejects if the wheel never fires them). */
function firedTimes(count: number): { fired: string[]; done: Promise<void>; mark: (id: string) => void } {
  const fired: string[] = [];
  let resolve: () => void = () => undefined;
  const done = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    fired,
    done,
    mark: (id) => {
      fired.push(id);
      if (fired.length === count) resolve();
    },
  };
}

describe('TimerWheel (linked entries per bucket)', () => {
  it('a callback that cancels later entries of its own bucket does not stop the ones still live', async () => {
    const { time, wheel } = wheelAt();
    const { fired, done, mark } = firedTimes(3);
    const cancels: Array<() => void> = [];
    // All five land in the bucket ending at 25 ms. Entries fire newest first within a bucket.
    cancels.push(wheel.add(10, () => mark('a')));
    cancels.push(wheel.add(10, () => mark('b')));
    cancels.push(wheel.add(10, () => mark('c')));
    cancels.push(wheel.add(10, () => mark('d')));
    cancels.push(
      wheel.add(10, () => {
        mark('e');
        cancels[3]?.(); // the next in line
        cancels[1]?.(); // one further on
      }),
    );
    time.now = 100;
    await done;
    expect(fired.sort()).toEqual(['a', 'c', 'e']);
    expect(wheel.size).toBe(0);
  });

  it('a bucket emptied by cancels is let go, but for the one being filled (regression: a million long deadlines left a million empty buckets, scanned on every fire)', () => {
    const { time, wheel } = wheelAt();
    // Inbound clients each choosing another long deadline: one bucket per distinct slot.
    const cancels = Array.from({ length: 10_000 }, (_, i) => wheel.add(3_600_000 + i * 25, () => undefined));
    expect(wheel.bucketCount).toBe(10_000);
    for (const cancel of cancels) cancel();
    expect(wheel.size).toBe(0);
    expect(wheel.bucketCount).toBe(1);
    // Calls adding and cancelling timeouts of one length keep reusing the bucket being filled;
    // moving on to another, the emptied one goes.
    time.now = 10;
    for (let i = 0; i < 100; i++) wheel.add(10_000, () => undefined)();
    expect(wheel.bucketCount).toBe(1);
    // A live entry keeps its bucket.
    const keep = wheel.add(20_000, () => undefined);
    wheel.add(30_000, () => undefined)();
    expect(wheel.bucketCount).toBe(2);
    keep();
    expect(wheel.bucketCount).toBe(1);
    // Requests one after another, each with a deadline of its own: one bucket at a time.
    for (let i = 0; i < 1_000; i++) wheel.add(60_000 + i * 25, () => undefined)();
    expect(wheel.bucketCount).toBe(1);
  });

  it('cancelled entries never fire; live ones all fire once; size counts the live ones', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ ms: fc.integer({ min: 0, max: 200 }), cancel: fc.boolean() }), { minLength: 1, maxLength: 40 }),
        async (plan) => {
          const { time, wheel } = wheelAt();
          const live = plan.filter((p) => !p.cancel).length;
          const { fired, done, mark } = firedTimes(live);
          const cancels = plan.map((p, i) => wheel.add(p.ms, () => mark(String(i))));
          plan.forEach((p, i) => {
            if (p.cancel) cancels[i]?.();
          });
          expect(wheel.size).toBe(live);
          // Cancelling twice is harmless.
          plan.forEach((p, i) => {
            if (p.cancel) cancels[i]?.();
          });
          expect(wheel.size).toBe(live);
          if (live === 0) return;
          time.now = 1_000;
          await done;
          expect(fired.map(Number).sort((a, b) => a - b)).toEqual(plan.flatMap((p, i) => (p.cancel ? [] : [i])));
          expect(wheel.size).toBe(0);
        },
      ),
      { numRuns: 25, seed: 1313 },
    );
  });

  it('never fires early: an entry is due only once the clock has passed its delay, counted from `fromMs` when given', async () => {
    const { time, wheel } = wheelAt(1_000);
    const seen: Array<{ id: string; at: number }> = [];
    const { done, mark } = firedTimes(2);
    wheel.add(40, () => {
      seen.push({ id: 'from-now', at: time.now });
      mark('from-now');
    });
    // The caller read the clock at 990: due at 1030 or later, in the bucket ending at 1050.
    wheel.add(
      40,
      () => {
        seen.push({ id: 'from-hint', at: time.now });
        mark('from-hint');
      },
      990,
    );
    time.now = 1_030; // neither bucket (1050, 1050) is due yet
    await new Promise((r) => setTimeout(r, 60));
    expect(seen).toEqual([]);
    time.now = 1_050;
    await done;
    expect(seen.map((s) => s.id).sort()).toEqual(['from-hint', 'from-now']);
  });

  it('expireAfterUnstamped: the delay counts from the next stamp, whenever that comes; cancelled unstamped entries never fire', async () => {
    const { time, wheel } = wheelAt(1_000);
    const seen: Array<{ id: string; at: number }> = [];
    const { done, mark } = firedTimes(1);
    const late = new Target('late', (id) => {
      seen.push({ id, at: time.now });
      mark(id);
    });
    const cancelled = new Target('cancelled', (id) => seen.push({ id, at: time.now }));
    wheel.expireAfterUnstamped(40, late);
    wheel.expireAfterUnstamped(40, cancelled);
    expect(wheel.size).toBe(2);
    wheel.cancel(cancelled);
    expect(wheel.size).toBe(1);
    expect(wheel.bucketCount).toBe(0); // unfiled until stamped
    // Nothing stamps it while the clock runs past 1040: it was armed by a caller that read no
    // clock, so the wheel cannot know how long ago that was.
    time.now = 1_300;
    await new Promise((r) => setTimeout(r, 30));
    expect(seen).toEqual([]);
    wheel.stamp(1_300); // due at 1340 or later: the bucket ending at 1350
    time.now = 1_345;
    await new Promise((r) => setTimeout(r, 60));
    expect(seen).toEqual([]);
    time.now = 1_350;
    await done;
    expect(seen).toEqual([{ id: 'late', at: 1_350 }]);
    expect(wheel.size).toBe(0);
    wheel.stamp(1_400); // nothing left unstamped: harmless
    expect(wheel.bucketCount).toBe(0);
  });

  it('expireAfter: an entry carrying its own links; a cancelled one never expires, a live one expires once', async () => {
    const { time, wheel } = wheelAt();
    const { fired, done, mark } = firedTimes(2);
    const kept = new Target('kept', mark);
    const cancelled = new Target('cancelled', mark);
    wheel.expireAfter(10, kept);
    wheel.expireAfter(10, cancelled);
    wheel.add(10, () => mark('callback'));
    wheel.cancel(cancelled);
    wheel.cancel(cancelled); // twice is harmless
    expect(cancelled.wheel).toBeUndefined();
    expect(kept.wheel).toBe(wheel);
    expect(wheel.size).toBe(2);
    time.now = 100;
    await done;
    expect(fired.sort()).toEqual(['callback', 'kept']);
    expect(kept.wheel).toBeUndefined(); // fired: no longer armed
    wheel.cancel(kept); // after it fired: harmless
    expect(wheel.size).toBe(0);
  });
});

class Target extends WheelEntry {
  constructor(
    readonly id: string,
    private readonly mark: (id: string) => void,
  ) {
    super();
  }

  expire(): void {
    this.mark(this.id);
  }
}
