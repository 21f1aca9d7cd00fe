import { describe, expect, it } from 'vitest';
import {
  BulkheadRejectedError,
  CircuitOpenError,
  type DownstreamOptions,
  downstream,
  GiveUpError,
  type KindlyEvent,
} from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { settle } from '../support/settle.js';

const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { status: code });

function setup(options: DownstreamOptions = {}) {
  const clock = new VirtualClock();
  const api = downstream('api', { clock, random: new SeededRandom(11), ...options });
  const events: KindlyEvent[] = [];
  api.onAny((e) => events.push(e));
  return { clock, api, events };
}

/** A callee serving `perSlot` calls per 100 ms slot, answering at the end of the slot; 429 to the rest. */
function slotCallee(clock: VirtualClock, perSlot: number): () => Promise<string> {
  const served = new Map<number, number>();
  return async () => {
    const slot = Math.floor(clock.monotonic() / 100);
    const n = (served.get(slot) ?? 0) + 1;
    served.set(slot, n);
    await clock.sleep((slot + 1) * 100 - clock.monotonic());
    if (n > perSlot) throw status(429);
    return 'ok';
  };
}

describe('pipeline with protections', () => {
  it('an open breaker fails fast with outcome failed and retryAfterMs, then lets a probe through after the break', async () => {
    const { clock, api, events } = setup({
      retry: false,
      breaker: { threshold: 3, breakMs: 1_000, breakJitter: 0 },
    });
    let reached = 0;
    const failing = () =>
      api.call(async () => {
        reached++;
        throw status(503);
      });
    for (let i = 0; i < 3; i++) await settle(clock, failing());
    expect(reached).toBe(3);
    const { error } = await settle(clock, failing());
    expect(reached).toBe(3); // never reached the callee
    const e = error as GiveUpError;
    expect(e.reason).toBe('circuit-open');
    expect(e.outcome).toBe('failed');
    expect(e.cause).toBeInstanceOf(CircuitOpenError);
    expect(e.retryAfterMs).toBe(1_000);
    expect(events.some((ev) => ev.type === 'breaker-state' && ev.to === 'open')).toBe(true);
    expect(api.stats().breakerOpens).toBe(1);

    await clock.advance(1_000);
    const probe = await settle(
      clock,
      api.call(async () => 'recovered'),
    );
    expect(probe.value).toBe('recovered');
    expect(events.filter((ev) => ev.type === 'breaker-state').map((ev) => (ev as { to: string }).to)).toEqual([
      'open',
      'half-open',
      'closed',
    ]);
  });

  it('4xx answers do not open the breaker', async () => {
    const { clock, api } = setup({ retry: false, breaker: { threshold: 2 } });
    for (let i = 0; i < 5; i++)
      await settle(
        clock,
        api.call(async () => Promise.reject(status(404))),
      );
    const { value } = await settle(
      clock,
      api.call(async () => 'ok'),
    );
    expect(value).toBe('ok');
  });

  it('an empty retry budget stops retries with reason budget; another key is unaffected', async () => {
    const { clock, api, events } = setup({
      budget: { ratio: 0, reservePerSecond: 0.1, windowMs: 10_000 }, // one retry per 10 s window
      retry: { maxAttempts: 3, backoff: { baseMs: 1, jitter: 'none' } },
    });
    const fail = (budgetKey: string) => api.call(async () => Promise.reject(status(503)), { budgetKey });
    const first = (await settle(clock, fail('read'))).error as GiveUpError;
    expect(first.reason).toBe('budget');
    expect(first.attempts).toBe(2); // one retry was in the reserve
    const second = (await settle(clock, fail('read'))).error as GiveUpError;
    expect(second.reason).toBe('budget');
    expect(second.attempts).toBe(1);
    const other = (await settle(clock, fail('write'))).error as GiveUpError;
    expect(other.attempts).toBe(2);
    expect(events.filter((e) => e.type === 'budget-exhausted').length).toBe(3);
    expect(api.stats().budgetRejections).toBe(3);
  });

  it('a full bulkhead rejects at once with outcome failed', async () => {
    const { clock, api } = setup({ bulkhead: { maxConcurrent: 1, maxQueue: 0 } });
    let release!: () => void;
    const holding = api.call(() => new Promise<void>((r) => (release = r)));
    await clock.advance(0);
    const { error } = await settle(
      clock,
      api.call(async () => 'never'),
    );
    expect((error as GiveUpError).reason).toBe('rejected');
    expect((error as GiveUpError).outcome).toBe('failed');
    expect((error as GiveUpError).cause).toBeInstanceOf(BulkheadRejectedError);
    expect(api.stats().bulkheadRejections).toBe(1);
    release();
    await settle(clock, holding);
    expect(
      (
        await settle(
          clock,
          api.call(async () => 'now'),
        )
      ).value,
    ).toBe('now');
  });

  it('queued callers are admitted in order and the queue depth shows in stats', async () => {
    const { clock, api } = setup({ bulkhead: { maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 10_000 } });
    const order: number[] = [];
    const calls = [0, 1, 2].map((i) =>
      api.call(async () => {
        order.push(i);
        await clock.sleep(10);
      }),
    );
    await clock.advance(0);
    expect(api.stats().queueDepth).toBe(2);
    await Promise.all(calls.map((c) => settle(clock, c)));
    expect(order).toEqual([0, 1, 2]);
  });

  it('while the callee throttles, retries leave at the pacer’s learned rate', async () => {
    const { clock, api, events } = setup({
      budget: false,
      pacing: {},
      retry: { maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 60_000, backoff: { baseMs: 1, jitter: 'none' } },
    });
    const callee = slotCallee(clock, 5);
    const results = await Promise.all(Array.from({ length: 40 }, () => settle(clock, api.call(callee))));
    expect(results.every((r) => r.value === 'ok')).toBe(true);
    const paced = events.filter((e) => e.type === 'pacing-delay');
    expect(paced.length).toBeGreaterThan(20);
    const attempts = api.stats().attempts;
    // 40 first tries + 35 necessary retries is the floor; unpaced 1 ms retries would need hundreds.
    expect(attempts).toBeLessThan(40 + 35 + 20);
  });

  it('a paced retry the callee still rejects does not advance its caller’s backoff (regression: fleet herds waited 2ⁿ backoffs after the pacer’s misjudgements)', async () => {
    // One caller against a callee that rejects everything: the first rejection starts the
    // pacer, so every retry after it leaves at a slot the pacer chose. Those failures are the
    // pacer's misjudgement of the rate, not the caller hammering: the backoff stays at its
    // first step instead of doubling (100, 200, 400 ms before).
    const backoffs = async (pacing: boolean) => {
      const { clock, api, events } = setup({
        budget: false,
        pacing,
        retry: { maxAttempts: 4, backoff: { baseMs: 100, factor: 2, jitter: 'none' } },
      });
      await settle(
        clock,
        api.call(async () => Promise.reject(status(429))),
      );
      return events.flatMap((e) => (e.type === 'retry-scheduled' ? [e.backoffMs] : []));
    };
    expect(await backoffs(false)).toEqual([100, 200, 400]);
    expect(await backoffs(true)).toEqual([100, 100, 100]);
  });

  it('paced retries are not charged to the budget: a herd the budget alone would cut short is served in full', async () => {
    // A callee serving 5 per 100 ms slot; a budget of max(0.1 × 40, 1) = 4 retries.
    const herd = async (pacing: boolean) => {
      const { clock, api } = setup({
        budget: { ratio: 0.1, reservePerSecond: 0.1 },
        pacing,
        retry: { maxAttempts: 100, maxElapsedMs: 60_000, backoff: { baseMs: 1, jitter: 'none' } },
      });
      const callee = slotCallee(clock, 5);
      const results = await Promise.all(Array.from({ length: 40 }, () => settle(clock, api.call(callee))));
      return { ok: results.filter((r) => r.value === 'ok').length, refused: api.stats().budgetRejections };
    };
    const unpaced = await herd(false);
    expect(unpaced.refused).toBeGreaterThan(20);
    expect(unpaced.ok).toBeLessThan(20);
    const paced = await herd(true);
    expect(paced).toEqual({ ok: 40, refused: 0 });
  });

  it('a fallback answers when the breaker is open', async () => {
    const { clock, api } = setup({ retry: false, breaker: { threshold: 1 } });
    await settle(
      clock,
      api.call(async () => Promise.reject(status(500))),
    );
    const { value } = await settle(
      clock,
      api.call(async () => 'fresh', { fallback: ({ reason }) => `cached (${reason})` }),
    );
    expect(value).toBe('cached (circuit-open)');
  });

  it('invalid protection options are reported at construction with every problem', () => {
    expect(
      () =>
        downstream('x', {
          budget: { ratio: 2 },
          breaker: { threshold: 0 },
          bulkhead: { maxConcurrent: -1 },
          pacing: { decrease: 3 },
        }),
      // In pipeline order: budget → breaker → pacing → bulkhead.
    ).toThrow(
      /budget:[\s\S]*ratio[\s\S]*breaker:[\s\S]*threshold[\s\S]*pacing:[\s\S]*decrease[\s\S]*bulkhead:[\s\S]*maxConcurrent/,
    );
  });
});

