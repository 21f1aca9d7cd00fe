import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { downstream } from '../../src/index.js';
import { SeededRandom } from '../../src/random/random.js';
import {
  type BudgetLedger,
  bookSlot,
  closedBreaker,
  emptyPace,
  type PaceLedger,
  syncBreaker,
  syncBudget,
  syncPace,
} from '../../src/store/fleet-ledger.js';
import {
  type BreakerRecord,
  RATE_PROBE,
  RATE_SHARE,
  RATE_WHOLE,
  type RateKindCode,
  type StoreAvailability,
} from '../../src/store/fleet-store.js';
import { commandSender, type RedisClientLike, type SendCommand } from '../../src/store/redis-client.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';
import { connectNodeRedis, connectRedis, RedisServer } from '../support/redis-server.js';
import { PACE_REQUEST } from './support/requests.js';

/** Both clients kindly accepts, each against its own real redis-server. */
const CLIENTS = [
  {
    name: 'ioredis 6',
    connect: async (port: number) => {
      const client = await connectRedis(port);
      const accepted: RedisClientLike = client;
      return { client: accepted, close: () => client.disconnect() };
    },
  },
  {
    name: 'node-redis 6 (redis)',
    connect: async (port: number) => {
      const client = await connectNodeRedis(port);
      // Assignable as it is: the public type accepts a node-redis client without a cast.
      const accepted: RedisClientLike = client;
      return { client: accepted, close: () => client.destroy() };
    },
  },
];

/** A contribution's kind from a uniform draw: share, whole or probe. */
function rateKind(u: number): RateKindCode {
  return u < 0.5 ? RATE_SHARE : u < 0.8 ? RATE_WHOLE : RATE_PROBE;
}

/** The Lua reply and its TypeScript twin hold the same fields, numbers equal to 6 decimals. */
function expectSameNumbers(reply: object, mirror: object): void {
  expect(Object.keys(reply).sort()).toEqual(Object.keys(mirror).sort());
  for (const [key, value] of Object.entries(mirror)) {
    expect(typeof value, key).toBe('number');
    expect((reply as Record<string, number>)[key], key).toBeCloseTo(value as number, 6);
  }
}

