import { execFile } from 'node:child_process';
import { downstream } from '../dist/index.js';
import { redisStore } from '../dist/redis.js';
import { connectRedis, RedisServer } from '../examples/support/redis-server.js';
import { type FleetOutageRun, runFleetOutage } from '../test/support/fleet-outage.js';
import { type BenchCase, cases as coreCases } from './cases.js';
import { interleavedRounds, type Measured, type TimedCase } from './rounds.js';
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
  steadyRoundTrips: (
    perSecond: number,
    ms: number,
  ) => Promise<{ commands: number; operations: number; calls: number; perCall: number }>;
  syncCost: (windows: number, ms: number) => Promise<SyncCost>;
  processSteady: (pairs: number) => Promise<Record<SteadyVariant, SteadyFigures>>;
  /** Real processes calling a dead callee, with one fleet budget in Redis or a budget each. */
  outage: (setup: { processes: number; rate: number; durationMs: number; shared: boolean }) => Promise<FleetOutageRun>;
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
      // A store and client of its own: the other cases' downstreams go on syncing on `upStore`
      // (every 80 ms while their breakers were used within 10 s), and were counted here too.
      const client = await connectRedis(up.port);
      const store = redisStore({ client, prefix: 'bench-steady' });
      const api = downstream('bench-fleet-steady', { ...options, store });
      await api.call(operation);
      await new Promise((r) => setTimeout(r, 100));
      const before = { ...store.counters };
      let calls = 0;
      const batch = perSecond / 100;
      for (let t = 0; t < ms; t += 10) {
        const all: Promise<number>[] = [];
        for (let i = 0; i < batch; i++) all.push(api.call(operation));
        calls += batch;
        await Promise.all(all);
        await new Promise((r) => setTimeout(r, 10));
      }
      const commands = store.counters.commands - before.commands;
      const operations = store.counters.operations - before.operations;
      store.close();
      client.disconnect();
      return { commands, operations, calls, perCall: commands / calls };
    },
    syncCost: async (windows: number, ms: number) => {
      // A store and client of its own: no other downstream's sync runs on them.
      const client = await connectRedis(up.port);
      const store = redisStore({ client, prefix: 'bench-sync' });
      const idle: number[] = [];
      const syncing: number[] = [];
      const commands: number[] = [];
      const windowCpu = async () => {
        const cpu0 = process.cpuUsage();
        await new Promise((r) => setTimeout(r, ms));
        return cpuNsSince(cpu0);
      };
      // Nothing syncs yet: what the process costs idle (its sockets, the timer of the wait).
      for (let i = 0; i < windows; i++) idle.push(await windowCpu());
      // What one bare timer wakeup costs on this machine (a virtual machine's can cost 100× a
      // bare-metal one), to read the sync's figure against.
      const wakeups = 100;
      const cpu0 = process.cpuUsage();
      for (let i = 0; i < wakeups; i++) await new Promise((r) => setTimeout(r, 5));
      const wakeup = cpuNsSince(cpu0) / wakeups;
      const api = downstream('bench-fleet-sync', { ...options, store });
      await api.call(operation);
      await new Promise((r) => setTimeout(r, 100));
      for (let i = 0; i < windows; i++) {
        // One call per window keeps the downstream active (a link idle for 10 s stops syncing).
        await api.call(operation);
        const before = store.counters.commands;
        syncing.push(await windowCpu());
        commands.push(store.counters.commands - before);
      }
      store.close();
      client.disconnect();
      return { idle, syncing, commands, wakeup };
    },
    processSteady: async (pairs: number) => {
      const result: Record<SteadyVariant, SteadyFigures> = {
        full: { cpu: [], mainThread: [] },
        fleet: { cpu: [], mainThread: [] },
        'fleet-polling': { cpu: [], mainThread: [] },
      };
      const order: SteadyVariant[] = ['full', 'fleet', 'fleet-polling'];
      const child = new URL('./fleet-steady-child.ts', import.meta.url).pathname;
      for (let pair = 0; pair < pairs; pair++) {
        // Alternate the order, so that neither case always runs first after the other.
        for (const variant of pair % 2 === 0 ? order : [...order].reverse()) {
          const out = await new Promise<string>((resolve, reject) =>
            execFile(process.execPath, ['--import', 'tsx', child, String(up.port), variant], (error, stdout) =>
              error ? reject(error) : resolve(stdout),
            ),
          );
          const figures = JSON.parse(out.trim().split('\n').pop() as string) as {
            cpuNsPerCall: number;
            mainThreadNsPerCall?: number;
          };
          result[variant].cpu.push(figures.cpuNsPerCall);
          if (figures.mainThreadNsPerCall !== undefined) result[variant].mainThread.push(figures.mainThreadNsPerCall);
        }
      }
      return result;
    },
    outage: (setup) => runFleetOutage({ ...setup, redisPort: up.port, prefix: `bench-outage-${setup.rate}` }),
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

