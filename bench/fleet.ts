import { downstream } from '../dist/index.js';
import { redisStore } from '../dist/redis.js';
import { connectRedis, RedisServer } from '../examples/support/redis-server.js';
import type { BenchCase } from './cases.js';

/**
 * The fleet store's cost on the hot path, against a real redis-server on loopback:
 * `kindly:fleet` is `kindly:full` (retry, budget, breaker, bulkhead) with `store`;
 * `kindly:fleet-redis-down` the same after Redis died and the store noticed. Calls never
 * wait on Redis while healthy; the background sync's round trips are counted per call.
 */
export async function fleetBench(): Promise<{ cases: BenchCase[]; report: () => string[]; close: () => Promise<void> }> {
  const up = await RedisServer.start();
  const down = await RedisServer.start();
  const upClient = await connectRedis(up.port);
  const downClient = await connectRedis(down.port);
  const upStore = redisStore({ client: upClient, prefix: 'bench' });
  const downStore = redisStore({ client: downClient, prefix: 'bench-down' });
  const options = {
    retry: { maxAttempts: 3 },
    attemptTimeout: 10_000,
    budget: {},
    breaker: {},
    bulkhead: { maxConcurrent: 1_000 },
  };
  let upCalls = 0;
  const operation = async () => 42;
  const cases: BenchCase[] = [
    {
      name: 'kindly:fleet',
      setup: async () => {
        const api = downstream('bench-fleet', { ...options, store: upStore });
        // Let the first sync land, as in a running service.
        await api.call(operation);
        await new Promise((r) => setTimeout(r, 100));
        upStore.counters.commands = 0;
        return () => {
          upCalls++;
          return api.call(operation);
        };
      },
    },
    {
      name: 'kindly:fleet-redis-down',
      setup: async () => {
        const api = downstream('bench-fleet-down', { ...options, store: downStore });
        await api.call(operation);
        await new Promise((r) => setTimeout(r, 100));
        await down.stop();
        // Calls go on; the next background sync finds Redis gone and the store falls back.
        for (let i = 0; i < 50 && downStore.available; i++) {
          await api.call(operation);
          await new Promise((r) => setTimeout(r, 20));
        }
        if (downStore.available) throw new Error('the store did not notice Redis was down');
        return () => api.call(operation);
      },
    },
  ];
  return {
    cases,
    report: () => [
      `fleet: ${upStore.counters.commands} Redis round trips over ${upCalls} calls = ${(upStore.counters.commands / Math.max(1, upCalls)).toFixed(6)} per call (failures ${upStore.counters.failures})`,
    ],
    close: async () => {
      upStore.close();
      downStore.close();
      upClient.disconnect();
      downClient.disconnect();
      await up.dispose();
      await down.dispose();
    },
  };
}
