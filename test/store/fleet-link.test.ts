import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { type DownstreamOptions, downstream, type KindlyEvent } from '../../src/index.js';
import type { Pacer } from '../../src/policies/pacer.js';
import { slotOf } from '../../src/store/fleet-ledger.js';
import { FLEET_BUDGET_CREDIT, FLEET_QUIET_SYNC_MS, FLEET_SYNC_MS } from '../../src/store/fleet-link.js';
import { adoptFleetEstimate } from '../../src/store/fleet-pace-rate.js';
import { BREAKER_OPEN, type BreakerRecord } from '../../src/store/fleet-store.js';
import { FleetQueueView } from '../../src/store/fleet-ticket.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { MemoryFleetStore } from '../support/memory-fleet-store.js';
import { settle } from '../support/settle.js';
import { BREAKER_REPORT } from './support/requests.js';

const status = (code: number) => Object.assign(new Error(`HTTP ${code}`), { status: code });
const fail = () => Promise.reject(status(503));
const ok = () => Promise.resolve('ok');

/** Several downstreams on one virtual clock standing for processes of one fleet. */
function fleet(processes: number, options: DownstreamOptions, storeOptions: { news?: boolean } = {}) {
  const clock = new VirtualClock();
  const store = new MemoryFleetStore(clock, storeOptions);
  const members = Array.from({ length: processes }, (_, i) =>
    downstream('api', { clock, random: new SeededRandom(100 + i), store, ...options }),
  );
  return { clock, store, members };
}

/** A callee on `clock` that serves one request per `gapMs` and answers the others 429 at once. */
function oneEvery(clock: VirtualClock, gapMs: number): () => Promise<string> {
  let lastOk = Number.NEGATIVE_INFINITY;
  return () => {
    const now = clock.monotonic();
    if (now - lastOk < gapMs) return Promise.reject(status(429));
    lastOk = now;
    return Promise.resolve('ok');
  };
}

/** An operation that always fails with 503, and how many times it ran (`attempts`, which a test may reset). */
function failingCounted() {
  const counted = {
    attempts: 0,
    failing: () => {
      counted.attempts++;
      return Promise.reject(status(503));
    },
  };
  return counted;
}

const breakerOnly: DownstreamOptions = { retry: false, budget: false, breaker: { threshold: 3, breakMs: 1_000, breakJitter: 0 } };

/**
 * Two processes sharing a reserve-only budget (no ratio, `reservePerSecond` over a 10 s
 * window), one retry each; process 0 has leased first, process 1's give-ups are recorded.
 */
async function burstFleet(reservePerSecond: number) {
  const options: DownstreamOptions = {
    budget: { ratio: 0, reservePerSecond, windowMs: 10_000 },
    breaker: false,
    retry: { maxAttempts: 2, backoff: { baseMs: 10, jitter: 'none' } },
  };
  const { clock, store, members } = fleet(2, options);
  await settle(clock, members[0]!.call(ok));
  await clock.advance(FLEET_SYNC_MS);
  const gaveUp: string[] = [];
  members[1]!.on('give-up', (e) => gaveUp.push(e.reason));
  return { clock, store, members, gaveUp };
}