describe('pipeline edge cases', () => {
  it('a deadline that cuts an attempt short ends the call with reason deadline and is not held against the callee', async () => {
    const { clock, api } = setup({ retry: { maxAttempts: 3 }, breaker: { threshold: 1 } });
    const { error } = await settle(
      clock,
      api.call(() => new Promise(() => {}), { timeoutMs: 300 }),
    );
    const e = error as GiveUpError;
    expect(e.reason).toBe('deadline');
    expect(e.outcome).toBe('unknown');
    expect(e.attempts).toBe(1);
    expect(clock.monotonic()).toBe(300);
    expect(api.stats().timeouts).toBe(0);
    // The breaker (threshold 1) did not count it: the next call goes through.
    expect(
      (
        await settle(
          clock,
          api.call(async () => 'ok'),
        )
      ).value,
    ).toBe('ok');
  });

  it('a retry refused by an open breaker ends with the last real attempt’s error and outcome', async () => {
    const { clock, api } = setup({
      breaker: { threshold: 1, breakMs: 60_000, breakJitter: 0 },
      retry: { maxAttempts: 3, backoff: { baseMs: 10, jitter: 'none' } },
      budget: false,
    });
    const original = status(502);
    const { error } = await settle(
      clock,
      api.call(async () => Promise.reject(original)),
    );
    const e = error as GiveUpError;
    expect(e.reason).toBe('circuit-open');
    expect(e.cause).toBe(original);
    expect(e.outcome).toBe('unknown');
    expect(e.attempts).toBe(1);
    expect(e.retryAfterMs).toBe(60_000);
  });

  it('a backoff that does not fit before the deadline is not slept: the call ends at once', async () => {
    const { clock, api } = setup({ retry: { backoff: { baseMs: 5_000, jitter: 'none' } } });
    const { error } = await settle(
      clock,
      api.call(async () => Promise.reject(status(503)), { timeoutMs: 1_000 }),
    );
    expect((error as GiveUpError).reason).toBe('deadline');
    expect(clock.monotonic()).toBe(0);
  });
});