describe.each(CLIENTS)('RedisStore with $name', ({ connect }) => {
  let server: RedisServer;
  let client: RedisClientLike;
  let close: () => void;
  /** Raw commands for checking what the store wrote. */
  let send: SendCommand;

  beforeAll(async () => {
    server = await RedisServer.start();
    ({ client, close } = await connect(server.port));
    send = commandSender(client) as SendCommand;
  });

  afterAll(async () => {
    close();
    await server.dispose();
  });

  it('runs the same arithmetic as the in-process ledger (seed "lua-twin")', async () => {
    const store = new RedisStore({ client, prefix: 'twin', timeoutMs: 10_000 });
    const random = new SeededRandom(0x1a7);
    const budget: BudgetLedger = { buckets: new Map() };
    let breaker: BreakerRecord = closedBreaker();
    const pace: PaceLedger = emptyPace();
    const owners = ['a', 'b', 'c'];
    const scope = { downstream: 'twin', key: 'k' };
    let lastBucket = 0;
    let lastNow = 0;
    /** Bookings refused because the next slot came after the caller's `latest`. */
    let unbooked = 0;
    let booked = 0;
    for (let i = 0; i < 300; i++) {
      const pick = random.next();
      const owner = owners[Math.floor(random.next() * owners.length)] as string;
      if (pick < 0.4) {
        // One bucket size for the whole run: the ledger's buckets assume it.
        const request = {
          owner,
          bucketMs: 10,
          windowBuckets: 3,
          ratio: 0.2,
          reserve: Math.floor(random.next() * 3),
          requests: Math.floor(random.next() * 10),
          returned: Math.floor(random.next() * 3),
          returnBucket: lastBucket - Math.floor(random.next() * 4),
          spent: Math.floor(random.next() * 2),
          want: Math.floor(random.next() * 5),
        };
        const reply = await store.budget(scope, request);
        expect(reply).toBeDefined();
        lastBucket = reply!.bucket;
        expect(reply).toEqual(syncBudget(budget, reply!.now, request));
      } else if (pick < 0.8) {
        const reports = ['none', 'open', 'close'] as const;
        const request = {
          owner,
          generation: random.next() < 0.7 ? breaker.generation : breaker.generation - 1,
          report: reports[Math.floor(random.next() * 3)] as 'none' | 'open' | 'close',
          breakMs: 5,
          breakGrowth: 2,
          maxBreakMs: 40,
          breakJitter: 0.1,
          u: random.next(),
          wantProbe: random.next() < 0.7,
          probeLeaseMs: 10,
          ttlMs: 60_000,
        };
        const reply = await store.breaker(scope, request);
        expect(reply).toBeDefined();
        breaker = syncBreaker(breaker, reply!.now, request);
        expect(reply).toEqual(breaker);
      } else if (pick < 0.9) {
        const request = {
          owner,
          rate: random.next() < 0.5 ? 0 : random.next() / 10,
          kind: rateKind(random.next()),
          contributionMs: 20,
          minRate: 0.001,
          ttlMs: 60_000,
          served: random.next() < 0.3 ? 1 : 0,
          rejected: random.next() < 0.1 ? 1 : 0,
          unpaced: random.next() < 0.3 ? Math.floor(random.next() * 4) : 0,
          // Some callers can use a slot only until shortly after (or before) the last reply.
          latest: random.next() < 0.4 ? undefined : lastNow + (random.next() - 0.25) * 200,
        };
        // Paced answers are counted over a window of store time: spread the reports so that
        // the fleet's delivery rate is read (and caps the estimate) on every machine.
        await new Promise((r) => setTimeout(r, 4));
        const reply = await store.bookSlot(scope, request);
        expect(reply).toBeDefined();
        lastNow = reply!.now;
        if (reply!.ticket === 0) unbooked++;
        else booked++;
        expectSameNumbers(reply!, bookSlot(pace, reply!.now, request));
      } else {
        const request = {
          owner,
          rate: random.next() / 10,
          kind: rateKind(random.next()),
          contributionMs: 20,
          minRate: 0.001,
          active: random.next() < 0.5,
          quietMs: 30,
          hintMs: random.next() < 0.3 ? 15 : 0,
          ttlMs: 60_000,
          served: random.next() < 0.3 ? 1 : 0,
          rejected: random.next() < 0.1 ? 1 : 0,
          unpaced: random.next() < 0.3 ? Math.floor(random.next() * 4) : 0,
        };
        await new Promise((r) => setTimeout(r, 4));
        const reply = await store.pace(scope, request);
        expect(reply).toBeDefined();
        lastNow = reply!.now;
        expectSameNumbers(reply!, syncPace(pace, reply!.now, request));
      }
    }
    expect(store.counters.failures).toBe(0);
    // Both ways of a booking were compared: some refused for a caller's `latest`, most booked.
    expect(unbooked).toBeGreaterThan(0);
    expect(booked).toBeGreaterThan(0);
  });

  it("sends one downstream's operations of one turn in one round trip, each answered as alone, in order", async () => {
    const store = new RedisStore({ client, prefix: 'batch', timeoutMs: 10_000 });
    const scope = { downstream: 'batch', key: 'k' };
    const budget: BudgetLedger = { buckets: new Map() };
    const pace: PaceLedger = emptyPace();
    const budgetRequest = (requests: number) => ({
      owner: 'a',
      bucketMs: 1000,
      windowBuckets: 10,
      ratio: 0.2,
      reserve: 5,
      requests,
      returned: 0,
      returnBucket: 0,
      spent: 0,
      want: 3,
    });
    const breakerRequest = {
      owner: 'a',
      generation: -1,
      report: 'open' as const,
      breakMs: 5_000,
      breakGrowth: 2,
      maxBreakMs: 40_000,
      breakJitter: 0,
      u: 0.5,
      wantProbe: false,
      probeLeaseMs: 10_000,
      ttlMs: 60_000,
    };
    const bookRequest = {
      owner: 'a',
      rate: 0.05,
      kind: RATE_SHARE as RateKindCode,
      contributionMs: 2_000,
      minRate: 0.001,
      ttlMs: 60_000,
    };
    const paceRequest = PACE_REQUEST;
    // A first batch loads the batch script into Redis (a NOSCRIPT, then EVAL: one more command).
    const warm = { downstream: 'batch-warm', key: 'k' };
    await Promise.all([store.budget(warm, budgetRequest(1)), store.budget(warm, budgetRequest(1))]);
    const before = { ...store.counters };
    // Asked in one synchronous turn, as the background sync and a herd's bookings ask them.
    const replies = await Promise.all([
      store.budget(scope, budgetRequest(4)),
      store.breaker(scope, breakerRequest),
      store.bookSlot(scope, bookRequest),
      store.bookSlot(scope, bookRequest),
      store.pace(scope, paceRequest),
      store.budget(scope, budgetRequest(2)),
      // Another downstream: another hash tag (another Cluster slot), so another round trip.
      store.budget({ downstream: 'batch-other', key: 'k' }, budgetRequest(1)),
    ]);
    expect(store.counters.commands - before.commands).toBe(2);
    expect(store.counters.operations - before.operations).toBe(7);
    expect(store.counters.failures).toBe(0);
    const [b1, br, s1, s2, p1, b2, other] = replies;
    // Each reply is what the ledger gives for that operation applied after the ones before it.
    expect(b1).toEqual(syncBudget(budget, b1!.now, budgetRequest(4)));
    expect(br).toEqual(syncBreaker(closedBreaker(), br!.now, breakerRequest));
    expect(br!.state).toBe(1);
    expectSameNumbers(s1!, bookSlot(pace, s1!.now, bookRequest));
    expectSameNumbers(s2!, bookSlot(pace, s2!.now, bookRequest));
    expect(s2!.ticket).toBe(s1!.ticket + 1);
    expectSameNumbers(p1!, syncPace(pace, p1!.now, paceRequest));
    expect(b2).toEqual(syncBudget(budget, b2!.now, budgetRequest(2)));
    expect(b2!.requests).toBe(6);
    expect(other).toEqual(syncBudget({ buckets: new Map() }, other!.now, budgetRequest(1)));
  });

  it('grows a fleet served in full while its tickets wait, in Lua as in the ledger', async () => {
    const store = new RedisStore({ client, prefix: 'grow', timeoutMs: 10_000 });
    const pace: PaceLedger = emptyPace();
    const scope = { downstream: 'grow', key: 'k' };
    // One share of 20/s; its tickets pile up (a booking every 5 ms), every answer is served.
    const request = { owner: 'a', rate: 0.02, contributionMs: 2_000, minRate: 0.001, ttlMs: 60_000, served: 1 };
    let highest = 0;
    for (let i = 0; i < 160; i++) {
      await new Promise((r) => setTimeout(r, 5));
      const reply = await store.bookSlot(scope, request);
      expect(reply).toBeDefined();
      expectSameNumbers(reply!, bookSlot(pace, reply!.now, request));
      highest = Math.max(highest, reply!.estimate);
    }
    // The fleet got through more than its share said and grew past it (while tickets waited:
    // once the grown queue outpaces the bookings, nothing waits and the share stands again).
    expect(highest).toBeGreaterThan(0.02);
    expect(store.counters.failures).toBe(0);
  });

  it('pushes the waiting tickets by first tries, holds a rejected fleet at what it got through while they arrive, and ends a spell after a quiet window, in Lua as in the ledger', async () => {
    const store = new RedisStore({ client, prefix: 'arrive', timeoutMs: 10_000 });
    const pace: PaceLedger = emptyPace();
    const scope = { downstream: 'arrive', key: 'k' };
    const share = { owner: 'a', rate: 0.1, contributionMs: 5_000, minRate: 0.001, ttlMs: 60_000 };
    const synced = { ...share, active: true, quietMs: 2_000, hintMs: 0 };
    // Thirty tickets at 100/s: the queue reaches ~300 ms out.
    for (let i = 0; i < 30; i++) {
      const reply = await store.bookSlot(scope, share);
      expectSameNumbers(reply!, bookSlot(pace, reply!.now, share));
    }
    // Five first tries: the head goes three gaps beyond now, no further.
    const pushed = await store.pace(scope, { ...synced, unpaced: 5 });
    expectSameNumbers(pushed!, syncPace(pace, pushed!.now, { ...synced, unpaced: 5 }));
    expect(pushed!.baseAt).toBeCloseTo(pushed!.now + 30, 6);
    // A quarter of a second of answers, one served and one rejected every 10 ms, while first
    // tries keep arriving: the fleet counts for what it got through, above its share.
    let reply = pushed;
    for (let i = 0; i < 25; i++) {
      await new Promise((r) => setTimeout(r, 10));
      const request = { ...synced, rate: 0.02, served: 1, rejected: 1, unpaced: 2 };
      reply = await store.pace(scope, request);
      expectSameNumbers(reply!, syncPace(pace, reply!.now, request));
    }
    expect(reply!.estimate).toBeGreaterThan(0.02);
    // Served, then a whole window with no answer: the next answers end the spell.
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 10));
      const request = { ...synced, served: 1 };
      reply = await store.pace(scope, request);
      expectSameNumbers(reply!, syncPace(pace, reply!.now, request));
    }
    const spellKey = 'arrive:{arrive}:pace:k';
    expect(Number(await send(['HGET', spellKey, 'spellFrom']))).toBe(pace.spellFrom);
    expect(pace.spellFrom).toBeGreaterThanOrEqual(0);
    await new Promise((r) => setTimeout(r, 400));
    reply = await store.pace(scope, { ...synced, served: 1 });
    expectSameNumbers(reply!, syncPace(pace, reply!.now, { ...synced, served: 1 }));
    expect(pace.spellFrom).toBe(-1);
    expect(Number(await send(['HGET', spellKey, 'spellFrom']))).toBe(-1);
    expect(store.counters.failures).toBe(0);
  });

  it('caps a fleet at what it got through over a spell of rejections, and lets a search space the queue below minRate, in Lua as in the ledger', async () => {
    const store = new RedisStore({ client, prefix: 'spell', timeoutMs: 10_000 });
    const pace: PaceLedger = emptyPace();
    const scope = { downstream: 'spell', key: 'k' };
    // A window served 10 and rejected 5; then a second and a quarter with nothing answered (a
    // slow limit's wait), the processes' shares saying 50/s.
    const request = { owner: 'a', rate: 0.05, contributionMs: 5_000, minRate: 0.001, ttlMs: 60_000 };
    let reply = await store.bookSlot(scope, { ...request, served: 10, rejected: 5 });
    expectSameNumbers(reply!, bookSlot(pace, reply!.now, { ...request, served: 10, rejected: 5 }));
    const started = reply!.now;
    while (reply!.now - started < 1_250) {
      await new Promise((r) => setTimeout(r, 50));
      reply = await store.bookSlot(scope, request);
      expectSameNumbers(reply!, bookSlot(pace, reply!.now, request));
    }
    // Capped by the spell: 10 served over its length, below the shares' 50/s.
    expect(reply!.estimate).toBeCloseTo(10 / (reply!.now - started), 9);
    // A fleet that only probes, one probe every 5 s: the queue follows it (minRate is 1/s).
    const searching = {
      owner: 'b',
      rate: 0.000_2,
      kind: RATE_PROBE as RateKindCode,
      contributionMs: 5_000,
      minRate: 0.001,
      ttlMs: 60_000,
    };
    const probing = await store.bookSlot({ downstream: 'spell-search', key: 'k' }, searching);
    expectSameNumbers(probing!, bookSlot(emptyPace(), probing!.now, searching));
    expect(probing!.gap).toBeCloseTo(5_000, 9);
    expect(store.counters.failures).toBe(0);
  });

  it('keys carry the prefix and the downstream as a Cluster hash tag, and every key has a TTL', async () => {
    const store = new RedisStore({ client, prefix: 'ttl', timeoutMs: 10_000 });
    const scope = { downstream: 'pay{ments}', key: 'pay{ments}' };
    await store.budget(scope, {
      owner: 'a',
      bucketMs: 1000,
      windowBuckets: 10,
      ratio: 0.2,
      reserve: 100,
      requests: 3,
      returned: 0,
      returnBucket: 0,
      spent: 0,
      want: 2,
    });
    await store.breaker(scope, {
      owner: 'a',
      generation: -1,
      report: 'open',
      breakMs: 1000,
      breakGrowth: 2,
      maxBreakMs: 60_000,
      breakJitter: 0,
      u: 0.5,
      wantProbe: false,
      probeLeaseMs: 1000,
      ttlMs: 70_000,
    });
    await store.bookSlot(scope, {
      owner: 'a',
      rate: 0.1,
      contributionMs: 2000,
      minRate: 0.001,
      ttlMs: 60_000,
      served: 2,
      rejected: 1,
    });
    await store.pace(scope, {
      owner: 'a',
      rate: 0.1,
      contributionMs: 2000,
      minRate: 0.001,
      active: true,
      quietMs: 2000,
      hintMs: 0,
      ttlMs: 60_000,
    });
    const keys = ((await send(['KEYS', 'ttl:*'])) as string[]).sort();
    expect(keys).toEqual([
      'ttl:{pay%7Bments%7D}:breaker:pay{ments}',
      'ttl:{pay%7Bments%7D}:budget:pay{ments}',
      'ttl:{pay%7Bments%7D}:pace-answers:pay{ments}',
      'ttl:{pay%7Bments%7D}:pace-rates:pay{ments}',
      'ttl:{pay%7Bments%7D}:pace:pay{ments}',
    ]);
    for (const key of keys) expect(Number(await send(['PTTL', key]))).toBeGreaterThan(0);
  });

  it('a breaker opened in one process reaches another as pub/sub news, with no sync of its own', async () => {
    // Virtual clocks that never move: neither downstream's background sync ever runs, so the
    // only way b can learn of a's trip is the news.
    const clock = new VirtualClock();
    // a does not listen (`subscriber: false`): its trip is news all the same.
    const storeA = new RedisStore({ client, prefix: 'news', timeoutMs: 10_000, subscriber: false });
    const storeB = new RedisStore({ client, prefix: 'news', timeoutMs: 10_000 });
    const options = { clock, retry: false, budget: false, breaker: { threshold: 1, breakMs: 60_000 } } as const;
    const a = downstream('news-api', { ...options, random: new SeededRandom(1), store: storeA });
    const b = downstream('news-api', { ...options, random: new SeededRandom(2), store: storeB });
    const ok = () => Promise.resolve('ok');
    const reason = async (call: Promise<unknown>) =>
      (await call.then(
        () => undefined,
        (e: { reason?: string }) => e.reason,
      )) ?? 'ok';
    expect(await reason(b.call(ok))).toBe('ok');
    expect(await reason(a.call(ok))).toBe('ok');
    // Bounded waits (5 s leaves room for a loaded machine); they fail only if nothing arrives.
    const until = async (done: () => boolean | Promise<boolean>) => {
      for (let i = 0; i < 250 && !(await done()); i++) await new Promise((r) => setTimeout(r, 20));
    };
    await until(() => storeB.newsLive);
    expect(storeB.newsLive).toBe(true);
    // Anyone may publish on the channel: what is not news is dropped, and nothing breaks.
    await send(['PUBLISH', storeB.newsChannel, 'not json']);
    await send(['PUBLISH', storeB.newsChannel, JSON.stringify(['other-api', 'other-api'])]);
    await send(['PUBLISH', storeB.newsChannel, JSON.stringify({ downstream: 1 })]);
    expect(await reason(b.call(ok))).toBe('ok');
    const fail = () => Promise.reject(Object.assign(new Error('HTTP 503'), { status: 503 }));
    expect(await reason(a.call(fail))).not.toBe('circuit-open');
    expect(await reason(a.call(ok))).toBe('circuit-open');
    let seen = 'ok';
    await until(async () => (seen = await reason(b.call(ok))) === 'circuit-open');
    expect(seen).toBe('circuit-open');
    expect(clock.monotonic()).toBe(0);
    storeA.close();
    storeB.close();
    expect(storeB.newsLive).toBe(false);
  });

  it('fails open when Redis dies, skips it while down, and finds it again after a restart', async () => {
    const store = new RedisStore({ client, prefix: 'down', timeoutMs: 10_000, reconnectMs: 20 });
    const changes: StoreAvailability[] = [];
    store.onAvailability((c) => changes.push(c));
    const scope = { downstream: 'd', key: 'd' };
    const request = {
      owner: 'a',
      rate: 0.1,
      contributionMs: 2000,
      minRate: 0.001,
      ttlMs: 60_000,
    };
    expect(await store.bookSlot(scope, request)).toBeDefined();
    await server.stop();
    expect(await store.bookSlot(scope, request)).toBeUndefined();
    expect(store.available).toBe(false);
    const skippedBefore = store.counters.skipped;
    expect(await store.bookSlot(scope, request)).toBeUndefined();
    expect(store.counters.skipped).toBe(skippedBefore + 1);
    await server.start();
    // Bounded wait (the store pings every 20 ms here; 30 s leaves room for a loaded machine).
    for (let i = 0; i < 1_500 && !store.available; i++) await new Promise((r) => setTimeout(r, 20));
    expect(store.available).toBe(true);
    // The restarted server has no scripts cached: NOSCRIPT, then EVAL.
    expect(await store.bookSlot(scope, request)).toBeDefined();
    expect(changes.map((c) => c.available)).toEqual([false, true]);
    store.close();
  });

  it('the news connection ends with the client it was duplicated from (a process that only disconnects its client exits)', async () => {
    const own = await connect(server.port);
    const store = new RedisStore({ client: own.client, prefix: 'news-end', timeoutMs: 10_000 });
    store.onBreakerNews(() => {});
    const subscribers = async () =>
      String(await send(['CLIENT', 'LIST']))
        .split('\n')
        .filter((line) => / sub=[1-9]/.test(line)).length;
    const until = async (done: () => Promise<boolean>) => {
      for (let i = 0; i < 250 && !(await done()); i++) await new Promise((r) => setTimeout(r, 20));
    };
    const before = await subscribers();
    await until(async () => store.newsLive);
    expect(store.newsLive).toBe(true);
    expect(await subscribers()).toBe(before + 1);
    own.close();
    await until(async () => (await subscribers()) === before);
    expect(await subscribers()).toBe(before);
    expect(store.newsLive).toBe(false);
  });

  it('news stops with Redis (listeners are told), and comes back subscribed after a restart', async () => {
    const store = new RedisStore({ client, prefix: 'news-restart', timeoutMs: 10_000, reconnectMs: 20 });
    const heard: (string | undefined)[] = [];
    store.onBreakerNews((scope) => heard.push(scope?.key));
    // Bounded waits (30 s leaves room for a loaded machine and the clients' reconnect delays).
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 1_500 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
    };
    await until(() => store.newsLive);
    expect(store.newsLive).toBe(true);
    await server.stop();
    await until(() => !store.newsLive);
    expect(store.newsLive).toBe(false);
    expect(heard).toContain(undefined);
    await server.start();
    await until(() => store.newsLive);
    expect(store.newsLive).toBe(true);
    // The command client reconnects on its own schedule: publish until it answers and the news is heard.
    const message = JSON.stringify(['news-restart-api', 'k']);
    const publishUntilHeard = () => {
      if (heard.includes('k')) return true;
      send(['PUBLISH', store.newsChannel, message]).catch(() => {});
      return false;
    };
    await until(publishUntilHeard);
    expect(heard.filter((k) => k === 'k').length).toBeGreaterThanOrEqual(1);
    // Subscribed once, not once per reconnect: one message is heard once.
    await send(['PUBLISH', store.newsChannel, JSON.stringify(['news-restart-api', 'once'])]);
    await until(() => heard.includes('once'));
    await send(['PING']);
    await new Promise((r) => setTimeout(r, 50));
    expect(heard.filter((k) => k === 'once')).toEqual(['once']);
    store.close();
  });
});

