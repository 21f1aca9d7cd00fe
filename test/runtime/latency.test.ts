import { describe, expect, it } from 'vitest';
import {
  type DownstreamOptions,
  downstream,
  GiveUpError,
  HedgeLostError,
  isAttemptTimeoutError,
  isConcurrencyLimitError,
  type KindlyEvent,
} from '../../src/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { settle } from '../support/settle.js';

function setup(options: DownstreamOptions = {}) {
  const clock = new VirtualClock();
  const api = downstream('api', { clock, random: new SeededRandom(14), ...options });
  const events: KindlyEvent[] = [];
  api.onAny((e) => events.push(e));
  return { clock, api, events };
}

describe('adaptive concurrency limit through .call()', () => {
  it('refuses attempts beyond the limit with reason rejected, a ConcurrencyLimitError, an event and stats', async () => {
    const { clock, api, events } = setup({ retry: false, concurrency: { probeConcurrency: 2 } });
    const slow = () => api.call(({ signal }) => clock.sleep(100, signal).then(() => 'ok'));
    const a = slow();
    const b = slow();
    const c = await settle(clock, slow());
    expect(c.error).toBeInstanceOf(GiveUpError);
    expect((c.error as GiveUpError).reason).toBe('rejected');
    expect(isConcurrencyLimitError((c.error as GiveUpError).cause)).toBe(true);
    expect(events.find((e) => e.type === 'concurrency-limited')).toMatchObject({ key: 'api', limit: 2 });
    expect((await settle(clock, a)).value).toBe('ok');
    expect((await settle(clock, b)).value).toBe('ok');
    const stats = api.stats();
    expect(stats.concurrencyRejections).toBe(1);
    // One flat round at 2: the first no-load measurement doubles its limit.
    expect(stats.concurrencyLimit).toBe(4);
  });

  it('with maxQueue, a refused attempt waits in line for a slot; a full line or a long wait is refused', async () => {
    const { clock, api } = setup({ retry: false, concurrency: { probeConcurrency: 1, maxQueue: 1, queueTimeoutMs: 150 } });
    const take = (ms: number) => api.call(({ signal }) => clock.sleep(ms, signal).then(() => ms));
    const a = take(100);
    const b = take(10); // waits for a's slot
    const c = await settle(clock, take(10)); // the line is full
    expect(isConcurrencyLimitError((c.error as GiveUpError).cause)).toBe(true);
    expect(((c.error as GiveUpError).cause as { why: string }).why).toBe('queue-full');
    expect(api.stats().queueDepth).toBe(1);
    expect(await settle(clock, a)).toMatchObject({ value: 100, at: 100 });
    expect(await settle(clock, b)).toMatchObject({ value: 10, at: 110 });
    // A wait longer than queueTimeoutMs is refused (the measurement's limit is 2 by now: one
    // flat round at 1).
    expect(api.stats().concurrencyLimit).toBe(2);
    const d = [take(1_000), take(1_000)];
    const e = await settle(clock, take(10));
    expect(((e.error as GiveUpError).cause as { why: string }).why).toBe('queue-timeout');
    expect(e.at - 110).toBe(150);
    for (const p of d) await settle(clock, p);
    expect(api.stats().queueDepth).toBe(0);
  });

  it('partitions: a background call cannot take the share owed to interactive calls', async () => {
    const { clock, api } = setup({
      retry: false,
      concurrency: { initialLimit: 4, windowSamples: 2, partitions: { interactive: 0.75, background: 0.25 } },
    });
    const call = (partition: string, ms = 10) =>
      api.call(({ signal }) => clock.sleep(ms, signal).then(() => partition), { partition });
    // The first window is the probe (3 at once): finish it.
    for (let i = 0; i < 2; i++) await settle(clock, call('interactive'));
    expect(api.stats().concurrencyLimit).toBeGreaterThanOrEqual(4);
    const limit = api.stats().concurrencyLimit as number;
    // Background borrows everything while interactive is idle…
    const held = Array.from({ length: limit }, () => call('background', 1_000));
    expect((await settle(clock, call('background'))).error).toBeInstanceOf(GiveUpError);
    // …but interactive still gets its 75 %.
    const interactive = Array.from({ length: Math.floor(0.75 * limit) }, () => call('interactive', 5));
    for (const p of interactive) expect((await settle(clock, p)).value).toBe('interactive');
    for (const p of held) await settle(clock, p);
  });
});