describe('review regressions', () => {
  it('a classifier that throws is skipped and releases the breaker probe (regression: breaker stuck open)', async () => {
    const { clock, api } = setup({
      retry: false,
      breaker: { threshold: 1, breakMs: 50, breakJitter: 0 },
      classify: () => {
        throw new Error('bug in user classifier');
      },
    });
    const first = await settle(
      clock,
      api.call(async () => Promise.reject(status(503))),
    );
    expect((first.error as GiveUpError).reason).toBe('max-attempts');
    await clock.advance(50);
    const probe = await settle(
      clock,
      api.call(async () => Promise.reject(status(503))),
    );
    expect((probe.error as GiveUpError).reason).toBe('max-attempts'); // the probe ran
    await clock.advance(200);
    expect(
      (
        await settle(
          clock,
          api.call(async () => 'ok'),
        )
      ).value,
    ).toBe('ok');
  });

  it('a slow verify cannot start an attempt after the deadline (regression)', async () => {
    const { clock, api } = setup({ idempotent: false, retry: { backoff: { baseMs: 1, jitter: 'none' } } });
    let sent = 0;
    const { error } = await settle(
      clock,
      api.call(
        async () => {
          sent++;
          throw status(500);
        },
        { timeoutMs: 300, verify: () => clock.sleep(2_000).then(() => false) },
      ),
    );
    expect(sent).toBe(1);
    expect((error as GiveUpError).reason).toBe('deadline');
  });

  it('per-call options are checked: a NaN timeout is an error, not "no timeout"', async () => {
    const { api } = setup();
    await expect(api.call(async () => 1, { timeoutMs: Number.NaN })).rejects.toThrow(/`timeoutMs`.*got NaN/);
    await expect(api.call(async () => 1, { deadline: Number.NaN })).rejects.toThrow(/`deadline`/);
  });

  it('a nested call inherits the attempt timeout and stops with the outer attempt (regression)', async () => {
    const { clock, api } = setup({ attemptTimeoutMs: 100, retry: false });
    const inner = downstream('inner', { clock, random: new SeededRandom(1), budget: false });
    let innerAttempts = 0;
    let innerDeadline: number | undefined;
    const { error } = await settle(
      clock,
      api.call(
        () =>
          inner.call(
            async (ctx) => {
              innerAttempts++;
              innerDeadline = ctx.deadline;
              await clock.sleep(30, ctx.signal);
              throw status(503);
            },
            // no signal of its own: the outer attempt's is inherited
          ),
        { timeoutMs: 60_000 },
      ),
    );
    expect(innerDeadline).toBe(100);
    expect(error).toBeInstanceOf(GiveUpError);
    const attemptsAtGiveUp = innerAttempts;
    await clock.advance(10_000);
    expect(innerAttempts).toBe(attemptsAtGiveUp);
  });

  it('a call with its own signal inside a scope with another stops when either aborts', async () => {
    const { runWithDeadline } = await import('../../src/index.js');
    for (const which of ['scope', 'own'] as const) {
      const { clock, api } = setup();
      const request = new AbortController();
      const own = new AbortController();
      const reason = new Error(`${which} aborted`);
      const call = runWithDeadline({ deadline: Number.POSITIVE_INFINITY, signal: request.signal }, () =>
        api.call((ctx) => clock.sleep(5_000, ctx.signal), { signal: own.signal }),
      );
      const out = settle(clock, call);
      await clock.advance(10);
      (which === 'scope' ? request : own).abort(reason);
      const ended = await out;
      expect(ended.error, which).toBe(reason);
    }
  });
});
