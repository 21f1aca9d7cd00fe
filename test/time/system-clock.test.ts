import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/time/system-clock.js';
import { WheelEntry } from '../../src/time/timer-wheel.js';

describe('SystemClock beyond the native timer limit', () => {
  it('a timeout or sleep longer than 2^31 − 1 ms does not fire at once (and warns about nothing)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    let fired = false;
    const cancel = systemClock.schedule(30 * 86_400_000, () => {
      fired = true;
    });
    const controller = new AbortController();
    let slept = false;
    const sleeping = systemClock.sleep(40 * 86_400_000, controller.signal).then(
      () => (slept = true),
      () => undefined,
    );
    // Let the event loop turn a few times: an overflowing native timer would fire after 1 ms.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    await systemClock.sleep(20);
    expect(fired).toBe(false);
    expect(slept).toBe(false);
    cancel();
    controller.abort();
    await sleeping;
    process.off('warning', onWarning);
    expect(warnings).not.toContain('TimeoutOverflowWarning');
  });

  it('expireAfter: a short timeout on a native timer fires its entry unless cancelled; a long one waits in the wheel', async () => {
    const fired: string[] = [];
    let resolve: () => void = () => undefined;
    const done = new Promise<void>((r) => {
      resolve = r;
    });
    const cancelled = systemClock.expireAfter(1, new Entry(() => fired.push('cancelled')));
    systemClock.expireAfter(
      5,
      new Entry(() => {
        fired.push('kept');
        resolve();
      }),
    );
    expect(cancelled).toBeDefined();
    cancelled?.cancel();
    await done;
    expect(fired).toEqual(['kept']);
    const before = systemClock.pendingWheelTimers;
    const long = new Entry(() => fired.push('long'));
    expect(systemClock.expireAfter(60_000, long)).toBeUndefined();
    expect(systemClock.pendingWheelTimers).toBe(before + 1);
    long.wheel?.cancel(long);
    expect(systemClock.pendingWheelTimers).toBe(before);
    expect(fired).toEqual(['kept']);
  });
});

class Entry extends WheelEntry {
  constructor(private readonly onExpire: () => void) {
    super();
  }

  expire(): void {
    this.onExpire();
  }
}

describe('SystemClock.now()', () => {
  it('is the wall clock other code reads — never ahead of Date.now() read right after it (regression: performance.timeOrigin + performance.now() read ~0.5 ms ahead, and a deadline handed to grpc-js went out that much longer)', () => {
    for (let i = 0; i < 1_000; i++) {
      const ours = systemClock.now();
      expect(ours).toBeLessThanOrEqual(Date.now());
    }
  });
});