describe('derived attempt timeouts through .call()', () => {
  it('times attempts out at percentile × factor of recent latency; the deadline stays the outer bound', async () => {
    const { clock, api } = setup({
      retry: false,
      attemptTimeoutMs: { percentile: 0.9, factor: 2, minSamples: 5, floorMs: 1, ceilingMs: 5_000 },
    });
    const take = (ms: number, timeout?: number) =>
      api.call(
        ({ signal }) => clock.sleep(ms, signal).then(() => ms),
        timeout === undefined ? undefined : { timeoutMs: timeout },
      );
    // Until 5 latencies are known, the ceiling.
    expect(api.stats().attemptTimeoutMs).toBeUndefined();
    for (let i = 0; i < 10; i++) expect((await settle(clock, take(10))).value).toBe(10);
    expect(api.stats().attemptTimeoutMs as number).toBeCloseTo(20, 0);
    const slow = await settle(clock, take(100));
    const cause = (slow.error as GiveUpError).cause;
    expect(isAttemptTimeoutError(cause)).toBe(true);
    // The call's own deadline, when shorter, still wins.
    const short = await settle(clock, take(100, 5));
    expect((short.error as GiveUpError).reason).toBe('deadline');
  });
});

describe('hedging through .call()', () => {
  const slowThenFast = (clock: VirtualClock, seen: unknown[]) => {
    let n = 0;
    return async ({ signal }: { signal: AbortSignal }) => {
      const ms = n++ === 0 ? 1_000 : 10;
      try {
        await clock.sleep(ms, signal);
      } catch (error) {
        seen.push(error);
        throw error;
      }
      return ms;
    };
  };

  it('sends a hedge after the delay; the first answer wins and the slow attempt is aborted', async () => {
    const { clock, api, events } = setup({ retry: false, hedging: { delayMs: 50, maxExtraLoad: 1 } });
    const aborted: unknown[] = [];
    const r = await settle(clock, api.call(slowThenFast(clock, aborted)));
    expect(r.value).toBe(10);
    expect(r.at).toBe(60);
    expect(aborted[0]).toBeInstanceOf(HedgeLostError);
    expect(events.filter((e) => e.type === 'hedge')).toEqual([
      { type: 'hedge', downstream: 'api', atMs: 50, attempt: 1, hedge: 1, delayMs: 50 },
    ]);
    const stats = api.stats();
    expect([stats.hedges, stats.hedgeWins, stats.attempts, stats.inFlight]).toEqual([1, 1, 2, 0]);
  });

  it('never hedges a non-idempotent call', async () => {
    const { clock, api } = setup({ retry: false, hedging: { delayMs: 50, maxExtraLoad: 1 } });
    const r = await settle(clock, api.call(slowThenFast(clock, []), { idempotent: false }));
    expect([r.value, r.at, api.stats().hedges]).toEqual([1_000, 1_000, 0]);
  });

  it('hedges draw on the retry budget: none when it is empty', async () => {
    const { clock, api } = setup({
      retry: false,
      budget: { ratio: 0, reservePerSecond: 0 },
      hedging: { delayMs: 50, maxExtraLoad: 1 },
    });
    const r = await settle(clock, api.call(slowThenFast(clock, [])));
    expect([r.value, api.stats().hedges]).toEqual([1_000, 0]);
  });

  it('no hedge while the breaker is not closed', async () => {
    const { clock, api } = setup({
      retry: false,
      breaker: { threshold: 1, breakMs: 100, breakJitter: 0 },
      hedging: { delayMs: 50, maxExtraLoad: 1 },
    });
    await settle(
      clock,
      api.call(async () => {
        throw Object.assign(new Error('503'), { status: 503 });
      }),
    );
    await clock.advance(200);
    // Half-open: the probe goes alone.
    const r = await settle(clock, api.call(slowThenFast(clock, [])));
    expect([r.value, api.stats().hedges]).toEqual([1_000, 0]);
  });

  it('a learned delay: no hedging until enough latencies are known, then at their percentile', async () => {
    const { clock, api } = setup({ retry: false, hedging: { minSamples: 5, percentile: 0.5, maxExtraLoad: 1 } });
    // Four latencies: not enough, the slow call gets no hedge.
    for (let i = 0; i < 4; i++)
      await settle(
        clock,
        api.call(({ signal }) => clock.sleep(20, signal).then(() => 20)),
      );
    expect((await settle(clock, api.call(slowThenFast(clock, [])))).value).toBe(1_000);
    expect(api.stats().hedges).toBe(0);
    // Samples decay (half-life 10 s): a few more to be worth 5 fresh ones.
    for (let i = 0; i < 4; i++)
      await settle(
        clock,
        api.call(({ signal }) => clock.sleep(20, signal).then(() => 20)),
      );
    const before = api.stats().hedges;
    const started = clock.monotonic();
    const r = await settle(clock, api.call(slowThenFast(clock, [])));
    expect(r.value).toBe(10);
    // Hedged at the learned median (~20 ms), answered 10 ms later.
    expect(r.at - started).toBeGreaterThan(25);
    expect(r.at - started).toBeLessThan(35);
    expect(api.stats().hedges).toBe(before + 1);
  });
});
