import { describe, expect, it } from 'vitest';
import { type DownstreamOptions, downstream, type GiveUpError } from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { settle } from '../support/settle.js';

/**
 * A wait hint reaches the pacer from any answer, retried or not, and the pacer holds every
 * later retry to that callee until it has passed. So the pacer is told a hint only within the
 * caller's own limits: a hostile or broken server's `Retry-After` must not stall the caller.
 */

function answer(status: number, headers: Record<string, string> = {}): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status, response: { status, headers } });
}

function paced(options: DownstreamOptions = {}) {
  const clock = new VirtualClock();
  const api = downstream('api', {
    clock,
    random: new SeededRandom(3),
    budget: false,
    pacing: {},
    retry: { maxAttempts: 3, backoff: { baseMs: 5, capMs: 10, jitter: 'none' }, maxRetryAfterMs: 10_000 },
    totalTimeoutMs: 60_000,
    ...options,
  });
  return { clock, api };
}

/** A call answered 429 once (no hint), then served. */
function throttledOnce(): () => Promise<string> {
  let n = 0;
  return async () => {
    if (n++ === 0) throw answer(429);
    return 'ok';
  };
}

describe('wait hints the pacer is told', () => {
  it('a hint beyond the caller’s maxRetryAfterMs holds later retries no longer than that limit', async () => {
    const { clock, api } = paced();
    const first = await settle(
      clock,
      api.call(() => Promise.reject(answer(429, { 'retry-after': '99999999999' }))),
    );
    expect((first.error as GiveUpError).reason).toBe('hint-too-long');
    const startedAt = clock.monotonic();
    const second = await settle(clock, api.call(throttledOnce()));
    expect(second.value).toBe('ok');
    // Held for the limit at most (it was held for the whole 60 s deadline, then refused).
    expect(second.at - startedAt).toBeLessThanOrEqual(10_000 + 100);
  });

  it('a Retry-After on an answer that is not retried (404) holds no later retry', async () => {
    const { clock, api } = paced();
    const first = await settle(
      clock,
      api.call(() => Promise.reject(answer(404, { 'retry-after': '8' }))),
    );
    expect((first.error as GiveUpError).reason).toBe('not-retryable');
    const startedAt = clock.monotonic();
    const second = await settle(clock, api.call(throttledOnce()));
    expect(second.value).toBe('ok');
    // A paced retry, not one held 8 s by the 404's hint.
    expect(second.at - startedAt).toBeLessThan(1_000);
  });

  it('a retry the hint holds past its own deadline is refused at once, not at the deadline', async () => {
    const { clock, api } = paced({ totalTimeoutMs: 3_000 });
    const first = await settle(
      clock,
      api.call(() => Promise.reject(answer(503, { 'retry-after': '8' }))),
    );
    expect((first.error as GiveUpError).reason).toBe('hint-too-long');
    const startedAt = clock.monotonic();
    const second = await settle(clock, api.call(throttledOnce()));
    expect((second.error as GiveUpError).reason).toBe('deadline');
    expect(second.at - startedAt).toBeLessThan(100);
  });

  it('a hint within the limits still holds the callee’s later retries until it has passed', async () => {
    const { clock, api } = paced();
    const first = await settle(
      clock,
      api.call(() => Promise.reject(answer(503, { 'retry-after': '4' })), { timeoutMs: 1_000 }),
    );
    expect((first.error as GiveUpError).reason).toBe('hint-too-long');
    const startedAt = clock.monotonic();
    const second = await settle(clock, api.call(throttledOnce()));
    expect(second.value).toBe('ok');
    expect(second.at - startedAt).toBeGreaterThanOrEqual(4_000 - 100);
  });
});