/** This process's CPU time (user + system) since `start`, in ns. */
function cpuNsSince(start: NodeJS.CpuUsage): number {
  const cpu = process.cpuUsage(start);
  return (cpu.user + cpu.system) * 1000;
}

type SteadyVariant = 'full' | 'fleet' | 'fleet-polling';

/** CPU ns per call of one steady case, one entry per process run: all threads, and the main thread alone (Linux). */
interface SteadyFigures {
  cpu: number[];
  mainThread: number[];
}

/** CPU (ns) of windows with nothing syncing, then with one downstream's background sync running, and its round trips. */
interface SyncCost {
  idle: number[];
  syncing: number[];
  commands: number[];
  /** CPU (ns) of one bare timer wakeup of an idle process. */
  wakeup: number;
}

/**
 * The fleet suite: `kindly:full`, `kindly:fleet` and `kindly:fleet-redis-down` side by side
 * against a real redis-server, in finely interleaved batches (`interleavedRounds`), `runs`
 * blocks. Two figures per case, both in this process's **CPU time** (user + system, which
 * moves far less than wall time when other processes compete for the cores):
 *
 * - hot path: back-to-back calls (the loop never yields, so the background sync does not run
 *   inside a batch) — what the store adds to each call's own work;
 * - steady: calls at a realistic 1,000/s (10 every 10 ms, yielding between), so the
 *   background sync, its scripts and the Redis client's socket work are all counted and
 *   spread over the calls — what the store costs a service in all.
 *
 * "Added" is the median over blocks of (case − kindly:full) measured in the same block (hot
 * path), or in the block of the same number (steady: kindly:full's blocks run first, on their
 * own).
 */
