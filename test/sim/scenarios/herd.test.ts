import { describe, expect, it } from 'vitest';
import { sampleLatency } from '../../../src/sim/distributions.js';
import { firstTryTimes, type HerdStrategy, runHerd } from '../../../src/sim/herd-run.js';
import { RETRY_HERD_STRATEGIES } from '../../../src/sim/herd-strategies.js';
import { workConservingFinish } from '../../../src/sim/models/concurrency.js';
import { referenceServiceRandom } from '../../../src/sim/models/index.js';
import { withDefaults } from '../../../src/sim/scenario.js';
import {
  clientProgress,
  HERD_STRATEGY_NAMES,
  type HerdRow,
  herd,
  herdSetupOf,
  herdTable,
  idealCurve,
  panelXMax,
  seedsFor,
  servedCurve,
} from '../../../src/sim/scenarios/herd.js';
import { spread } from '../../../src/sim/summary.js';

type Row = {
  strategy: string;
  seeds: number;
  totalRequests: { min: number; median: number; max: number };
  peakRetriesPerSlot: { min: number; median: number; max: number };
  allSucceededMs: { min: number | null; median: number | null; max: number | null };
  lowerBound: { totalRequests: number; allSucceededMs: number };
  attempts: number;
};

function rows(json: Record<string, unknown>): Row[] {
  return json.strategies as Row[];
}

