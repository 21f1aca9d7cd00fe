import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_MAX_HINT_MS, FLEET_MAX_RATE } from '../../src/store/fleet-ledger.js';
import type { StoreAvailability } from '../../src/store/fleet-store.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { connectRedis, RedisServer } from '../support/redis-server.js';
import { BREAKER_REQUEST, BUDGET_REQUEST, PACE_REQUEST } from './support/requests.js';

/**
 * Records written by hand, by an older build or by a peer configured otherwise: each is
 * bounded or reset by the scripts, fails at most its own operation, and never takes the
 * store down for everyone.
 */
describe('RedisStore with hostile or malformed records (real redis-server)', () => {
  let server: RedisServer;
  let client: Redis;

  beforeAll(async () => {
    server = await RedisServer.start();
    client = await connectRedis(server.port);
  });

  afterAll(async () => {
    client.disconnect();
    await server.dispose();
  });

  const breakerRequest = BREAKER_REQUEST;
  const budgetRequest = BUDGET_REQUEST;
  const paceRequest = PACE_REQUEST;
  const bookRequest = { owner: 'a', rate: 0.05, contributionMs: 2_000, minRate: 0.001, ttlMs: 60_000 };

  it('is not available once closed, and tells its links so (regression: paced calls spun after close)', async () => {
    const store = new RedisStore({ client, prefix: 'closed', timeoutMs: 10_000 });
    const changes: StoreAvailability[] = [];
    store.onAvailability((c) => changes.push(c));
    expect(await store.bookSlot({ downstream: 'c', key: 'c' }, bookRequest)).toBeDefined();
    store.close();
    expect(store.available).toBe(false);
    expect(changes).toEqual([{ available: false, reason: 'store closed' }]);
    expect(await store.bookSlot({ downstream: 'c', key: 'c' }, bookRequest)).toBeUndefined();
  });

  it("caps a breaker's end at the reader's own maxBreakMs from now (regression: openUntil 1e308 held it open for good)", async () => {
    const store = new RedisStore({ client, prefix: 'brk', timeoutMs: 10_000 });
    const scope = { downstream: 'b', key: 'b' };
    await client.hset('brk:{b}:breaker:b', 'state', '1', 'generation', '7', 'openUntil', '1e308', 'probeUntil', '1e308');
    const rec = await store.breaker(scope, breakerRequest);
    expect(rec).toBeDefined();
    expect(rec!.state).toBe(1);
    expect(rec!.openUntil).toBeLessThanOrEqual(rec!.now + 60_000);
    expect(rec!.probeUntil).toBeLessThanOrEqual(rec!.now + 10_000);
    expect(Number(await client.hget('brk:{b}:breaker:b', 'openUntil'))).toBeLessThanOrEqual(rec!.now + 60_000);
    store.close();
  });

  it('caps shared pacing ends, epochs and contributions (regression: hintUntil 1e308 held the fleet for good)', async () => {
    const store = new RedisStore({ client, prefix: 'pace', timeoutMs: 10_000 });
    const scope = { downstream: 'p', key: 'p' };
    await client.hset(
      'pace:{p}:pace:p',
      ...['hintUntil', '1e308', 'activeUntil', '1e308', 'baseAt', '1e308', 'ticket', '9', 'baseTicket', '1', 'gap', '10'],
    );
    await client.hset('pace:{p}:pace-rates:p', 'evil', '1e308:1e308:0');
    const reply = await store.pace(scope, paceRequest);
    expect(reply).toBeDefined();
    const now = reply!.now;
    expect(reply!.hintUntil).toBeLessThanOrEqual(now + FLEET_MAX_HINT_MS);
    expect(reply!.activeUntil).toBeLessThanOrEqual(now + FLEET_MAX_HINT_MS);
    expect(reply!.baseAt).toBeLessThanOrEqual(now + FLEET_MAX_HINT_MS + reply!.gap);
    expect(reply!.estimate).toBeLessThanOrEqual(FLEET_MAX_RATE);
    expect(await client.hget('pace:{p}:pace-rates:p', 'evil')).toBeNull();
    const booked = await store.bookSlot(scope, bookRequest);
    expect(booked).toBeDefined();
    expect(booked!.baseAt).toBeLessThanOrEqual(booked!.now + FLEET_MAX_HINT_MS + booked!.gap);
    expect(Number.isFinite(booked!.estimate)).toBe(true);
    store.close();
  });

  it('drops budget buckets dated ahead of now and counts that are negative or not numbers (regression: they never expired)', async () => {
    const store = new RedisStore({ client, prefix: 'bud', timeoutMs: 10_000 });
    const key = 'bud:{u}:budget:u';
    await client.hset(key, 't:99999999999999', '1e15', 'q:99999999999999', '1e15', 'q:1', '-5');
    const reply = await store.budget({ downstream: 'u', key: 'u' }, budgetRequest);
    expect(reply).toBeDefined();
    expect(reply!.granted).toBe(5);
    expect(reply!.requests).toBe(0);
    const fields = Object.keys(await client.hgetall(key));
    expect(fields.filter((f) => f.includes('99999999999999'))).toEqual([]);
    expect(store.available).toBe(true);
    store.close();
  });

  it('a field that does not parse reads as its default, and the store stays up (regression: one bad field took it down for every downstream)', async () => {
    const store = new RedisStore({ client, prefix: 'fld', timeoutMs: 10_000 });
    const changes: StoreAvailability[] = [];
    store.onAvailability((c) => changes.push(c));
    await client.hset('fld:{f}:budget:f', 'o:someone', 'not-a-number', 't:zz', '1', 'q:3', 'nan');
    await client.hset('fld:{f}:breaker:f', 'state', 'x', 'generation', 'y', 'openUntil', 'inf', 'opensInRow', '-');
    await client.hset('fld:{f}:pace-rates:f', 'someone', 'garbage', 'other', 'a:b:c');
    await client.hset('fld:{f}:pace-answers:f', 'sxx', '1', 'r5', 'inf');
    await client.hset('fld:{f}:pace:f', 'hintUntil', 'never', 'ticket', 'many', 'gap', 'nan', 'spellFrom', 'soon');
    await client.hset('fld:{f}:pace:f', 'spellServed', '-7', 'spellServedSince', 'inf', 'unpacedAt', 'lately');
    const scope = { downstream: 'f', key: 'f' };
    const [budget, breaker, booked, paced] = await Promise.all([
      store.budget(scope, budgetRequest),
      store.breaker(scope, breakerRequest),
      store.bookSlot(scope, bookRequest),
      store.pace(scope, paceRequest),
    ]);
    expect(budget?.granted).toBe(5);
    expect(breaker?.state).toBe(0);
    expect(booked?.ticket).toBe(1);
    expect(Number.isFinite(paced?.baseAt)).toBe(true);
    expect(paced?.estimate).toBeGreaterThanOrEqual(0);
    expect(store.available).toBe(true);
    expect(store.counters.failures).toBe(0);
    expect(changes).toEqual([]);
    store.close();
  });

  it('a key of another type is reset, not a WRONGTYPE for every operation (regression: the store went down over and over)', async () => {
    const store = new RedisStore({ client, prefix: 'wt', timeoutMs: 10_000 });
    for (const policy of ['budget', 'breaker', 'pace', 'pace-rates']) await client.set(`wt:{w}:${policy}:w`, 'garbage');
    await client.rpush('wt:{w}:pace-answers:w', 'garbage');
    const scope = { downstream: 'w', key: 'w' };
    // Alone, then batched (one script run for several operations).
    expect(await store.breaker(scope, breakerRequest)).toBeDefined();
    const replies = await Promise.all([
      store.budget(scope, budgetRequest),
      store.bookSlot(scope, bookRequest),
      store.pace(scope, paceRequest),
    ]);
    expect(replies.every((r) => r !== undefined)).toBe(true);
    expect(store.available).toBe(true);
    expect(store.counters.failures).toBe(0);
    for (const policy of ['budget', 'breaker', 'pace', 'pace-rates', 'pace-answers']) {
      expect(await client.type(`wt:{w}:${policy}:w`)).toMatch(/hash|none/);
    }
    store.close();
  });
});
