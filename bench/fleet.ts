import { bench, do_not_optimize, run } from 'mitata';
import { downstream } from '../dist/index.js';
import { redisStore } from '../dist/redis.js';
import { connectRedis, RedisServer } from '../examples/support/redis-server.js';
import { type BenchCase, cases as coreCases } from './cases.js';
import { median, type Ratio, type Row } from './stats.js';

/**
 * The fleet store's cost on the hot path, against a real redis-server on loopback:
 * `kindly:fleet` is `kindly:full` (retry, budget, breaker, bulkhead) with `store`;
 * `kindly:fleet-redis-down` the same after Redis died and the store noticed. Calls never
 * wait on Redis while healthy; the background sync's round trips are counted per call.
 */
export async function fleetBench(): Promise<{
  cases: BenchCase[];
  report: () => string[];
  roundTripsPerCall: () => number;
  steadyRoundTrips: (perSecond: number, ms: number) => Promise<{ commands: number; calls: number; perCall: number }>;
  close: () => Promise<void>;
}> {
  const up = await RedisServer.start();
  const down = await RedisServer.start();
  const upClient = await connectRedis(up.port);
  const downClient = await connectRedis(down.port);
  const upStore = redisStore({ client: upClient, prefix: 'bench' });
  const downStore = redisStore({ client: downClient, prefix: 'bench-down' });
  const options = {
    retry: { maxAttempts: 3 },
    attemptTimeoutMs: 10_000,
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
    roundTripsPerCall: () => upStore.counters.commands / Math.max(1, upCalls),
    steadyRoundTrips: async (perSecond: number, ms: number) => {
      const api = downstream('bench-fleet-steady', { ...options, store: upStore });
      await api.call(operation);
      await new Promise((r) => setTimeout(r, 100));
      const before = upStore.counters.commands;
      let calls = 0;
      const batch = perSecond / 100;
      for (let t = 0; t < ms; t += 10) {
        const all: Promise<number>[] = [];
        for (let i = 0; i < batch; i++) all.push(api.call(operation));
        calls += batch;
        await Promise.all(all);
        await new Promise((r) => setTimeout(r, 10));
      }
      const commands = upStore.counters.commands - before;
      return { commands, calls, perCall: commands / calls };
    },
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

/**
 * The fleet suite: `kindly:full`, `kindly:fleet` and `kindly:fleet-redis-down` side by side,
 * `runs` interleaved mitata runs each; rows are medians, plus ns added over `kindly:full`
 * and Redis round trips per call (`lines`).
 */
export async function runFleet(options: { runs: number }): Promise<{ rows: Row[]; ratios: Ratio[]; lines: string[] }> {
  const fleet = await fleetBench();
  try {
    const full = coreCases.find((c) => c.name === 'kindly:full') as BenchCase;
    const all = [full, ...fleet.cases];
    const fns = new Map<string, () => Promise<number> | number>();
    for (const c of all) {
      const fn = await c.setup();
      if ((await fn()) !== 42) throw new Error(`bench case ${c.name} did not return the operation's value`);
      fns.set(c.name, fn);
    }
    const perRun = new Map<string, number[]>(all.map((c) => [c.name, []]));
    for (let r = 0; r < options.runs; r++) {
      for (let i = 0; i < all.length; i++) {
        const c = all[(i + r) % all.length] as BenchCase;
        const fn = fns.get(c.name) as () => Promise<number> | number;
        bench(c.name, async () => do_not_optimize(await fn()));
      }
      const result = await run({ format: 'quiet', throw: true });
      for (const b of result.benchmarks) perRun.get(b.alias)?.push(b.runs[0]?.stats?.avg ?? Number.NaN);
    }
    const rows: Row[] = all.map((c) => {
      const runs = perRun.get(c.name) ?? [];
      return {
        suite: 'fleet',
        name: c.name,
        nsPerCall: Math.round(median(runs) * 10) / 10,
        runs: runs.map((x) => Math.round(x)),
      };
    });
    const base = perRun.get('kindly:full') ?? [];
    const lines = [...fleet.report()];
    for (const name of ['kindly:fleet', 'kindly:fleet-redis-down']) {
      // Per run, side by side, then the median: steadier than a difference of medians.
      const added = median((perRun.get(name) ?? []).map((x, i) => x - (base[i] as number)));
      lines.push(`${name}: ${added.toFixed(0)} ns added per call over kindly:full (median of ${options.runs} runs)`);
    }
    // mitata's loop never yields to timers, so the background sync hardly runs during it:
    // measure round trips per call at a steady, realistic rate instead.
    const steady = await fleet.steadyRoundTrips(1_000, 2_000);
    lines.push(
      `kindly:fleet at a steady 1,000 calls/s for 2 s: ${steady.commands} round trips over ${steady.calls} calls = ${steady.perCall.toFixed(4)} per call`,
    );
    rows.push({
      suite: 'fleet',
      name: 'kindly:fleet round trips per call at 1000/s',
      value: steady.perCall,
      unit: 'round trips',
      runs: [],
    });
    rows.push({
      suite: 'fleet',
      name: 'kindly:fleet round trips per call',
      value: Math.round(fleet.roundTripsPerCall() * 1e6) / 1e6,
      unit: 'round trips',
      runs: [],
    });
    return { rows, ratios: [], lines };
  } finally {
    await fleet.close();
  }
}
