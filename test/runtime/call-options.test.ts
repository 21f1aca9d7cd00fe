import { describe, expect, it } from 'vitest';
import { type CallOptions, downstream, type GiveUpError, InvalidOptionsError, isInvalidOptionsError } from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { settle } from '../support/settle.js';

/**
 * The edges a newcomer meets first: per-call options are checked as strictly as downstream
 * options, and the off-by-default policies accept `true` for "with the defaults".
 */
describe('per-call options are strict', () => {
  const api = downstream('payments', { clock: new VirtualClock(), random: new SeededRandom(1) });

  it('an unknown per-call option rejects the call, naming the option and the known ones', async () => {
    let ran = false;
    const call = api.call(
      async () => {
        ran = true;
        return 1;
      },
      { retries: 2 } as unknown as CallOptions<number>,
    );
    await expect(call).rejects.toBeInstanceOf(InvalidOptionsError);
    const error = await call.catch((e: unknown) => e);
    expect(isInvalidOptionsError(error)).toBe(true);
    expect((error as InvalidOptionsError).problems).toEqual([
      'Unknown option `retries` (known: signal, deadline, timeoutMs, attemptTimeoutMs, idempotent, key, budgetKey, partition, onDiscard, verify, fallback, onAttemptError, classify, beforeAttempt)',
    ]);
    expect((error as Error).message).toContain("Invalid call on 'payments' options");
    expect(ran).toBe(false);
  });

  it('reports every problem at once, each with the bad value', async () => {
    const error = await api
      .call(async () => 1, { timeoutMs: -1, key: 7, verify: 'yes', typo: true } as unknown as CallOptions<number>)
      .catch((e: unknown) => e);
    expect((error as InvalidOptionsError).problems).toEqual([
      expect.stringContaining('Unknown option `typo`'),
      'Expected `timeoutMs` ≥ 0, got -1',
      'Expected `key` to be a string, got 7',
      'Expected `verify` to be a function, got "yes"',
    ]);
  });

  it('accepts every documented option', async () => {
    const controller = new AbortController();
    const value = await api.call(async () => 'ok', {
      signal: controller.signal,
      timeoutMs: 1_000,
      attemptTimeoutMs: 500,
      idempotent: true,
      key: 'eu',
      budgetKey: 'payments:read',
      fallback: () => 'fallback',
    });
    expect(value).toBe('ok');
  });
});

describe('`true` turns an off-by-default policy on with its defaults', () => {
  it('breaker: true opens after the default 5 failures in a row', async () => {
    const clock = new VirtualClock();
    const api = downstream('flaky', { clock, random: new SeededRandom(2), retry: false, breaker: true, budget: false });
    const failure = Object.assign(new Error('HTTP 503'), { status: 503 });
    for (let i = 0; i < 5; i++) await api.call(() => Promise.reject(failure)).catch(() => undefined);
    const error = (await api.call(async () => 'never').catch((e: unknown) => e)) as GiveUpError;
    expect(error.reason).toBe('circuit-open');
  });

  /** Whether the 26th of 26 calls held open at once is refused (the default bulkhead holds 25, queues none). */
  async function refusesThe26th(bulkhead: boolean): Promise<boolean> {
    const clock = new VirtualClock();
    const api = downstream('held', { clock, bulkhead, retry: false, budget: false });
    const release: (() => void)[] = [];
    const held = Array.from({ length: 25 }, () => api.call(() => new Promise<void>((resolve) => release.push(resolve))));
    await clock.advance(0);
    const last = await Promise.race([
      api.call(async () => 'served').catch((e: unknown) => e),
      clock.advance(0).then(() => 'still waiting'),
    ]);
    for (const r of release) r();
    await Promise.all(held);
    if (last === 'served') return false;
    expect(((last as GiveUpError).cause as { why: string }).why).toBe('queue-full');
    return true;
  }

  /** The waits a call's retries are scheduled with, against a callee that always answers 429. */
  async function backoffsAgainst429(pacing: boolean): Promise<number[]> {
    const clock = new VirtualClock();
    const api = downstream('paced', {
      clock,
      budget: false,
      pacing,
      retry: { maxAttempts: 4, backoff: { baseMs: 100, factor: 2, jitter: 'none' } },
    });
    const waits: number[] = [];
    api.on('retry-scheduled', (e) => waits.push(e.backoffMs));
    const call = api.call(async () => Promise.reject(Object.assign(new Error('HTTP 429'), { status: 429 }))).catch(() => 'done');
    for (let i = 0; i < 20; i++) await clock.advance(1_000);
    expect(await call).toBe('done');
    return waits;
  }

  it('bulkhead: true holds the default 25 calls at once and refuses the 26th', async () => {
    expect(await refusesThe26th(true)).toBe(true);
    expect(await refusesThe26th(false)).toBe(false);
  });

  it('pacing: true builds a pacer: once the callee throttles, the retries wait for its slots, not a growing backoff', async () => {
    expect(await backoffsAgainst429(true)).toEqual([100, 100, 100]);
    expect(await backoffsAgainst429(false)).toEqual([100, 200, 400]);
  });

  it('false keeps them off; anything else is reported', () => {
    const off = downstream('off', { breaker: false, bulkhead: false, pacing: false });
    expect(() => off.breakerState()).toThrow(/no breaker/);
    expect(() => downstream('bad', { breaker: 'yes' as unknown as boolean })).toThrow(
      /breaker: Expected an options object, got "yes"/,
    );
  });
});

describe('a call of its own attempt timeout (attemptTimeoutMs per call)', () => {
  it("bounds each attempt in place of the downstream's; the deadline still bounds it", async () => {
    const clock = new VirtualClock();
    const d = downstream('api', { clock, random: new SeededRandom(4), attemptTimeoutMs: 1_000, retry: false });
    const answersAt = (ms: number) => () => new Promise<string>((resolve) => clock.schedule(ms, () => resolve('ok')));
    const long = settle(clock, d.call(answersAt(2_000), { attemptTimeoutMs: 3_000 }));
    expect((await long).value).toBe('ok');
    const cut = await settle(clock, d.call(answersAt(2_000)));
    expect((cut.error as { reason?: string }).reason).toBe('max-attempts');
    const short = await settle(clock, d.call(answersAt(2_000), { attemptTimeoutMs: 3_000, timeoutMs: 1_500 }));
    expect((short.error as { reason?: string }).reason).toBe('deadline');
  });

  it('is refused when it is not a duration of at least 1 ms', async () => {
    const d = downstream('api', { retry: false });
    for (const bad of [0, -5, Number.NaN, '100']) {
      await expect(d.call(() => 'ok', { attemptTimeoutMs: bad as number })).rejects.toThrow(/attemptTimeoutMs/);
    }
  });
});