export async function runFleet(options: { runs: number }): Promise<{ rows: Row[]; ratios: Ratio[]; lines: string[] }> {
  const fleet = await fleetBench();
  try {
    // First, while no downstream syncs in this process: the background sync's own CPU per round
    // trip. Windows of 2 s: a calm downstream syncs once a second while Redis pushes breaker news.
    const syncWindowMs = 2_000;
    const sync = await fleet.syncCost(Math.max(3, options.runs), syncWindowMs);
    const full = coreCases.find((c) => c.name === 'kindly:full') as BenchCase;
    const all = [full, ...fleet.cases];
    const timed: TimedCase[] = [];
    const steadyOptions = { blocks: options.runs, perSecond: 1_000, ms: 2_000 };
    let steady = new Map<string, Measured>();
    for (const c of all) {
      const fn = await c.setup();
      if ((await fn()) !== 42) throw new Error(`bench case ${c.name} did not return the operation's value`);
      timed.push({ name: c.name, once: async () => void (await fn()) });
      // kindly:full at a steady rate before any fleet downstream exists: one used in the last
      // 10 s keeps syncing, and through kindly:full's turns too, so taking turns with it
      // counted its sync in both cases and "added" took it out again (~2 round trips a turn).
      if (c === full) steady = await steadyRounds(timed, steadyOptions);
    }
    const hot = await interleavedRounds(timed, { blocks: options.runs, batches: 20, ops: 2_000, concurrency: 1 });
    for (const [name, m] of await steadyRounds(timed.slice(1, 2), steadyOptions)) steady.set(name, m);
    const rows: Row[] = [];
    const lines = [...fleet.report()];
    const cpuOf = (m: Map<string, Measured>, name: string) => m.get(name)?.cpu ?? [];
    for (const c of all) {
      const cpu = cpuOf(hot, c.name);
      rows.push({ suite: 'fleet', name: `${c.name} (cpu)`, nsPerCall: round(median(cpu)), runs: cpu.map(round) });
      const wall = hot.get(c.name)?.wall ?? [];
      rows.push({ suite: 'fleet', name: `${c.name} (wall)`, nsPerCall: round(median(wall)), runs: wall.map(round) });
    }
    const added = (m: Map<string, Measured>, name: string) => {
      const base = cpuOf(m, 'kindly:full');
      return cpuOf(m, name).map((x, i) => x - (base[i] as number));
    };
    for (const name of ['kindly:fleet', 'kindly:fleet-redis-down']) {
      const per = added(hot, name);
      lines.push(
        `${name}: ${round(median(per))} ns CPU added per call over kindly:full, back to back (median of ${options.runs} blocks: ${per.map(round).join(', ')})`,
      );
      rows.push({ suite: 'fleet', name: `${name} cpu ns added (hot path)`, nsPerCall: round(median(per)), runs: per.map(round) });
    }
    const perSteady = added(steady, 'kindly:fleet');
    lines.push(
      `kindly:fleet at a steady 1,000 calls/s: ${round(median(perSteady))} ns CPU added per call over kindly:full, background sync and Redis client included (median of ${options.runs} blocks: ${perSteady.map(round).join(', ')}; kindly:full ${round(median(cpuOf(steady, 'kindly:full')))} ns per call)`,
    );
    rows.push({
      suite: 'fleet',
      name: 'kindly:fleet cpu ns added at 1000/s (sync included)',
      nsPerCall: round(median(perSteady)),
      runs: perSteady.map(round),
    });
    // Round trips per call at a steady, realistic rate (mitata-style loops never yield to timers).
    const trips = await fleet.steadyRoundTrips(1_000, 5_000);
    lines.push(
      `kindly:fleet at a steady 1,000 calls/s for 5 s: ${trips.commands} round trips (${trips.operations} store operations) over ${trips.calls} calls = ${trips.perCall.toFixed(4)} per call`,
    );
    rows.push({
      suite: 'fleet',
      name: 'kindly:fleet round trips per call at 1000/s',
      value: trips.perCall,
      unit: 'round trips',
      runs: [],
    });
    // The same from its parts: the hot path, measured back to back, plus the round trips per call
    // at what one costs in an otherwise idle process — every sync then wakes the process on its
    // own (its timer, Redis's reply), so this is an upper bound: in a busy process some of those
    // wakeups coincide with the calls' own. The direct figure above moves by microseconds per
    // call from one block to the next; this one moved less, but still by half between
    // runs on one VM (0.78–1.15 ms per round trip over three).
    // The idle floor is the quietest idle window: on a virtual machine a window now and then
    // costs tens of ms with nothing running (seen idle and syncing alike), and a median of
    // few windows can land on one, which made this figure negative.
    const perTrip = (median(sync.syncing) - Math.min(...sync.idle)) / Math.max(1, median(sync.commands));
    const hotAdded = median(added(hot, 'kindly:fleet'));
    const composed = hotAdded + trips.perCall * perTrip;
    lines.push(
      `kindly:fleet background sync, idle process: ${round(perTrip / 1000)} µs CPU per Redis round trip, about ${round(perTrip / sync.wakeup)} bare timer wakeups' worth on this machine (${round(sync.wakeup / 1000)} µs each) (${syncWindowMs / 1000} s windows: idle ${sync.idle.map((x) => round(x / 1e6)).join(', ')} ms CPU, syncing ${sync.syncing.map((x) => round(x / 1e6)).join(', ')} ms over ${sync.commands.join(', ')} round trips)`,
      `kindly:fleet at a steady 1,000 calls/s, upper bound from its parts: ${round(hotAdded)} ns hot path + ${trips.perCall.toFixed(4)} round trips × ${round(perTrip / 1000)} µs = ${round(composed / 1000)} µs CPU added per call`,
    );
    rows.push({
      suite: 'fleet',
      name: 'kindly:fleet cpu ns per sync round trip (idle process)',
      nsPerCall: round(perTrip),
      runs: [],
    });
    rows.push({ suite: 'fleet', name: 'cpu ns per bare timer wakeup (this machine)', nsPerCall: round(sync.wakeup), runs: [] });
    rows.push({
      suite: 'fleet',
      name: 'kindly:fleet cpu ns added at 1000/s (upper bound from parts)',
      nsPerCall: round(composed),
      runs: [],
    });
    // The steady figure once more, each case in a process of its own (nothing else syncing or
    // reconnecting beside it), alternating: the difference per pair, then its median.
    const own = await fleet.processSteady(options.runs);
    const perPair = (figures: number[], base: number[]) => figures.map((x, i) => x - (base[i] as number));
    for (const name of ['fleet', 'fleet-polling'] as const) {
      const per = perPair(own[name].cpu, own.full.cpu);
      const perMain = perPair(own[name].mainThread, own.full.mainThread);
      const label = name === 'fleet' ? 'kindly:fleet' : 'kindly:fleet without news (subscriber: false)';
      lines.push(
        `${label} at a steady 1,000 calls/s, each case in a process of its own: ${round(median(per) / 1000)} µs CPU added per call over kindly:full (pairs: ${per.map((x) => round(x / 1000)).join(', ')} µs; kindly:full ${round(median(own.full.cpu) / 1000)} µs per call)` +
          (perMain.length === 0
            ? ''
            : `; main thread alone ${round(median(perMain) / 1000)} µs (pairs: ${perMain.map((x) => round(x / 1000)).join(', ')} µs)`),
      );
      rows.push({
        suite: 'fleet',
        name: `${label} cpu ns added at 1000/s (own process)`,
        nsPerCall: round(median(per)),
        runs: per.map(round),
      });
      if (perMain.length > 0) {
        rows.push({
          suite: 'fleet',
          name: `${label} main-thread cpu ns added at 1000/s (own process)`,
          nsPerCall: round(median(perMain)),
          runs: perMain.map(round),
        });
      }
    }
    // The fleet budget during an outage, real processes: 10 at 100 calls/s (the ratio binds
    // with a budget each as well) and 10 at 20/s (each process's own reserve is more than half
    // its calls), every call retried up to 3 attempts. 8 s, so that the run and its last
    // retries fit in the budget's 10 s window: its bound is per window.
    for (const rate of [100, 20]) {
      for (const shared of [true, false]) {
        const run = await fleet.outage({ processes: 10, rate, durationMs: 8_000, shared });
        const label = `fleet budget outage, 10 processes × ${rate}/s, ${shared ? 'one fleet budget' : 'a budget each'}`;
        lines.push(
          `${label}: amplification ${run.amplification.toFixed(3)} (${run.attempts} attempts for ${run.requests} calls, ${run.refused} retries refused${shared ? `; stores that went down meanwhile: ${run.storeDowns.length}${run.storeDowns.length > 0 ? ` (${run.storeDowns[0]})` : ''}` : ''})`,
        );
        rows.push({
          suite: 'fleet',
          name: `${label}: amplification`,
          value: Math.round(run.amplification * 1000) / 1000,
          unit: 'attempts per call',
          runs: [],
        });
      }
    }
    return { rows, ratios: [], lines };
  } finally {
    await fleet.close();
  }
}

