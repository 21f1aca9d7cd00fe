import { describe, expect, it } from 'vitest';
import { downstream } from '../../src/index.js';
import { VirtualClock } from '../../src/testing/index.js';

describe('bulkhead slots (regression)', () => {
  it('regression: the slot is held until the operation settles, even after its attempt timed out — running work never exceeds maxConcurrent', async () => {
    const clock = new VirtualClock();
    const api = downstream('c', {
      clock,
      retry: false,
      budget: false,
      attemptTimeoutMs: 50,
      bulkhead: { maxConcurrent: 5, maxQueue: 100, queueTimeoutMs: 10_000 },
    });
    let running = 0;
    let peak = 0;
    // Each operation ignores its abort signal and runs 200 ms, four times its attempt timeout.
    const stubborn = () =>
      new Promise<string>((resolve) => {
        running++;
        peak = Math.max(peak, running);
        clock.schedule(200, () => {
          running--;
          resolve('late');
        });
      });
    const calls = Array.from({ length: 40 }, () => api.call(stubborn).catch((e: unknown) => e));
    for (let t = 0; t < 5_000; t += 10) await clock.advance(10);
    await Promise.all(calls);
    expect(peak).toBe(5);
    expect(running).toBe(0);
  });

  it('a caller abort frees the slot only once the abandoned operation settles', async () => {
    const clock = new VirtualClock();
    const api = downstream('c', { clock, retry: false, budget: false, bulkhead: { maxConcurrent: 1 } });
    let finish: (() => void) | undefined;
    const controller = new AbortController();
    const first = api
      .call(() => new Promise<void>((resolve) => (finish = resolve)), { signal: controller.signal })
      .catch((e) => e);
    await clock.advance(0);
    controller.abort(new Error('caller gave up'));
    await first;
    // The abandoned operation still runs: the one slot is taken.
    const refused = await api.call(async () => 'second').catch((e: unknown) => e);
    expect((refused as Error).name).toBe('GiveUpError');
    finish?.();
    await clock.advance(0);
    expect(await api.call(async () => 'third')).toBe('third');
  });
});
