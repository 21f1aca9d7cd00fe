// Regression test: a call made inside a request's scope ends the same way at the request's
// deadline whichever of two timers set for that instant fires first — the request's own (which
// aborts the scope's signal) or the call's. It failed under load as a 500 where a 503 was due:
// the scope's signal won, the call rethrew the abort's reason, and the middleware was never
// told a call had given up.
import { describe, expect, it } from 'vitest';
import { DeadlineExceededError, downstream } from '../../src/index.js';
import { type DeadlineScope, runWithDeadline } from '../../src/runtime/deadline-context.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

const never = () => new Promise<never>(() => undefined);

interface Request {
  scope: DeadlineScope;
  told: string[];
}

/**
 * A request's scope as the server middleware builds it: a deadline `timeoutMs` from now, and a
 * signal its own timer aborts at that deadline — armed before any call inside it, so on the
 * virtual clock it fires first.
 */
function request(clock: VirtualClock, timeoutMs: number, withSignal: boolean): Request {
  const told: string[] = [];
  const scope: DeadlineScope = { deadline: clock.monotonic() + timeoutMs, onGiveUp: (reason) => told.push(reason) };
  if (withSignal) {
    const controller = new AbortController();
    clock.schedule(timeoutMs, () => controller.abort(new DeadlineExceededError({ outcome: 'unknown' })));
    scope.signal = controller.signal;
  }
  return { scope, told };
}

async function settle(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    (value) => `resolved ${String(value)}`,
    (error: { name?: string; reason?: string }) => `${error.name} ${error.reason ?? ''}`.trim(),
  );
}

describe('a call inside a request scope, at the request’s deadline', () => {
  it.each([false, true])(
    'an attempt in flight gives up with reason deadline, and says so to the scope (scope signal: %s)',
    async (withSignal) => {
      const clock = new VirtualClock();
      const d = downstream('api', { clock, random: new SeededRandom(11), retry: { maxAttempts: 3 }, budget: false });
      const { scope, told } = request(clock, 300, withSignal);
      const outcome = settle(runWithDeadline(scope, () => d.call(never)));
      await clock.advance(300);
      expect(await outcome).toBe('GiveUpError deadline');
      expect(told).toEqual(['deadline']);
    },
  );

  it.each([false, true])(
    'a call waiting in the bulkhead’s line gives up with reason deadline too (scope signal: %s)',
    async (withSignal) => {
      const clock = new VirtualClock();
      const d = downstream('api', {
        clock,
        random: new SeededRandom(12),
        retry: { maxAttempts: 3 },
        budget: false,
        bulkhead: { maxConcurrent: 1, maxQueue: 5 },
      });
      // Holds the only slot for good: the next call waits in line.
      d.call(never).catch(() => undefined);
      const { scope, told } = request(clock, 300, withSignal);
      const outcome = settle(runWithDeadline(scope, () => d.call(() => Promise.resolve('late'))));
      await clock.advance(300);
      expect(await outcome).toBe('GiveUpError deadline');
      expect(told).toEqual(['deadline']);
    },
  );

  it.each([false, true])('a fallback answers for it (scope signal: %s)', async (withSignal) => {
    const clock = new VirtualClock();
    const d = downstream('api', {
      clock,
      random: new SeededRandom(13),
      budget: false,
      fallback: ({ reason }) => `fallback after ${reason}`,
    });
    const { scope } = request(clock, 300, withSignal);
    const outcome = settle(runWithDeadline(scope, () => d.call(never)));
    await clock.advance(300);
    expect(await outcome).toBe('resolved fallback after deadline');
  });

  it.each([false, true])(
    'a verify hook that has not answered by then: the call gives up with reason deadline (scope signal: %s)',
    async (withSignal) => {
      const clock = new VirtualClock();
      const d = downstream('api', {
        clock,
        random: new SeededRandom(15),
        retry: { maxAttempts: 3 },
        attemptTimeoutMs: 100,
        idempotent: false,
        budget: false,
      });
      const { scope, told } = request(clock, 300, withSignal);
      // The first attempt times out (outcome unknown), so the hook is asked whether it took effect.
      const outcome = settle(runWithDeadline(scope, () => d.call(never, { verify: never })));
      await clock.advance(300);
      expect(await outcome).toBe('GiveUpError deadline');
      expect(told).toEqual(['deadline']);
    },
  );

  it('a beforeAttempt hook waiting on the signal: the call gives up with reason deadline', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', {
      clock,
      random: new SeededRandom(16),
      retry: { maxAttempts: 3, backoff: { baseMs: 10, jitter: 'none' } },
      budget: false,
    });
    const { scope, told } = request(clock, 300, true);
    const reset = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    const outcome = settle(
      runWithDeadline(scope, () =>
        d.call(() => Promise.reject(reset), {
          beforeAttempt: ({ attempt, signal }) =>
            attempt === 1
              ? undefined
              : new Promise<void>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason))),
        }),
      ),
    );
    await clock.advance(300);
    expect(await outcome).toBe('GiveUpError deadline');
    expect(told).toEqual(['deadline']);
  });

  it('an abort for another reason (the client left) still ends the call with that reason, no give-up told', async () => {
    const clock = new VirtualClock();
    const d = downstream('api', { clock, random: new SeededRandom(14), retry: { maxAttempts: 3 }, budget: false });
    const told: string[] = [];
    const controller = new AbortController();
    const scope: DeadlineScope = { deadline: clock.monotonic() + 300, signal: controller.signal, onGiveUp: (r) => told.push(r) };
    const outcome = settle(runWithDeadline(scope, () => d.call(never)));
    await clock.advance(100);
    controller.abort(new DOMException('The client closed the connection', 'AbortError'));
    expect(await outcome).toBe('AbortError');
    expect(told).toEqual([]);
  });
});