describe('FleetLink (memory fleet store, virtual clock)', () => {
  it('one process seeing the callee dead opens the breaker for the others within one sync period (no news)', async () => {
    const { clock, members } = fleet(3, breakerOnly, { news: false });
    const [a, b, c] = members as [ReturnType<typeof downstream>, ReturnType<typeof downstream>, ReturnType<typeof downstream>];
    await settle(clock, b.call(ok));
    await settle(clock, c.call(ok));
    for (let i = 0; i < 3; i++) await settle(clock, a.call(fail));
    const openedAt = clock.monotonic();
    await clock.advance(FLEET_SYNC_MS);
    const rb = await settle(clock, b.call(ok));
    const rc = await settle(clock, c.call(ok));
    expect((rb.error as { reason?: string }).reason).toBe('circuit-open');
    expect((rc.error as { reason?: string }).reason).toBe('circuit-open');
    expect(clock.monotonic() - openedAt).toBeLessThanOrEqual(FLEET_SYNC_MS);
  });

  it('after the break only the probe lease holder probes; its success closes the breaker everywhere', async () => {
    const { clock, members } = fleet(3, breakerOnly);
    for (const m of members) await settle(clock, m.call(ok));
    const ran: { at: number; p: number }[] = [];
    for (let i = 0; i < 3; i++) await settle(clock, members[0]!.call(fail));
    const openedAt = clock.monotonic();
    await clock.advance(FLEET_SYNC_MS);
    // Every process keeps calling through the break and after it.
    for (let t = 0; t < 1_400; t += 20) {
      for (let p = 0; p < 3; p++) {
        await settle(
          clock,
          members[p]!.call(async () => {
            ran.push({ at: clock.monotonic(), p });
            return 'ok';
          }),
        );
      }
      await clock.advance(20);
    }
    // The first call after the break was one process's probe: nobody else called then.
    const first = ran[0]!;
    expect(first.at).toBeGreaterThanOrEqual(openedAt + 1_000);
    expect(ran.filter((r) => r.at === first.at)).toHaveLength(1);
    // Its success closed the breaker for everyone.
    await clock.advance(2 * FLEET_SYNC_MS);
    for (const m of members) expect((await settle(clock, m.call(ok))).value).toBe('ok');
    expect(new Set(ran.map((r) => r.p)).size).toBe(3);
  });

  it('a late failure, reported after the fleet closed, does not reopen it', async () => {
    const { clock, store, members } = fleet(2, breakerOnly);
    const scope = { downstream: 'api', key: 'api' };
    for (let i = 0; i < 3; i++) await settle(clock, members[0]!.call(fail));
    // A read by a process configured as the fleet (a break never lasts beyond the reader's own maxBreakMs).
    const opened = await store.breaker(scope, { ...baseReport, owner: 'x', generation: -2, report: 'none' });
    expect(opened?.state).toBe(1);
    const staleGeneration = opened!.generation - 1;
    const late = await store.breaker(scope, { ...baseReport, owner: 'y', generation: staleGeneration, report: 'open' });
    expect(late?.generation).toBe(opened!.generation);
    expect(late?.openUntil).toBe(opened!.openUntil);
  });

  it('shares one retry budget: the reserve is counted once for the fleet', async () => {
    const budget = { ratio: 0, reservePerSecond: 0.01, windowMs: 1_000_000 };
    const { clock, members } = fleet(4, { budget, retry: { maxAttempts: 2 } });
    const counted = failingCounted();
    for (let round = 0; round < 10; round++) {
      for (const m of members) await settle(clock, m.call(counted.failing));
      await clock.advance(FLEET_SYNC_MS);
    }
    expect(clock.monotonic()).toBeLessThan(1_000_000);
    // 40 calls, reserve 10 per window for the whole fleet, plus at most each process's credit.
    const retries = counted.attempts - 40;
    expect(retries).toBeGreaterThanOrEqual(10);
    expect(retries).toBeLessThanOrEqual(10 + 4 * FLEET_BUDGET_CREDIT);
  });

  it('a burst of failures beyond the lease is not refused while the fleet has tokens (regression: the fleet herd gave up with reason budget)', async () => {
    // One process leases first; the other's 60 callers then fail at once: more retries than
    // any lease holds. Each retry without a token is claimed and granted by the store.
    const { clock, members, gaveUp } = await burstFleet(10);
    const tries = new Map<number, number>();
    const flaky = (id: number) => () => {
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      return n === 1 ? Promise.reject(status(503)) : Promise.resolve('ok');
    };
    const results = await settle(clock, Promise.all(Array.from({ length: 60 }, (_, i) => members[1]!.call(flaky(i)))));
    expect(gaveUp).toEqual([]);
    expect(results.value).toHaveLength(60);
    expect([...tries.values()].every((n) => n === 2)).toBe(true);
  });

  it('claims beyond what the fleet has left are refused with reason budget', async () => {
    // Reserve 30 for the fleet, no ratio: 60 failing callers get 30 retries, plus credit.
    const { clock, store, members, gaveUp } = await burstFleet(3);
    const counted = failingCounted();
    await settle(clock, Promise.allSettled(Array.from({ length: 60 }, () => members[1]!.call(counted.failing))));
    const retries = counted.attempts - 60;
    // The first process's first lease (one token, unused) is the only part not claimable.
    expect(retries).toBeGreaterThanOrEqual(29);
    expect(retries).toBeLessThanOrEqual(30 + 2 * FLEET_BUDGET_CREDIT);
    expect(gaveUp.filter((r) => r === 'budget')).toHaveLength(60 - retries);
    // Refused with no room left: the next retries are refused without asking the store again.
    const operations = store.operations;
    counted.attempts = 0;
    await settle(clock, Promise.allSettled(Array.from({ length: 10 }, () => members[1]!.call(counted.failing))));
    // Room came back meanwhile (the first leases ran out and were given back): credit again,
    // and one sync, the top-up after it; the 8 retries past it are not claimed.
    expect(counted.attempts).toBe(10 + FLEET_BUDGET_CREDIT);
    expect(store.operations - operations).toBe(1);
  });

  it('a budget sync answered too late leaves its claims to the store once more; a second in a row decides them locally', async () => {
    const { clock, store, members, gaveUp } = await burstFleet(5);
    const counted = failingCounted();
    const refused = () => gaveUp.filter((r) => r === 'budget').length;
    // Process 1 spends its own reserve (50 retries) while the store is down; the fleet's
    // reserve of 50 is untouched.
    store.setAvailable(false);
    for (let i = 0; i < 55; i++) await settle(clock, members[1]!.call(counted.failing));
    store.setAvailable(true);
    await clock.advance(2 * FLEET_SYNC_MS);
    const before = refused();
    expect(before).toBe(5);
    const burst = (n: number) =>
      settle(clock, Promise.allSettled(Array.from({ length: n }, () => members[1]!.call(counted.failing))));
    // Six callers fail at once, more than lease and credit hold, so most retries are claimed.
    // One late answer: the claims are asked again, and the fleet grants them all.
    store.answerBudgetsLate(1);
    counted.attempts = 0;
    await burst(6);
    expect(counted.attempts).toBe(12);
    expect(refused()).toBe(before);
    await clock.advance(2 * FLEET_SYNC_MS);
    // Two in a row: process 1's own budget decides the claims, and it has nothing left.
    store.answerBudgetsLate(2);
    counted.attempts = 0;
    await burst(20);
    // Lease and credit covered 7 of the retries; the 13 claims were refused here.
    expect(counted.attempts).toBe(27);
    expect(refused()).toBe(before + 13);
  });

  it("retries before the store's first answer are claimed, not decided with each process's own reserve", async () => {
    const { clock, store, members, gaveUp } = await burstFleet(1);
    const counted = failingCounted();
    for (let i = 0; i < 12; i++) await settle(clock, members[0]!.call(counted.failing));
    // Process 1's first sync is answered too late: it has not heard from the store when six of
    // its callers fail at once. Two retries go on credit; the fleet refuses the other four.
    store.answerBudgetsLate(1);
    counted.attempts = 0;
    await settle(clock, Promise.allSettled(Array.from({ length: 6 }, () => members[1]!.call(counted.failing))));
    expect(counted.attempts).toBe(6 + FLEET_BUDGET_CREDIT);
    expect(gaveUp.filter((r) => r === 'budget')).toHaveLength(6 - FLEET_BUDGET_CREDIT);
  });

  it('the local budget is charged for the retries the fleet granted: a fall-back starts from what was spent', async () => {
    const budget = { ratio: 0, reservePerSecond: 1, windowMs: 10_000 };
    const { clock, store, members } = fleet(1, {
      budget,
      breaker: false,
      retry: { maxAttempts: 2, backoff: { baseMs: 10, jitter: 'none' } },
    });
    await settle(clock, members[0]!.call(ok));
    await clock.advance(FLEET_SYNC_MS);
    const counted = failingCounted();
    // The fleet's reserve of 10, plus credit.
    for (let i = 0; i < 10; i++) await settle(clock, members[0]!.call(counted.failing));
    expect(counted.attempts).toBe(20);
    store.setAvailable(false);
    counted.attempts = 0;
    // The local reserve is 10 too, and all of it was spent through the fleet.
    for (let i = 0; i < 5; i++) await settle(clock, members[0]!.call(counted.failing));
    expect(counted.attempts).toBe(5);
  });

  it('falls back to local policies while the store is down and says so', async () => {
    const budget = { ratio: 0, reservePerSecond: 1, windowMs: 10_000 };
    const { clock, store, members } = fleet(2, { budget, retry: { maxAttempts: 2 } });
    const events: KindlyEvent[] = [];
    members[0]!.onAny((e) => events.push(e));
    await settle(clock, members[0]!.call(ok));
    store.setAvailable(false);
    const counted = failingCounted();
    for (let i = 0; i < 15; i++) for (const m of members) await settle(clock, m.call(counted.failing));
    // Each process has its own local reserve of 10 again.
    expect(counted.attempts - 30).toBe(20);
    store.setAvailable(true);
    expect(events.filter((e) => e.type === 'store-availability').map((e) => (e as { available: boolean }).available)).toEqual([
      false,
      true,
    ]);
  });
});

