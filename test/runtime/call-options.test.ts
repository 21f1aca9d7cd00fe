import { describe, expect, it } from 'vitest';
import { type CallOptions, downstream, type GiveUpError, InvalidOptionsError, isInvalidOptionsError } from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

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
      'Unknown option `retries` (known: signal, deadline, timeoutMs, idempotent, key, budgetKey, partition, onDiscard, verify, fallback, onAttemptError, classify, beforeAttempt)',
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

  it('bulkhead: true and pacing: true build their policies with the defaults', async () => {
    const api = downstream('both', { clock: new VirtualClock(), bulkhead: true, pacing: true });
    expect(await api.call(async () => 42)).toBe(42);
  });

  it('false keeps them off; anything else is reported', () => {
    expect(() => downstream('off', { breaker: false, bulkhead: false, pacing: false })).not.toThrow();
    expect(() => downstream('bad', { breaker: 'yes' as unknown as boolean })).toThrow(
      /breaker: Expected an options object, got "yes"/,
    );
  });
});
