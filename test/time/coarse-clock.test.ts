import { describe, expect, it } from 'vitest';
import { CoarseClock } from '../../src/time/coarse-clock.js';

/**
 * The coarse clock reads time through the function it is given (here a variable the test
 * moves) and ticks on a real interval; the tests wait for ticks to happen (an event: an interval
 * of 2 ms fires before a timeout of 20 ms set after it), never for a duration with a tolerance.
 */
function coarseAt(start: number) {
  const time = { now: start };
  const ticks: number[] = [];
  const clock = new CoarseClock(
    () => time.now,
    2,
    (nowMs) => ticks.push(nowMs),
  );
  return { time, ticks, clock };
}

const afterTicks = () => new Promise((r) => setTimeout(r, 20));

describe('CoarseClock', () => {
  it('the first read after a quiet spell is the clock itself; later reads lag until a tick, never ahead', async () => {
    const { time, ticks, clock } = coarseAt(100);
    expect(clock.ticking).toBe(false);
    expect(clock.now()).toBe(100);
    expect(clock.ticking).toBe(true);
    time.now = 103;
    expect(clock.now()).toBe(100); // no tick yet: the reading lags, it never leads
    await afterTicks();
    expect(ticks.length).toBeGreaterThan(0);
    expect(ticks[0]).toBe(103);
    expect(clock.now()).toBe(103);
  });

  it('stops ticking after a tick that finds no read since the previous one, and starts again on the next read', async () => {
    const { time, ticks, clock } = coarseAt(0);
    clock.now();
    await afterTicks();
    await afterTicks();
    expect(clock.ticking).toBe(false);
    const ticked = ticks.length;
    await afterTicks();
    expect(ticks.length).toBe(ticked); // stopped: no tick while nobody reads
    time.now = 5_000;
    expect(clock.now()).toBe(5_000); // restarted on the clock itself, not a stale reading
    expect(clock.ticking).toBe(true);
  });
});