describe('FleetLink after an outage', () => {
  it('an idle downstream syncs one round when the store comes back, then holds no timer (regression: each idle one ticked for 10 s)', async () => {
    const { clock, store, members } = fleet(1, { breaker: { threshold: 5 } }, { news: false });
    await settle(clock, members[0]!.call(ok));
    // Idle well past IDLE_MS (10 s): its background sync has stopped, no timer is left.
    await clock.advance(20_000);
    expect(clock.nextAt()).toBeUndefined();
    const breakerSyncs = store.breakerOperations;
    store.setAvailable(false);
    await clock.advance(1_000);
    store.setAvailable(true);
    // Its breaker record is pushed again (a store that restarted empty needs it)...
    await clock.advance(0);
    expect(store.breakerOperations).toBe(breakerSyncs + 1);
    // ...and after one round of the background sync, nothing is scheduled any more.
    await clock.advance(FLEET_SYNC_MS);
    expect(clock.nextAt()).toBeUndefined();
    // In use again, it syncs as before.
    await settle(clock, members[0]!.call(ok));
    expect(clock.nextAt()).toBeDefined();
  });
});

const baseReport = BREAKER_REPORT;

describe('FleetLink when the store loses its state', () => {
  it('an evicted open breaker record is written back by the processes that hold it open (regression: eviction closed the fleet)', async () => {
    const { clock, store, members } = fleet(2, breakerOnly);
    for (const m of members) await settle(clock, m.call(ok));
    for (let i = 0; i < 3; i++) await settle(clock, members[0]!.call(fail));
    await clock.advance(2 * FLEET_SYNC_MS);
    expect(((await settle(clock, members[1]!.call(ok))).error as { reason?: string }).reason).toBe('circuit-open');
    store.clear();
    await clock.advance(3 * FLEET_SYNC_MS);
    // Still open for both: the record came back from the processes, not a fresh closed one.
    for (const m of members) expect(((await settle(clock, m.call(ok))).error as { reason?: string }).reason).toBe('circuit-open');
  });
});

