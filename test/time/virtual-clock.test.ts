import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/time/virtual-clock.js';

describe('VirtualClock', () => {
  it('fires timers in deadline order, ties in scheduling order', () => {
    const clock = new VirtualClock();
    const fired: string[] = [];
    clock.schedule(20, () => fired.push('b'));
    clock.schedule(10, () => fired.push('a1'));
    clock.schedule(10, () => fired.push('a2'));
    while (clock.runNext());
    expect(fired).toEqual(['a1', 'a2', 'b']);
    expect(clock.monotonic()).toBe(20);
  });

  it('cancelled timers never fire', () => {
    const clock = new VirtualClock();
    let fired = false;
    const cancel = clock.schedule(5, () => {
      fired = true;
    });
    cancel();
    expect(clock.runNext()).toBe(false);
    expect(fired).toBe(false);
  });

  it('sleep resolves after advance and rejects at once with the abort reason', async () => {
    const clock = new VirtualClock();
    const done = clock.sleep(100).then(() => clock.monotonic());
    await clock.advance(100);
    expect(await done).toBe(100);

    const controller = new AbortController();
    const sleeping = clock.sleep(1_000, controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    expect(clock.pending).toBe(0);
  });
});