const round = (x: number) => Math.round(x * 10) / 10;

/**
 * Like `interleavedRounds`, but each case runs at `perSecond` calls (a batch every 10 ms,
 * yielding to the event loop between batches) for `ms` per turn: CPU time per call then
 * includes what timers and sockets do in the background (any downstream's in this process,
 * so `runFleet` runs its baseline before the fleet's exist). Cases alternate turn by turn.
 */
async function steadyRounds(
  cases: readonly TimedCase[],
  options: { blocks: number; perSecond: number; ms: number },
): Promise<Map<string, Measured>> {
  const result = new Map<string, Measured>(cases.map((c) => [c.name, { wall: [], cpu: [] }]));
  const batch = options.perSecond / 100;
  for (let block = -1; block < options.blocks; block++) {
    for (let i = 0; i < cases.length; i++) {
      const c = cases[(i + Math.max(block, 0)) % cases.length] as TimedCase;
      const cpu0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      let calls = 0;
      for (let t = 0; t < options.ms; t += 10) {
        const all: Promise<void>[] = [];
        for (let k = 0; k < batch; k++) all.push(c.once());
        calls += batch;
        await Promise.all(all);
        await new Promise((r) => setTimeout(r, 10));
      }
      // The sync that the last calls started settles inside the turn, not the next case's.
      await new Promise((r) => setTimeout(r, 100));
      const cpu = process.cpuUsage(cpu0);
      if (block < 0) continue;
      const m = result.get(c.name) as Measured;
      m.cpu.push(((cpu.user + cpu.system) * 1000) / calls);
      m.wall.push(Number(process.hrtime.bigint() - t0) / calls);
    }
  }
  return result;
}