describe('FleetLink: calm downstreams sync slowly while the store pushes breaker news', () => {
  const calmOptions: DownstreamOptions = {
    retry: { maxAttempts: 3, backoff: { baseMs: 10, jitter: 'none' } },
    budget: {},
    breaker: { threshold: 3, breakMs: 1_000, breakJitter: 0 },
  };

  /** Store operations while one downstream is called every 10 ms for `ms`, every call succeeding. */
  async function steadyOperations(news: boolean, ms: number) {
    const { clock, store, members } = fleet(1, calmOptions, { news });
    const api = members[0]!;
    // One quiet period to settle (the first syncs, the first lease).
    for (let t = 0; t < FLEET_QUIET_SYNC_MS; t += 10) {
      await settle(clock, api.call(ok));
      await clock.advance(10);
    }
    const before = store.operations;
    for (let t = 0; t < ms; t += 10) {
      await settle(clock, api.call(ok));
      await clock.advance(10);
    }
    return store.operations - before;
  }

  it('a calm downstream syncs once per quiet period with news, every fast period without', async () => {
    const ms = 5_000;
    const withNews = await steadyOperations(true, ms);
    const withoutNews = await steadyOperations(false, ms);
    // Each sync is two operations here: the budget's deposit and the breaker's read.
    expect(withNews).toBeLessThanOrEqual(2 * (ms / FLEET_QUIET_SYNC_MS + 1));
    expect(withoutNews).toBeGreaterThanOrEqual(2 * (ms / FLEET_SYNC_MS - 1));
  });

  /** Fails `api`'s calls until its own breaker opens; resolves to that instant. */
  async function trip(clock: VirtualClock, api: ReturnType<typeof downstream>): Promise<number> {
    let openedAt: number | undefined;
    api.on('breaker-state', (e) => {
      if (e.to === 'open' && openedAt === undefined) openedAt = clock.monotonic();
    });
    for (let i = 0; i < 10 && openedAt === undefined; i++) {
      const calling = api.call(fail).catch(() => undefined);
      while (openedAt === undefined && clock.nextAt() !== undefined) {
        await clock.advance(0);
        if (openedAt === undefined) await clock.advanceTo(clock.nextAt() as number);
      }
      if (openedAt === undefined) await calling;
    }
    if (openedAt === undefined) throw new Error('the breaker never opened');
    return openedAt;
  }

  it('a trip reaches calm processes as news at once, not at their next sync', async () => {
    const { clock, members } = fleet(3, calmOptions);
    const [a, b, c] = members as [ReturnType<typeof downstream>, ReturnType<typeof downstream>, ReturnType<typeof downstream>];
    for (let t = 0; t < 2 * FLEET_QUIET_SYNC_MS; t += 10) {
      for (const m of members) await settle(clock, m.call(ok));
      await clock.advance(10);
    }
    // b and c are calm now: their next sync is up to a quiet period away.
    const openedAt = await trip(clock, a);
    for (let i = 0; i < 20; i++) await clock.advance(0);
    expect(clock.monotonic()).toBe(openedAt);
    for (const m of [b, c]) {
      const r = await settle(clock, m.call(ok));
      expect((r.error as { reason?: string } | undefined)?.reason).toBe('circuit-open');
    }
    expect(clock.monotonic()).toBe(openedAt);
  });

  it('a failure ends the calm at once: the breakers are read again within one fast period', async () => {
    const { clock, store, members } = fleet(1, calmOptions);
    const api = members[0]!;
    // Half-way between two calm syncs.
    for (let t = 0; t < 2.5 * FLEET_QUIET_SYNC_MS; t += 10) {
      await settle(clock, api.call(ok));
      await clock.advance(10);
    }
    // One failed attempt, then a success: no trip (threshold 3), a retry.
    let attempts = 0;
    const flaky = () => (++attempts === 1 ? fail() : ok());
    const before = store.breakerOperations;
    const startedAt = clock.monotonic();
    await settle(clock, api.call(flaky));
    while (store.breakerOperations === before && clock.monotonic() - startedAt <= FLEET_SYNC_MS) await clock.advance(1);
    expect(store.breakerOperations).toBeGreaterThan(before);
    expect(clock.monotonic() - startedAt).toBeLessThanOrEqual(FLEET_SYNC_MS);
  });

  it('while news is cut, a calm process reads the breakers every fast period again', async () => {
    const { clock, store, members } = fleet(1, calmOptions);
    const api = members[0]!;
    const callFor = async (ms: number) => {
      for (let t = 0; t < ms; t += 10) {
        await settle(clock, api.call(ok));
        await clock.advance(10);
      }
    };
    await callFor(2 * FLEET_QUIET_SYNC_MS);
    let before = store.breakerOperations;
    await callFor(FLEET_QUIET_SYNC_MS + FLEET_QUIET_SYNC_MS / 2);
    expect(store.breakerOperations - before).toBeLessThanOrEqual(2);
    // Cut half-way between two calm syncs: the fast period starts at once.
    store.setNews(false);
    before = store.breakerOperations;
    await callFor(FLEET_QUIET_SYNC_MS / 2);
    expect(store.breakerOperations - before).toBeGreaterThanOrEqual(FLEET_QUIET_SYNC_MS / 2 / FLEET_SYNC_MS - 1);
    // News back: calm again after a quiet period.
    store.setNews(true);
    await callFor(FLEET_QUIET_SYNC_MS + FLEET_SYNC_MS);
    before = store.breakerOperations;
    await callFor(FLEET_QUIET_SYNC_MS);
    expect(store.breakerOperations - before).toBeLessThanOrEqual(2);
  });
});