describe('herd scenario', () => {
  it('defaults: 100 clients, capacity 10, 100 ms slots, 200 seeds from 1, every strategy', () => {
    expect(withDefaults(herd)).toEqual({
      strategy: 'all',
      clients: 100,
      capacity: 10,
      'slot-ms': 100,
      server: 'slot',
      burst: 0,
      'latency-ms': 1,
      latency: 'constant',
      'reject-latency-ms': 0,
      queue: 0,
      'arrival-ms': 0,
      'leaky-mode': 'nodelay',
      seeds: 200,
      seed: 1,
    });
    expect(HERD_STRATEGY_NAMES).toEqual(['fixed', 'exponential', 'full', 'equal', 'decorrelated', 'floor', 'adaptive']);
  });

  it('JSON: per strategy min/median/max, lower bound and attempts; deterministic rows have min = median = max', () => {
    const { json } = herd.run(withDefaults(herd, { seeds: 20 }), {});
    expect(json.lowerBound).toEqual({ totalRequests: 190, allSucceededMs: 1000 });
    const r = rows(json);
    expect(r.map((x) => x.strategy)).toEqual(HERD_STRATEGY_NAMES);
    const fixed = r[0]!;
    expect(fixed).toMatchObject({
      seeds: 1,
      totalRequests: { min: 550, median: 550, max: 550 },
      peakRetriesPerSlot: { min: 90, median: 90, max: 90 },
      allSucceededMs: { min: 10_000, median: 10_000, max: 10_000 },
      lowerBound: { totalRequests: 190, allSucceededMs: 1000 },
      attempts: 550,
    });
    expect(r[1]).toMatchObject({
      totalRequests: { median: 550 },
      peakRetriesPerSlot: { median: 90 },
      allSucceededMs: { median: 27_200 },
    });
    const full = r[2]!;
    expect(full.seeds).toBe(20);
    expect(full.totalRequests.min).toBeLessThanOrEqual(full.totalRequests.median);
    expect(full.totalRequests.median).toBeLessThanOrEqual(full.totalRequests.max);
    expect(json.attempts).toBe(r.reduce((s, x) => s + x.attempts, 0));
  });

  it('adaptive meets median ≤ 209 requests and ≤ 1300 ms', () => {
    const { json } = herd.run(withDefaults(herd, { strategy: 'adaptive' }), {});
    const [adaptive] = rows(json);
    expect(adaptive!.strategy).toBe('adaptive');
    expect(adaptive!.totalRequests.median).toBeLessThanOrEqual(209);
    expect(adaptive!.allSucceededMs.median).toBeLessThanOrEqual(1300);
  });

  it('regression (a floor removed jitter): the `floor` row no longer moves in lockstep', () => {
    const { json } = herd.run(withDefaults(herd, { strategy: 'floor', seeds: 50 }), {});
    const [floor] = rows(json);
    // Before: every client waited exactly 1 s for its first three retries: 90 retries in one slot.
    expect(floor!.peakRetriesPerSlot.max).toBeLessThan(30);
    expect(floor!.totalRequests.median).toBeLessThan(250);
  });

  it('--server runs every strategy on that model, with the lower bound computed for it', () => {
    const expected = {
      slot: { totalRequests: 190, allSucceededMs: 1000 },
      'token-bucket': { totalRequests: 190, allSucceededMs: 901 },
      'leaky-bucket': { totalRequests: 190, allSucceededMs: 901 },
      'fixed-window': { totalRequests: 190, allSucceededMs: 901 },
      gcra: { totalRequests: 190, allSucceededMs: 901 },
      concurrency: { totalRequests: 190, allSucceededMs: 1001 },
    };
    for (const [server, bound] of Object.entries(expected)) {
      const { json } = herd.run(withDefaults(herd, { server, seeds: 3 }), {});
      expect(json.lowerBound, server).toEqual(bound);
      expect((json.parameters as { server: { model: string } }).server.model).toBe(server);
      const r = rows(json);
      expect(r.map((x) => x.strategy)).toEqual(HERD_STRATEGY_NAMES);
      for (const row of r) {
        expect(row.lowerBound).toEqual(bound);
        expect(row.totalRequests.min, `${server} ${row.strategy}`).toBeGreaterThanOrEqual(bound.totalRequests);
        expect(row.allSucceededMs.min!, `${server} ${row.strategy}`).toBeGreaterThanOrEqual(bound.allSucceededMs);
      }
    }
  });

  it('--arrival-ms spreads the first tries (own random stream): fewer are rejected at once', () => {
    const at = (arrival: number) =>
      herd.run(withDefaults(herd, { server: 'token-bucket', strategy: 'fixed', 'arrival-ms': arrival, seeds: 5 }), {}).json;
    const together = rows(at(0))[0]!;
    const spread = rows(at(50))[0]!;
    expect(together.seeds).toBe(1);
    expect(spread.seeds).toBe(5); // the arrivals are random: every seed runs
    // Over 50 ms the bucket refills 5 tokens: more first tries served, fewer retries.
    expect(spread.totalRequests.max).toBeLessThan(together.totalRequests.min);
    expect((at(50).parameters as { arrivalMs: number }).arrivalMs).toBe(50);
  });

  it('--reject-latency-ms: a limiter in front of a slow backend (fast rejections, slow successes)', () => {
    const run = (extra: Record<string, unknown>) =>
      herd.run(withDefaults(herd, { server: 'token-bucket', strategy: 'fixed', 'latency-ms': 200, seeds: 1, ...extra }), {}).json;
    const slow = run({});
    const fast = run({ 'reject-latency-ms': 5 });
    expect((fast.parameters as { server: { rejectLatencyMs?: number } }).server.rejectLatencyMs).toBe(5);
    expect((slow.parameters as { server: { rejectLatencyMs?: number } }).server.rejectLatencyMs).toBeUndefined();
    // Rejections come back 195 ms sooner, so the fixed retries reach the bucket sooner: the
    // same lower bound, an earlier finish.
    expect(fast.lowerBound).toEqual(slow.lowerBound);
    expect(rows(fast)[0]!.allSucceededMs.median!).toBeLessThan(rows(slow)[0]!.allSucceededMs.median!);
  });

  it('a random latency makes every strategy run every seed', () => {
    const { json } = herd.run(
      withDefaults(herd, { server: 'concurrency', latency: 'lognormal', strategy: 'fixed', seeds: 4 }),
      {},
    );
    expect(rows(json)[0]!.seeds).toBe(4);
  });

  it('a pool whose service times spread: the JSON and the notes add what a pool kept busy takes on such services (later than the bound), and nothing otherwise', () => {
    const params = {
      server: 'concurrency',
      queue: 1,
      latency: 'lognormal',
      'latency-ms': 20,
      'arrival-ms': 200,
      strategy: 'adaptive',
      seeds: 6,
    };
    const { json, report } = herd.run(withDefaults(herd, params), {});
    const setup = herdSetupOf(withDefaults(herd, params));
    const bound = (json.lowerBound as { allSucceededMs: number }).allSucceededMs;
    // By hand: six seeds of 100 lognormal draws on ten workers, then the way back.
    let sum = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const random = referenceServiceRandom(seed);
      const draws = Array.from({ length: 100 }, () => sampleLatency({ ms: 100, distribution: 'lognormal' }, random));
      sum += workConservingFinish(draws, firstTryTimes(setup, seed), 10) + 20;
    }
    expect(json.keptBusyMs).toBe(Math.round(sum / 6));
    expect(json.keptBusyMs as number).toBeGreaterThan(bound * 1.05);
    expect(report.notes?.some((n) => n.includes('A pool kept busy whenever it has work takes'))).toBe(true);
    for (const other of [
      { server: 'concurrency', latency: 'constant', strategy: 'adaptive', seeds: 1 },
      { server: 'token-bucket', latency: 'lognormal', strategy: 'adaptive', seeds: 2 },
    ]) {
      const plain = herd.run(withDefaults(herd, other), {});
      expect(plain.json.keptBusyMs, other.server).toBeUndefined();
      expect(plain.report.notes?.some((n) => n.includes('kept busy'))).toBe(false);
    }
  });

  it('adds a `config` row for the user’s retry options; give-ups show as null "all succeeded"', () => {
    const { json, report } = herd.run(withDefaults(herd, { strategy: 'fixed', seeds: 3 }), {
      retry: { maxAttempts: 2, backoff: { jitter: 'full' } },
    });
    const r = rows(json);
    expect(r.map((x) => x.strategy)).toEqual(['fixed', 'config']);
    expect(r[1]!.seeds).toBe(3);
    expect(r[1]!.allSucceededMs).toEqual({ min: null, median: null, max: null });
    expect(report.tables[0]!.table.columns).toContain('gave up');
  });

  it('identical seed ⇒ identical JSON, byte for byte', () => {
    const a = JSON.stringify(herd.run(withDefaults(herd, { seeds: 10, seed: 42 }), {}).json);
    const b = JSON.stringify(herd.run(withDefaults(herd, { seeds: 10, seed: 42 }), {}).json);
    const c = JSON.stringify(herd.run(withDefaults(herd, { seeds: 10, seed: 43 }), {}).json);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });

  it('report: one panel per strategy on shared axes, then callers served beside the lower bound', () => {
    const { report } = herd.run(withDefaults(herd, { seeds: 2 }), {});
    const panels = report.charts.filter((c) => c.group !== undefined);
    expect(panels.map((c) => c.title)).toEqual(HERD_STRATEGY_NAMES);
    expect(new Set(panels.map((c) => c.group)).size).toBe(1);
    // Shared axes: every panel has the same x and y range; the slow strategies are cut at 3 s.
    expect(new Set(panels.map((c) => `${c.xMax} ${c.yMax}`))).toEqual(new Set(['3 100']));
    for (const [i, panel] of panels.entries()) {
      expect(panel.series.map((s) => [s.name, s.color])).toEqual([[HERD_STRATEGY_NAMES[i], i]]);
      expect(panel.markers).toEqual([
        { axis: 'y', value: 10, label: 'capacity 10' },
        { axis: 'x', value: 1, label: 'bound 1.0 s' },
      ]);
    }
    const served = report.charts.at(-1)!;
    expect(served.group).toBeUndefined();
    expect(served.series.map((s) => s.name)).toEqual([...HERD_STRATEGY_NAMES, 'lower bound']);
    const bound = served.series.at(-1)!;
    expect(bound.dashed).toBe(true);
    expect(bound.points.at(-1)).toEqual([1, 100]);
    // Nobody beats the lower bound: at each of its points, every strategy has served no more.
    for (const s of served.series.slice(0, -1)) {
      for (const [x, y] of s.points) {
        const allowed = Math.max(0, ...bound.points.filter(([bx]) => bx <= x + 1e-9).map(([, by]) => by));
        expect(y, `${s.name} at ${x} s`).toBeLessThanOrEqual(allowed);
      }
    }
    // adaptive is within the 1.2× of it on the slot server: all 100 served by 1.1 s
    // (its search probes first, and spends one slot doing so).
    const adaptiveDone = served.series[HERD_STRATEGY_NAMES.indexOf('adaptive')]!.points.find(([, y]) => y === 100)?.[0];
    expect(adaptiveDone).toBeLessThanOrEqual(1.2);
    const table = report.tables[0]!.table;
    expect(table.rows.every((row) => row.includes('190 req · 1.0 s'))).toBe(true);
  });

  it('reports progress up to the total', () => {
    const calls: [number, number][] = [];
    herd.run(withDefaults(herd, { strategy: 'fixed', clients: 70_000, capacity: 7_000 }), {
      onProgress: (done, total) => calls.push([done, total]),
    });
    expect(calls.at(-1)).toEqual([70_000, 70_000]);
  });
});

