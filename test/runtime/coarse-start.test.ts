import { describe, expect, it } from 'vitest';
import { downstream, isAttemptTimeoutError } from '../../src/index.js';
import { SystemClock } from '../../src/time/system-clock.js';

/** Spins on the CPU for `ms` of the clock's time: the event loop is blocked meanwhile. */
function blockLoop(clock: SystemClock, ms: number): void {
  const until = clock.monotonic() + ms;
  while (clock.monotonic() < until) {
    // busy: no timer can fire, so the coarse reading goes stale
  }
}

describe('calls that start on the coarse clock', () => {
  it('the common call reads the coarse clock; a call with a deadline, a downstream with a total timeout or pacing, or a call someone listens to, reads the clock', async () => {
    const plainClock = new SystemClock();
    const plain = downstream('coarse-plain', { clock: plainClock, budget: {}, breaker: {}, bulkhead: { maxConcurrent: 8 } });
    await plain.call(async () => 1);
    expect(plainClock.coarseTicking).toBe(true);

    const timedClock = new SystemClock();
    const timed = downstream('coarse-timed', { clock: timedClock, totalTimeoutMs: 5_000 });
    await timed.call(async () => 1);
    const withDeadline = downstream('coarse-deadline', { clock: timedClock });
    await withDeadline.call(async () => 1, { timeoutMs: 5_000 });
    expect(timedClock.coarseTicking).toBe(false);

    const pacedClock = new SystemClock();
    const paced = downstream('coarse-paced', { clock: pacedClock, pacing: {} });
    await paced.call(async () => 1);
    expect(pacedClock.coarseTicking).toBe(false); // pacing times its sends: it reads the clock

    const heardClock = new SystemClock();
    const heard = downstream('coarse-heard', { clock: heardClock });
    const durations: number[] = [];
    heard.on('attempt-end', (event) => durations.push(event.durationMs));
    await heard.call(async () => 1);
    expect(durations).toHaveLength(1);
    expect(heardClock.coarseTicking).toBe(false); // its events time the attempt from a real start
  });

  it('an attempt timeout counted from a coarse start never fires early, even after the loop was blocked', async () => {
    const clock = new SystemClock();
    const api = downstream('coarse-timeout', { clock, attemptTimeoutMs: 1_000, retry: { maxAttempts: 1 } });
    await api.call(async () => 1);
    expect(clock.coarseTicking).toBe(true); // the coarse clock ticks from here
    // The loop blocks for 300 ms: the coarse reading is that stale when the next call starts.
    blockLoop(clock, 300);
    const started = clock.monotonic();
    let abortedAfter = Number.NaN;
    let reason: unknown;
    await api
      .call(
        (ctx) =>
          new Promise<never>((_, reject) => {
            ctx.signal.addEventListener('abort', () => {
              abortedAfter = clock.monotonic() - started;
              reason = ctx.signal.reason;
              reject(ctx.signal.reason);
            });
          }),
      )
      .catch(() => undefined);
    expect(isAttemptTimeoutError(reason)).toBe(true);
    expect(abortedAfter).toBeGreaterThanOrEqual(1_000);
  });
});
