import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { downstream } from '../../src/index.js';
import { currentDeadlineScope, type DeadlineScope, runWithDeadline } from '../../src/runtime/deadline-context.js';
import { SeededRandom, SystemClock, VirtualClock } from '../../src/testing/index.js';

/*
 * Timers are shared: the attempt timeouts of many calls wait in one wheel under one native
 * timer, which fires in the async context of whichever request armed it. What a call does
 * when its attempt is cut short — its events, its give-up, its next attempt — must still run
 * in the context the call was made in, or one request's work is done under another's.
 * On the virtual clock, timers fire in the context of whoever advances it: here request A.
 */

const never = () => new Promise<never>(() => undefined);

function scope(log: string[], name: string): DeadlineScope {
  return { deadline: Number.POSITIVE_INFINITY, onGiveUp: (reason) => log.push(`${name}:${reason}`) };
}

describe('a call cut short by a timer armed elsewhere', () => {
  it('tells its give-up to the scope it was made in, not to the request whose context the timer fired in', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', { clock, random: new SeededRandom(1), retry: false, attemptTimeoutMs: 1_000 });
    const told: string[] = [];
    const b = runWithDeadline(scope(told, 'B'), () => d.call(never));
    const outcome = b.then(
      () => 'resolved',
      (error: { reason?: string }) => error.reason,
    );
    await runWithDeadline(scope(told, 'A'), () => clock.advance(1_000));
    expect(await outcome).toBe('max-attempts');
    expect(told).toEqual(['B:max-attempts']);
  });

  it('runs its next attempt in its own async context: its deadline scope and the caller’s own storage', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', {
      clock,
      random: new SeededRandom(2),
      retry: { maxAttempts: 2, backoff: { baseMs: 1, jitter: 'none' } },
      attemptTimeoutMs: 1_000,
    });
    const request = new AsyncLocalStorage<string>();
    const seen: string[] = [];
    const told: string[] = [];
    const bScope = scope(told, 'B');
    const b = request.run('B', () =>
      runWithDeadline(bScope, () =>
        d.call(({ attempt }) => {
          seen.push(`${attempt}:${request.getStore()}:${currentDeadlineScope()?.onGiveUp === bScope.onGiveUp ? 'B' : 'other'}`);
          return attempt === 1 ? never() : Promise.resolve('ok');
        }),
      ),
    );
    await request.run('A', () => runWithDeadline(scope(told, 'A'), () => clock.advance(1_000)));
    await request.run('A', () => runWithDeadline(scope(told, 'A'), () => clock.advance(10)));
    expect(await b).toBe('ok');
    expect(seen).toEqual(['1:B:B', '2:B:B']);
  });

  it('on the real clock too: a give-up on the shared timer wheel goes to its own request', async () => {
    // The wheel takes timeouts of 1 s and more; A's call arms it, B's times out on it.
    const clock = new SystemClock();
    const d = downstream('api', { clock, random: new SeededRandom(3), retry: false, attemptTimeoutMs: 1_000 });
    const told: string[] = [];
    await runWithDeadline(scope(told, 'A'), () => d.call(() => Promise.resolve('a')));
    const b = runWithDeadline(scope(told, 'B'), () => d.call(never));
    await expect(b).rejects.toMatchObject({ reason: 'max-attempts' });
    expect(told).toEqual(['B:max-attempts']);
  });
});
