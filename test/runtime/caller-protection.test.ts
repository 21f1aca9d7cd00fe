import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { type DownstreamOptions, downstream, type GiveUpError, isInvalidOptionsError, runWithDeadline } from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { settle } from '../support/settle.js';

/**
 * The call's life cycle must never hurt its caller: a slot or a listener is given back however
 * the call ends, a hook that never answers cannot hang it, and what ended it is reported as
 * what it was. Each case here did before: it leaked, hung or misreported.
 */

function setup(options: DownstreamOptions) {
  const clock = new VirtualClock();
  const api = downstream('api', { clock, random: new SeededRandom(8), budget: false, ...options });
  return { clock, api };
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/**
 * Call A holds the only slot, call B waits in line for it; A ends, the slot goes to B, and B's
 * caller aborts in the same turn (the loser of a race). Then C must find the slot free.
 */
async function abortJustGranted(options: DownstreamOptions) {
  const { clock, api } = setup({ retry: false, ...options });
  const a = deferred<string>();
  const losing = new AbortController();
  const first = api.call(() => a.promise);
  const second = api.call(async () => 'B', { signal: losing.signal });
  await clock.advance(0);
  a.promise.then(() => losing.abort(new Error('lost the race')));
  a.resolve('A');
  const ended = [await settle(clock, first), await settle(clock, second)];
  const third = await settle(
    clock,
    api.call(async () => 'C'),
  );
  return { ended: ended.map((e) => e.value ?? (e.error as Error).message), third: third.value, inFlight: api.stats().inFlight };
}

describe('slots are given back however the call ends', () => {
  it('a bulkhead slot granted to a caller who aborts in that same turn', async () => {
    const r = await abortJustGranted({ bulkhead: { maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 500 } });
    expect(r).toEqual({ ended: ['A', 'lost the race'], third: 'C', inFlight: 0 });
  });

  it('a slot of the adaptive concurrency limit granted to a caller who aborts in that same turn', async () => {
    const r = await abortJustGranted({
      concurrency: { initialLimit: 1, minLimit: 1, maxLimit: 1, probeConcurrency: 1, maxQueue: 5, queueTimeoutMs: 500 },
    });
    expect(r).toEqual({ ended: ['A', 'lost the race'], third: 'C', inFlight: 0 });
  });

  it('an operation returning a thenable whose then() throws fails the attempt like a throw: retried, its slot free', async () => {
    const { clock, api } = setup({
      bulkhead: { maxConcurrent: 1 },
      retry: { maxAttempts: 2, backoff: { baseMs: 1, jitter: 'none' } },
    });
    let runs = 0;
    const broken = {
      // biome-ignore lint/suspicious/noThenProperty: a broken thenable is the point
      then() {
        throw new Error('broken thenable');
      },
    };
    const r = await settle(
      clock,
      api.call(() => {
        runs++;
        return broken as unknown as Promise<string>;
      }),
    );
    expect((r.error as GiveUpError).reason).toBe('max-attempts');
    expect(runs).toBe(2);
    expect(
      (
        await settle(
          clock,
          api.call(async () => 'next'),
        )
      ).value,
    ).toBe('next');
  });

  it('a hedge that wins: the first attempt, still running, keeps its bulkhead slot until its operation settles', async () => {
    const { clock, api } = setup({ retry: false, bulkhead: { maxConcurrent: 2 }, hedging: { delayMs: 50, maxExtraLoad: 1 } });
    let running = 0;
    let peak = 0;
    let n = 0;
    const op = async () => {
      const mine = ++n;
      running++;
      peak = Math.max(peak, running);
      // The first attempt ignores its abort and runs 300 ms; the hedge answers in 10.
      await clock.sleep(mine === 1 ? 300 : 10);
      running--;
      return mine;
    };
    const hedged = await settle(clock, api.call(op));
    expect(hedged.value).toBe(2);
    // The first attempt still runs: with it, one slot of two is free, so two more calls
    // cannot both run now (before, both did: three operations at once).
    const more = [api.call(op, { idempotent: false }), api.call(op, { idempotent: false })];
    await clock.advance(0);
    expect(running).toBe(2);
    for (const p of more) await settle(clock, p).catch(() => undefined);
    await clock.advance(1_000);
    expect(peak).toBe(2);
  });
});

describe('what ends a call is what it reports', () => {
  it('an inbound request that already ended stops a call made with the caller’s own live signal', async () => {
    const { clock, api } = setup({ retry: false });
    const request = new AbortController();
    const reason = new Error('client went away');
    request.abort(reason);
    let ran = false;
    const call = runWithDeadline({ deadline: Number.POSITIVE_INFINITY, signal: request.signal }, () =>
      api.call(
        async () => {
          ran = true;
          return 'sent anyway';
        },
        { signal: new AbortController().signal },
      ),
    );
    expect((await settle(clock, call)).error).toBe(reason);
    expect(ran).toBe(false);
  });

  it('a deadline that passes while the call waits in a bulkhead’s line gives up with reason deadline', async () => {
    const { clock, api } = setup({ retry: false, bulkhead: { maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 10_000 } });
    const holder = api.call(() => clock.sleep(1_000));
    const waiting = await settle(
      clock,
      api.call(async () => 'late', { timeoutMs: 50 }),
    );
    expect((waiting.error as GiveUpError).reason).toBe('deadline');
    expect(waiting.at).toBe(50);
    await settle(clock, holder);
  });

  it('a line’s own queue timeout, before the deadline, is still a refusal (rejected)', async () => {
    const { clock, api } = setup({ retry: false, bulkhead: { maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 20 } });
    const holder = api.call(() => clock.sleep(1_000));
    const waiting = await settle(
      clock,
      api.call(async () => 'late', { timeoutMs: 50 }),
    );
    expect((waiting.error as GiveUpError).reason).toBe('rejected');
    expect(waiting.at).toBe(20);
    await settle(clock, holder);
  });

  it('a signal option that is no AbortSignal is refused up front, and the downstream works on', async () => {
    const { clock, api } = setup({ retry: false, bulkhead: { maxConcurrent: 1 } });
    const bad = await settle(
      clock,
      api.call(async () => 'x', { signal: { aborted: false } as unknown as AbortSignal }),
    );
    expect(isInvalidOptionsError(bad.error)).toBe(true);
    expect(String((bad.error as Error).message)).toContain(
      'Expected `signal` to be an AbortSignal, got an object that is not one',
    );
    expect(
      (
        await settle(
          clock,
          api.call(async () => 'y'),
        )
      ).value,
    ).toBe('y');
  });
});

describe('a verify hook that never answers', () => {
  const attemptThenVerify = (verify: () => Promise<boolean>) => {
    const { clock, api } = setup({ idempotent: false, retry: { maxAttempts: 3, backoff: { baseMs: 1, jitter: 'none' } } });
    let attempts = 0;
    return {
      clock,
      attempts: () => attempts,
      call: (options: { signal?: AbortSignal; timeoutMs?: number }) =>
        api.call(
          async () => {
            attempts++;
            throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
          },
          { ...options, verify },
        ),
    };
  };

  it('ends at the caller’s abort, with its reason', async () => {
    const t = attemptThenVerify(() => new Promise<boolean>(() => undefined));
    const controller = new AbortController();
    const reason = new Error('caller gave up');
    t.clock.schedule(50, () => controller.abort(reason));
    const r = await settle(t.clock, t.call({ signal: controller.signal }));
    expect(r.error).toBe(reason);
    expect(r.at).toBe(50);
    expect(t.attempts()).toBe(1);
  });

  it('ends at the call’s deadline, reason deadline, with no attempt after it', async () => {
    const t = attemptThenVerify(() => new Promise<boolean>(() => undefined));
    const r = await settle(t.clock, t.call({ timeoutMs: 200 }));
    expect((r.error as GiveUpError).reason).toBe('deadline');
    expect(r.at).toBe(200);
    expect(t.attempts()).toBe(1);
  });

  it('a verify that answers in time still decides (not applied: the retry goes)', async () => {
    let clockRef: VirtualClock | undefined;
    const t = attemptThenVerify(() => (clockRef as VirtualClock).sleep(10).then(() => false));
    clockRef = t.clock;
    const r = await settle(t.clock, t.call({ timeoutMs: 5_000 }));
    expect((r.error as GiveUpError).reason).toBe('max-attempts');
    expect(t.attempts()).toBe(3);
  });
});

describe('listeners on a caller’s signal', () => {
  it('callers waiting in the adaptive limit’s line share one abort listener of kindly’s', async () => {
    const { clock, api } = setup({
      retry: false,
      concurrency: { initialLimit: 1, minLimit: 1, maxLimit: 1, probeConcurrency: 1, maxQueue: 100, queueTimeoutMs: 10_000 },
    });
    const shared = new AbortController();
    const calls = Array.from({ length: 30 }, () => api.call(() => clock.sleep(10), { signal: shared.signal }));
    await clock.advance(0);
    expect(getEventListeners(shared.signal, 'abort').length).toBe(1);
    for (const c of calls) await settle(clock, c);
    expect(getEventListeners(shared.signal, 'abort').length).toBe(0);
  });
});