describe('herd scenario parts', () => {
  const setup = herdSetupOf(withDefaults(herd));

  it('herdSetupOf: the options as a setup; --burst 0 means --capacity', () => {
    expect(setup).toEqual({
      clients: 100,
      capacity: 10,
      slotMs: 100,
      seed: 1,
      arrivalMs: 0,
      server: { model: 'slot', burst: 10, latencyMs: 1, distribution: 'constant', queue: 0, mode: 'nodelay' },
    });
    expect(herdSetupOf(withDefaults(herd, { burst: 3 })).server.burst).toBe(3);
  });

  it('seedsFor: every seed only when the run depends on it (jitter, random arrivals, random latency)', () => {
    expect(seedsFor({ random: false }, setup, 50)).toBe(1);
    expect(seedsFor({ random: true }, setup, 50)).toBe(50);
    expect(seedsFor({ random: false }, { ...setup, arrivalMs: 5 }, 50)).toBe(50);
    const lognormal = {
      ...setup,
      server: { ...setup.server, model: 'token-bucket' as const, distribution: 'lognormal' as const },
    };
    expect(seedsFor({ random: false }, lognormal, 50)).toBe(50);
  });

  it('clientProgress: counts clients over every strategy × its seeds; nothing without a listener', () => {
    const seen: [number, number][] = [];
    const strategies = [{ random: false }, { random: true }] as HerdStrategy[];
    const tell = clientProgress(strategies, setup, 4, (done, total) => seen.push([done, total]));
    tell?.(60);
    tell?.(40);
    expect(seen).toEqual([
      [60, 500],
      [100, 500],
    ]);
    expect(clientProgress(strategies, setup, 4, undefined)).toBeUndefined();
  });

  it('herdTable: a "gave up" column only when some client gave up', () => {
    const row = (gaveUp: number) =>
      ({
        strategy: 's',
        description: '',
        seeds: 1,
        totalRequests: spread([190]),
        peakRetriesPerSlot: spread([10]),
        allSucceededMs: spread([gaveUp > 0 ? Number.POSITIVE_INFINITY : 1000]),
        gaveUp: spread([gaveUp]),
        attempts: 190,
      }) as unknown as HerdRow;
    const bound = { totalRequests: 190, allSucceededMs: 1000 };
    expect(herdTable([row(0)], bound).columns).not.toContain('gave up');
    const table = herdTable([row(0), row(3)], bound);
    expect(table.columns).toContain('gave up');
    expect(table.rows[1]![table.columns.indexOf('gave up')]).toBe('3');
    expect(table.rows[0]![table.columns.indexOf('lower bound')]).toBe('190 req · 1.0 s');
  });

  it('panelXMax: the panels zoom to 3 × the lower bound only when a strategy runs on far longer', () => {
    expect(panelXMax(2, 1000)).toBe(2);
    expect(panelXMax(4.5, 1000)).toBe(4.5);
    expect(panelXMax(27.2, 1000)).toBe(3);
  });

  it('servedCurve and idealCurve: cumulative callers at each slot’s end, and the earliest possible', () => {
    expect(servedCurve([10, 0, 5], 100)).toEqual([
      [0, 0],
      [0.1, 10],
      [0.2, 10],
      [0.3, 15],
    ]);
    const ideal = idealCurve({ clients: 30, capacity: 10, slotMs: 100 });
    expect(ideal[0]).toEqual([0, 0]);
    expect(ideal.at(-1)).toEqual([0.3, 30]);
    expect(idealCurve({ clients: 1000, capacity: 10, slotMs: 100 }).length).toBe(201);
  });

  it('idealCurve with first tries spread: never ahead of any strategy, so never before the k-th arrival', () => {
    const setup = { clients: 100, capacity: 10, slotMs: 100, arrivalMs: 5_000, seed: 1 };
    const ideal = idealCurve(setup);
    // The last first try arrives near 5 s: nobody can have served all 100 before it.
    expect(ideal.at(-1)?.[0]).toBeGreaterThan(4.5);
    const run = runHerd(setup, RETRY_HERD_STRATEGIES.find((s) => s.name === 'full')!, { recordSeries: true });
    const served = servedCurve(run.servedPerSlot ?? [], setup.slotMs);
    // Wherever the run had served k callers, the curve says k could have been served by then.
    for (const [t, k] of served) {
      if (k === 0) continue;
      const earliest = ideal.find(([, n]) => n >= k)?.[0] ?? Number.POSITIVE_INFINITY;
      expect({ t, k, ok: earliest <= t }).toEqual({ t, k, ok: true });
    }
  });
});