describe('the store makes the link', () => {
  it('each downstream given a store is linked through its link(), once', () => {
    const clock = new VirtualClock();
    const store = new MemoryFleetStore(clock);
    const linked: string[] = [];
    const link = store.link.bind(store);
    store.link = (options) => {
      linked.push(options.downstream);
      return link(options);
    };
    downstream('a', { clock, store });
    downstream('b', { clock, store, breaker: true });
    expect(linked).toEqual(['a', 'b']);
  });

  it('a fleet store without link() is refused when the downstream is built, saying how to make one', () => {
    const clock = new VirtualClock();
    const withoutLink = { fleetStore: true, available: true } as unknown as MemoryFleetStore;
    expect(() => downstream('a', { clock, store: withoutLink })).toThrow(
      expect.objectContaining({
        name: 'InvalidOptionsError',
        message: expect.stringMatching(/a fleet store without link\(options\).*new FleetLink/),
      }),
    );
    expect(() => downstream('a', { clock, store: 5 as never })).toThrow(/to be a fleet store .* got number/);
  });
});

describe('FleetLink against a store that misbehaves', () => {
  /** A memory store whose bookings can be made to answer nothing, at once. */
  class Unanswering extends MemoryFleetStore {
    refuse = false;
    refused = 0;
    override bookSlot(...args: Parameters<MemoryFleetStore['bookSlot']>) {
      if (!this.refuse) return super.bookSlot(...args);
      // A bound for the old loop, so that the test fails instead of spinning for good.
      if (++this.refused >= 10_000) this.setAvailable(false);
      return Promise.resolve(undefined);
    }
  }

  it('a booking answered with nothing at once does not loop without time passing (regression: paced calls spun after close)', async () => {
    const clock = new VirtualClock();
    const store = new Unanswering(clock);
    const d = downstream('api', {
      clock,
      random: new SeededRandom(7),
      store,
      budget: false,
      breaker: { threshold: 1_000 },
      retry: { maxAttempts: 6, backoff: { baseMs: 1, jitter: 'none' } },
      pacing: true,
      totalTimeoutMs: 2_000,
    });
    // A callee serving one request per 20 ms and rejecting the others.
    const callee = oneEvery(clock, 20);
    const herd = () => Promise.all(Array.from({ length: 20 }, () => d.call(callee).catch(() => undefined)));
    await settle(clock, herd());
    store.refuse = true;
    await settle(clock, herd());
    // One booking per caller per BOOK_AGAIN_MS at most: 20 callers over at most 2 s.
    expect(store.refused).toBeGreaterThan(0);
    expect(store.refused).toBeLessThan(2_000);
    expect(store.available).toBe(true);
  });

  it("a breaker's end from the store is held no longer than this breaker's maxBreakMs (regression: openUntil 1e308 held it for good)", async () => {
    const clock = new VirtualClock();
    class FarOpen extends MemoryFleetStore {
      override async breaker(...args: Parameters<MemoryFleetStore['breaker']>): Promise<BreakerRecord | undefined> {
        const rec = await super.breaker(...args);
        return rec === undefined ? undefined : { ...rec, state: BREAKER_OPEN, openUntil: 1e308 };
      }
    }
    const store = new FarOpen(clock);
    const d = downstream('api', {
      clock,
      random: new SeededRandom(3),
      store,
      retry: false,
      budget: false,
      breaker: { threshold: 3, breakMs: 1_000, maxBreakMs: 5_000, breakJitter: 0 },
    });
    // The first call creates the lane, whose breaker then reads the fleet's record.
    await settle(clock, d.call(ok));
    await clock.advance(FLEET_SYNC_MS);
    expect(((await settle(clock, d.call(ok))).error as { reason?: string }).reason).toBe('circuit-open');
    // Redis goes away: the hold lapses by this breaker's own longest break at the latest.
    store.setAvailable(false);
    await clock.advance(5_000 + 4 * FLEET_SYNC_MS);
    expect((await settle(clock, d.call(ok))).value).toBe('ok');
  });

  it('a fleet estimate no process could have measured is not adopted (regression: 1e308 per ms became an infinite rate)', () => {
    const adopted: number[] = [];
    const pacer = { searching: true, adopt: (rate: number) => adopted.push(rate) } as unknown as Pacer;
    adoptFleetEstimate(pacer, 1e308, 0);
    adoptFleetEstimate(pacer, Number.POSITIVE_INFINITY, 0);
    adoptFleetEstimate(pacer, 0.1, 0);
    expect(adopted).toEqual([100]);
  });

  it("falling back stops following the fleet's queue (regression: a far end held local pacing after the store went down)", () => {
    const followed: number[] = [];
    const pacer = { followQueue: (end: number) => followed.push(end) };
    const view = new FleetQueueView((storeMs) => storeMs, pacer);
    view.learn(0, { baseTicket: 1, baseAt: 1e12, gap: 10 }, 5);
    expect(followed.at(-1)).toBeGreaterThan(1e12);
    view.forget();
    expect(followed.at(-1)).toBe(Number.NEGATIVE_INFINITY);
    // Until it books again, a reply no longer moves the pacer.
    view.learn(1, { baseTicket: 1, baseAt: 1e12, gap: 10 });
    expect(followed.at(-1)).toBe(Number.NEGATIVE_INFINITY);
  });
});