describe('RedisStore news with an ioredis client made with lazyConnect', () => {
  it('connects the duplicate itself and subscribes', async () => {
    const server = await RedisServer.start();
    const { Redis } = await import('ioredis');
    const client = new Redis(server.port, '127.0.0.1', { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    client.on('error', () => {});
    await client.connect();
    const store = new RedisStore({ client, prefix: 'lazy', timeoutMs: 10_000 });
    store.onBreakerNews(() => {});
    for (let i = 0; i < 250 && !store.newsLive; i++) await new Promise((r) => setTimeout(r, 20));
    expect(store.newsLive).toBe(true);
    store.close();
    client.disconnect();
    await server.dispose();
  });
});

describe('RedisStore timeouts (virtual clock, a scripted client)', () => {
  /** A client whose answers arrive `delayMs` after each command, through the same clock. */
  function slowClient(clock: VirtualClock, delayMs: number): RedisClientLike {
    return {
      sendCommand(args: string[]): Promise<unknown> {
        return new Promise((resolve) => {
          const answer = args[0] === 'PING' ? 'PONG' : [0, 1, 0.1];
          clock.schedule(delayMs, () => resolve(answer));
        });
      },
    };
  }
  const scope = { downstream: 'd', key: 'd' };
  const request = { owner: 'a', rate: 0.1, contributionMs: 2000, minRate: 0.001, ttlMs: 60_000 };

  it('an answer due at the same instant as the timeout wins (regression: a busy event loop took node-redis stores down)', async () => {
    const clock = new VirtualClock();
    const store = new RedisStore({ client: slowClient(clock, 5), timeoutMs: 5, clock });
    for (let i = 0; i < 5; i++) {
      const reply = store.bookSlot(scope, request);
      await clock.advance(5);
      await clock.advance(0);
      expect(await reply).toBeDefined();
    }
    expect(store.available).toBe(true);
    expect(store.counters.failures).toBe(0);
    store.close();
  });

  it('answers later than the timeout are skipped, and three in a row take the store down', async () => {
    const clock = new VirtualClock();
    const store = new RedisStore({ client: slowClient(clock, 8), timeoutMs: 5, clock });
    const changes: StoreAvailability[] = [];
    store.onAvailability((c) => changes.push(c));
    for (let i = 0; i < 3; i++) {
      const reply = store.bookSlot(scope, request);
      await clock.advance(10);
      expect(await reply).toBeUndefined();
    }
    expect(store.available).toBe(false);
    expect(changes).toEqual([{ available: false, reason: '3 answers in a row slower than 5 ms' }]);
    store.close();
  });
});

describe('RedisStore batches (virtual clock, a scripted client)', () => {
  const scope = { downstream: 'd', key: 'd' };
  const request = { owner: 'a', rate: 0.1, contributionMs: 2000, minRate: 0.001, ttlMs: 60_000 };
  /** Records each command; `answer` decides what it gets, after `delayMs` on the clock. */
  function scriptedClient(
    clock: VirtualClock,
    delayMs: number,
    answer: (args: string[]) => unknown,
  ): {
    client: RedisClientLike;
    sent: string[][];
  } {
    const sent: string[][] = [];
    const client = {
      sendCommand(args: string[]): Promise<unknown> {
        sent.push(args);
        return new Promise((resolve, reject) => {
          clock.schedule(delayMs, () => {
            const value = answer(args);
            if (value instanceof Error) reject(value);
            else resolve(value);
          });
        });
      },
    };
    return { client, sent };
  }
  const bookReply = (ticket: number) => [1000, ticket, 1, 1000, 10, 0];

  it('three operations of one turn are one command; each gets its own entry of the reply', async () => {
    const clock = new VirtualClock();
    const { client, sent } = scriptedClient(clock, 1, (args) =>
      args[0] === 'EVALSHA' ? [bookReply(1), bookReply(2), bookReply(3)] : 'PONG',
    );
    const store = new RedisStore({ client, timeoutMs: 5, clock });
    const replies = Promise.all([1, 2, 3].map(() => store.bookSlot(scope, request)));
    await clock.advance(1);
    expect((await replies).map((r) => r?.ticket)).toEqual([1, 2, 3]);
    expect(sent).toHaveLength(1);
    // EVALSHA sha numkeys keys… then the count, and per operation its id, key count, argument count, arguments.
    const [command, , numKeys, ...rest] = sent[0] as string[];
    expect(command).toBe('EVALSHA');
    expect(Number(numKeys)).toBe(9);
    expect(rest[9]).toBe('3');
    expect(store.counters).toMatchObject({ commands: 1, operations: 3, failures: 0 });
    store.close();
  });

  it('a batch answered late fails each of its operations, as one piece of evidence', async () => {
    const clock = new VirtualClock();
    const { client } = scriptedClient(clock, 8, () => [bookReply(1), bookReply(2), bookReply(3)]);
    const store = new RedisStore({ client, timeoutMs: 5, clock });
    const replies = Promise.all([1, 2, 3].map(() => store.bookSlot(scope, request)));
    await clock.advance(10);
    expect(await replies).toEqual([undefined, undefined, undefined]);
    expect(store.counters.failures).toBe(3);
    // One slow answer is not a slow Redis: the store stays up (three in a row would not).
    expect(store.available).toBe(true);
    store.close();
  });

  it('a batch that errors fails each of its operations and takes the store down once', async () => {
    const clock = new VirtualClock();
    const { client } = scriptedClient(clock, 1, (args) => (args[0] === 'PING' ? 'PONG' : new Error('ERR boom')));
    const store = new RedisStore({ client, timeoutMs: 5, clock });
    const changes: StoreAvailability[] = [];
    store.onAvailability((c) => changes.push(c));
    const replies = Promise.all([1, 2].map(() => store.bookSlot(scope, request)));
    await clock.advance(1);
    expect(await replies).toEqual([undefined, undefined]);
    expect(changes).toEqual([{ available: false, reason: 'ERR boom' }]);
    store.close();
  });

  it('a batch reply of the wrong length fails every operation and takes the store down', async () => {
    const clock = new VirtualClock();
    const { client } = scriptedClient(clock, 1, () => [bookReply(1)]);
    const store = new RedisStore({ client, timeoutMs: 5, clock });
    const replies = Promise.all([1, 2].map(() => store.bookSlot(scope, request)));
    await clock.advance(1);
    expect(await replies).toEqual([undefined, undefined]);
    expect(store.available).toBe(false);
    store.close();
  });
});