describe('FleetLink lifetime', () => {
  it('a downstream given a store and then dropped is collected; its listeners leave the store (regression: every one stayed for good)', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const clock = new VirtualClock();
    const store = new MemoryFleetStore(clock);
    const listeners = () =>
      (store as unknown as { listeners: Set<unknown> }).listeners.size +
      (store as unknown as { newsListeners: Set<unknown> }).newsListeners.size;
    const refs: WeakRef<object>[] = [];
    // Built in a function of its own, so that nothing on this stack keeps them.
    (() => {
      for (let i = 0; i < 20; i++) refs.push(new WeakRef(downstream(`tenant-${i}`, { clock, store })));
    })();
    expect(listeners()).toBe(40);
    // Bounded: a few collections and turns of the event loop (finalizers run after a collection).
    for (let i = 0; i < 20 && (refs.some((r) => r.deref() !== undefined) || listeners() > 0); i++) {
      await new Promise((r) => setImmediate(r));
      gc();
    }
    expect(refs.filter((r) => r.deref() !== undefined)).toHaveLength(0);
    expect(listeners()).toBe(0);
  });
});

describe("FleetLink: the fleet's pacing queue and callers' deadlines", () => {
  it("a caller whose shared slot would come after its deadline books none: the queue's end stays within the deadlines (regression: it ran 5.7 million ms out in 6 s)", async () => {
    const { clock, store, members } = fleet(4, {
      budget: false,
      breaker: false,
      retry: { maxAttempts: 50, backoff: { baseMs: 5, jitter: 'full' } },
      pacing: true,
      totalTimeoutMs: 400,
    });
    // A callee serving one request per 20 ms (50/s) and rejecting the others at once.
    const callee = oneEvery(clock, 20);
    // Five workers per process, each calling again as soon as its last call ended.
    const endAt = 6_000;
    const outcomes = { ok: 0, deadline: 0, other: 0 };
    const worker = async (d: ReturnType<typeof downstream>) => {
      while (clock.monotonic() < endAt) {
        try {
          await d.call(callee);
          outcomes.ok++;
        } catch (error) {
          if ((error as { reason?: string }).reason === 'deadline') outcomes.deadline++;
          else outcomes.other++;
        }
      }
    };
    const done = Promise.all(members.flatMap((d) => Array.from({ length: 5 }, () => worker(d))));
    let finished = false;
    done.then(() => (finished = true));
    const scope = { downstream: 'api', key: 'api' };
    let furthest = 0;
    while (!finished) {
      await clock.advance(0);
      const p = store.paceLedger(scope);
      if (p.ticket > 1) furthest = Math.max(furthest, slotOf(p, p.ticket - 1) - clock.monotonic());
      const next = clock.nextAt();
      if (next === undefined) break;
      await clock.advanceTo(next);
    }
    await done;
    // The herd really was held to its deadlines by the queue, and still got the callee's rate.
    expect(outcomes.deadline).toBeGreaterThan(20);
    expect(outcomes.ok).toBeGreaterThan(0.8 * (endAt / 20));
    expect(outcomes.other).toBe(0);
    // No ticket is booked further out than a caller can use (400 ms); a cut may still space
    // booked tickets further out (their holders then give them up). Before, the end ran
    // 5.7 million ms out in these 6 s: every refused caller had taken a ticket.
    expect(furthest).toBeLessThan(800);
  });
});
