import { ADAPTIVE_CONCURRENCY_DEFAULTS, AdaptiveConcurrencyLimit, LIMIT_REJECTED } from '../../policies/adaptive-concurrency.js';
import { BulkheadSlots } from '../../policies/bulkhead-slots.js';
import { Simulation } from '../engine.js';
import { percentile } from '../percentile.js';
import { QueueingCallee } from '../queueing-callee.js';
import { number } from '../report/format.js';
import type { Series, Table } from '../report/model.js';
import { num, type Scenario, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';

/**
 * `oracle` is a reference, not a strategy anyone can run: a limit of the callee's worker count
 * at every moment (it knows the capacity changes) plus ⌈√workers⌉ so that no worker waits for
 * the next arrival. Tests use it to check that the convergence criterion can be met at all.
 */
export type QueueingStrategy = 'none' | 'bulkhead' | 'adaptive' | 'oracle';
export const QUEUEING_STRATEGIES: readonly QueueingStrategy[] = ['none', 'bulkhead', 'adaptive'];

export interface QueueingSetup {
  workers: number;
  serviceMedianMs: number;
  serviceSigma: number;
  /** Offered load as a multiple of the starting capacity. */
  load: number;
  /** Callers stop waiting after this long, ms. */
  timeoutMs: number;
  /** The fixed bulkhead's size. */
  bulkhead: number;
  durationMs: number;
  /** Capacity changes: workers halve at `durationMs / 3` and double back at `2 × durationMs / 3`. */
  capacityChanges: boolean;
  seed: number;
}

export interface QueueingRun {
  strategy: QueueingStrategy;
  requests: number;
  /** Answers within the callers' timeout. */
  good: number;
  rejected: number;
  timedOut: number;
  /** good ÷ what the callee could have served (min of offered load and capacity, over time). */
  goodputRatio: number;
  p50Ms: number;
  p99Ms: number;
  /**
   * Per capacity change: ms until every later judging window (a sliding window of whole
   * buckets expecting ≥ `QUEUEING_JUDGED_ANSWERS` answers) met the targets; null when never.
   */
  convergenceMs: { halving: number | null; doubling: number | null } | null;
  /** Per bucket: goodput ratio, p99 and (adaptive) the learned limit. */
  buckets: { goodput: number[]; p99: number[]; limit: number[] };
}

/** Width of the buckets goodput and p99 are charted in, and the step of the judging windows, ms. */
export const QUEUEING_BUCKET_MS = 250;
/**
 * Answers a judging window must expect at the capacity of its phase. A p99 of fewer than 100
 * answers is their maximum, and goodput over a few dozen answers varies by ±15 % from the
 * callee's own service times: with 250 ms windows a perfect limit fails the criterion on a
 * slow or small callee. At 500 the oracle (a limit that knows the capacity) settles at once on
 * every callee tested (at 200 or 300 it still fails now and then, on noise alone).
 */
export const QUEUEING_JUDGED_ANSWERS = 500;

/**
 * One run: Poisson arrivals at `load ×` the callee's starting capacity, through one of the
 * strategies, to a `QueueingCallee`. The bulkhead and the adaptive limit are kindly's own
 * `Bulkhead` and `AdaptiveConcurrencyLimit`: admitted requests hold a slot until they are
 * answered or their caller's timeout fires (the callee keeps working on those, unaware).
 */
export function runQueueing(setup: QueueingSetup, strategy: QueueingStrategy, unloadedP99Ms: number): QueueingRun {
  const sim = new Simulation({ seed: setup.seed });
  const third = setup.durationMs / 3;
  const halved = Math.max(1, Math.floor(setup.workers / 2));
  const changes = setup.capacityChanges
    ? [
        { atMs: third, workers: halved },
        { atMs: 2 * third, workers: setup.workers },
      ]
    : [];
  const meanService = setup.serviceMedianMs * Math.exp((setup.serviceSigma * setup.serviceSigma) / 2);
  const ratePerMs = (setup.load * setup.workers) / meanService;
  const capacityAt = (t: number) => (setup.capacityChanges && t >= third && t < 2 * third ? halved : setup.workers);

  const bulkhead = strategy === 'bulkhead' ? new BulkheadSlots({ maxConcurrent: setup.bulkhead }) : undefined;
  const limiter = strategy === 'adaptive' ? new AdaptiveConcurrencyLimit({}, sim.random) : undefined;
  let oracleInFlight = 0;

  // Per request: start time, admitted partition, and whether its caller stopped waiting.
  let capacity = 1 << 14;
  let startedAt = new Float64Array(capacity);
  let state = new Uint8Array(capacity); // 0 waiting, 1 answered, 2 timed out
  const latencies: number[] = [];
  const latencyBucket: number[] = [];
  const buckets = Math.ceil(setup.durationMs / QUEUEING_BUCKET_MS);
  const goodPerBucket = new Float64Array(buckets);
  const limitPerBucket = new Float64Array(buckets);
  let requests = 0;
  let good = 0;
  let rejected = 0;
  let timedOut = 0;

  const release = (request: number, now: number, sample: 'ok' | 'dropped') => {
    if (strategy === 'oracle') oracleInFlight--;
    bulkhead?.release();
    limiter?.release(0, startedAt[request]!, now, sample);
  };
  const callee = new QueueingCallee(
    sim,
    { workers: setup.workers, changes, serviceMedianMs: setup.serviceMedianMs, serviceSigma: setup.serviceSigma },
    (request, now) => {
      if (state[request] !== 0) return;
      state[request] = 1;
      const latency = now - startedAt[request]!;
      good++;
      const b = Math.min(buckets - 1, Math.floor(startedAt[request]! / QUEUEING_BUCKET_MS));
      goodPerBucket[b]!++;
      latencies.push(latency);
      latencyBucket.push(b);
      release(request, now, 'ok');
    },
  );
  const timeout = sim.on((request, now) => {
    if (state[request] !== 0) return;
    state[request] = 2;
    timedOut++;
    latencies.push(setup.timeoutMs);
    latencyBucket.push(Math.min(buckets - 1, Math.floor(startedAt[request]! / QUEUEING_BUCKET_MS)));
    release(request, now, 'dropped');
  });
  const arrival = sim.on((_, now) => {
    const next = now - Math.log(1 - sim.random.next()) / ratePerMs;
    if (next < setup.durationMs) sim.at(next, arrival);
    const b = Math.min(buckets - 1, Math.floor(now / QUEUEING_BUCKET_MS));
    if (limiter !== undefined) limitPerBucket[b] = limiter.limit;
    requests++;
    if (bulkhead !== undefined && !bulkhead.tryAcquire()) {
      rejected++;
      return;
    }
    if (limiter !== undefined && limiter.tryAcquire(now) === LIMIT_REJECTED) {
      rejected++;
      return;
    }
    if (strategy === 'oracle') {
      const workersNow = capacityAt(now);
      if (oracleInFlight >= workersNow + Math.ceil(Math.sqrt(workersNow))) {
        rejected++;
        return;
      }
      oracleInFlight++;
    }
    const request = requests - 1;
    if (request >= capacity) {
      capacity *= 2;
      const s = new Float64Array(capacity);
      s.set(startedAt);
      startedAt = s;
      const st = new Uint8Array(capacity);
      st.set(state);
      state = st;
    }
    startedAt[request] = now;
    sim.after(setup.timeoutMs, timeout, request);
    callee.arrive(request);
  });
  sim.at(0, arrival);
  sim.run(setup.durationMs + setup.timeoutMs);

  // The most the callee could usefully serve: its capacity or the offered load, whichever is less.
  let best = 0;
  const bestPerBucket = new Float64Array(buckets);
  for (let b = 0; b < buckets; b++) {
    const t = b * QUEUEING_BUCKET_MS;
    const span = Math.min(QUEUEING_BUCKET_MS, setup.durationMs - t);
    bestPerBucket[b] = Math.min(ratePerMs, capacityAt(t) / meanService) * span;
    best += bestPerBucket[b]!;
  }
  const byBucket: number[][] = Array.from({ length: buckets }, () => []);
  for (let i = 0; i < latencies.length; i++) byBucket[latencyBucket[i]!]!.push(latencies[i]!);
  const p99PerBucket = byBucket.map((l) => (l.length === 0 ? 0 : percentile(l, 0.99)));
  const goodputPerBucket = Array.from(goodPerBucket, (g, b) => g / bestPerBucket[b]!);

  // Settled at t = every judging window that starts at t or later (and ends in the phase)
  // has goodput ≥ 90 % of what the callee could serve and p99 ≤ 1.5 × the unloaded p99.
  const converged = (fromMs: number, untilMs: number): number | null => {
    const first = Math.floor(fromMs / QUEUEING_BUCKET_MS);
    const end = Math.floor(untilMs / QUEUEING_BUCKET_MS);
    const perBucket = bestPerBucket[first]! === 0 ? 1 : bestPerBucket[first]!;
    const width = Math.min(end - first, Math.max(1, Math.ceil(QUEUEING_JUDGED_ANSWERS / perBucket)));
    let settled: number | null = null;
    for (let b = end - width; b >= first; b--) {
      let goodSum = 0;
      let bestSum = 0;
      const window: number[] = [];
      for (let i = b; i < b + width; i++) {
        goodSum += goodPerBucket[i]!;
        bestSum += bestPerBucket[i]!;
        for (const l of byBucket[i]!) window.push(l);
      }
      const ok = goodSum >= 0.9 * bestSum && window.length > 0 && percentile(window, 0.99) <= 1.5 * unloadedP99Ms;
      if (!ok) break;
      settled = b;
    }
    return settled === null ? null : settled * QUEUEING_BUCKET_MS - fromMs;
  };

  return {
    strategy,
    requests,
    good,
    rejected,
    timedOut,
    goodputRatio: best === 0 ? 0 : good / best,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    convergenceMs: setup.capacityChanges
      ? { halving: converged(third, 2 * third), doubling: converged(2 * third, setup.durationMs) }
      : null,
    buckets: { goodput: goodputPerBucket, p99: p99PerBucket, limit: Array.from(limitPerBucket) },
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const workers = num(params, 'workers');
  const setup: QueueingSetup = {
    workers,
    serviceMedianMs: num(params, 'service'),
    serviceSigma: num(params, 'sigma'),
    load: num(params, 'load'),
    timeoutMs: num(params, 'timeout'),
    bulkhead: num(params, 'bulkhead') === 0 ? workers : num(params, 'bulkhead'),
    durationMs: num(params, 'duration') * 1000,
    capacityChanges: true,
    seed: num(params, 'seed'),
  };
  // The callee's p99 when nothing queues: 10 % load, no capacity change, nothing in the way.
  const unloaded = runQueueing({ ...setup, load: 0.1, capacityChanges: false }, 'none', Number.POSITIVE_INFINITY);
  const unloadedP99Ms = unloaded.p99Ms;
  const rows = QUEUEING_STRATEGIES.map((s, i) => {
    const r = runQueueing(setup, s, unloadedP99Ms);
    context.onProgress?.(i + 1, QUEUEING_STRATEGIES.length);
    return r;
  });
  const json = {
    scenario: 'queueing',
    parameters: setup,
    unloadedP99Ms,
    rows: rows.map(({ buckets: _, ...r }) => r),
  };
  const table: Table = {
    columns: ['strategy', 'goodput', 'p50', 'p99', 'rejected', 'timed out', 'settled after halving', 'after doubling'],
    align: ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      r.strategy === 'bulkhead' ? `bulkhead (${setup.bulkhead})` : r.strategy,
      `${number(r.goodputRatio * 100, 1)}%`,
      `${number(r.p50Ms, 1)} ms`,
      `${number(r.p99Ms, 1)} ms`,
      String(r.rejected),
      String(r.timedOut),
      r.convergenceMs?.halving == null ? 'never' : `${number(r.convergenceMs.halving / 1000, 2)} s`,
      r.convergenceMs?.doubling == null ? 'never' : `${number(r.convergenceMs.doubling / 1000, 2)} s`,
    ]),
  };
  const seconds = (values: readonly number[], name: string): Series => ({
    name,
    points: values.map((v, b) => [(b * QUEUEING_BUCKET_MS) / 1000, v] as const),
  });
  const third = setup.durationMs / 3000;
  const adaptive = rows[2] as QueueingRun;
  return {
    json,
    report: {
      title: `kindly-calls sim queueing — ${workers} workers, offered ${number(setup.load)}× capacity, capacity halves and doubles back`,
      parameters: [
        ['workers', `${workers} (then ${Math.max(1, Math.floor(workers / 2))}, then ${workers})`],
        ['service', `log-normal, median ${number(setup.serviceMedianMs)} ms, σ ${setup.serviceSigma}`],
        ['load', `${number(setup.load)}× starting capacity`],
        ['caller timeout', `${number(setup.timeoutMs)} ms`],
        ['bulkhead', String(setup.bulkhead)],
        ['for', `${number(setup.durationMs / 1000)} s`],
        ['seed', String(setup.seed)],
      ] as const,
      tables: [{ title: '', table }],
      charts: [
        {
          title: 'Goodput per 250 ms, as a share of what the callee could serve',
          xLabel: 'time (s)',
          yLabel: 'goodput ratio',
          series: rows.map((r) => seconds(r.buckets.goodput, r.strategy)),
          markers: [
            { axis: 'x', value: third, label: 'capacity halves' },
            { axis: 'x', value: 2 * third, label: 'capacity doubles' },
          ],
          steps: true,
        },
        {
          title: 'p99 latency per 250 ms (by start time)',
          xLabel: 'time (s)',
          yLabel: 'ms',
          series: rows.map((r) => seconds(r.buckets.p99, r.strategy)),
          markers: [{ axis: 'y', value: 1.5 * unloadedP99Ms, label: '1.5× unloaded p99' }],
          steps: true,
        },
        {
          title: 'The adaptive limit, learned from latency',
          xLabel: 'time (s)',
          yLabel: 'concurrency',
          series: [seconds(adaptive.buckets.limit, 'adaptive limit')],
          markers: [{ axis: 'y', value: workers, label: 'workers at start' }],
          steps: true,
        },
      ],
      notes: [
        `The callee serves ${workers} requests at once and queues the rest; past ${2 * workers} in the system every service slows down (throughput collapses). Its unloaded p99 is ${number(unloadedP99Ms, 1)} ms.`,
        `Without a limit the queue grows until callers time out (${number(setup.timeoutMs)} ms) while the callee keeps serving requests nobody waits for: goodput ${number((rows[0] as QueueingRun).goodputRatio * 100, 1)}%.`,
        `A bulkhead sized for the starting capacity (${setup.bulkhead}) is right until the capacity halves; then it queues ${setup.bulkhead - Math.floor(workers / 2)} requests at the callee.`,
        `kindly's adaptive limit (defaults, no number configured: initial ${ADAPTIVE_CONCURRENCY_DEFAULTS.initialLimit}) follows the capacity from latency alone: goodput ${number(adaptive.goodputRatio * 100, 1)}%, p99 ${number(adaptive.p99Ms, 1)} ms (${number(adaptive.p99Ms / unloadedP99Ms, 2)}× unloaded).`,
        `Settled = from then on, every judging window (whole 250 ms buckets, sliding, wide enough to expect ${QUEUEING_JUDGED_ANSWERS} answers at the phase's capacity) had goodput ≥ 90 % of capacity and p99 ≤ 1.5× the unloaded p99.`,
      ],
    },
  };
}

export const queueing: Scenario = {
  name: 'queueing',
  summary: 'a callee whose latency grows with concurrency: no limit vs fixed bulkhead vs adaptive limit',
  description: [
    'Poisson arrivals at --load × the starting capacity reach a callee with --workers parallel workers',
    'and an unbounded FIFO queue (log-normal service, median --service ms, spread --sigma); past 2 ×',
    'workers requests in the system every service slows down, so throughput collapses. The workers',
    'halve after a third of --duration and come back after two thirds. Callers give up after',
    '--timeout ms (the callee keeps serving those requests). Compared: no limit; a fixed bulkhead of',
    "--bulkhead (0: the starting worker count); kindly's AdaptiveConcurrencyLimit with its defaults.",
    'Measured: goodput (answers within the timeout ÷ what the callee could serve), p50/p99 latency of',
    'admitted requests, rejections, and how long after each capacity change every later judging window',
    `(sliding, whole 250 ms buckets, wide enough to expect ${QUEUEING_JUDGED_ANSWERS} answers: a p99 of fewer answers is their`,
    'maximum) meets goodput ≥ 90 % and p99 ≤ 1.5 × the unloaded p99.',
  ],
  options: [
    { name: 'workers', kind: 'integer', min: 2, max: 10_000, default: 40, help: 'requests the callee serves at once' },
    { name: 'service', kind: 'number', min: 0.1, max: 60_000, default: 20, help: 'median service time, ms' },
    { name: 'sigma', kind: 'number', min: 0, max: 2, default: 0.3, help: 'log-normal spread of service time' },
    { name: 'load', kind: 'number', min: 0.01, max: 100, default: 1.5, help: 'offered load ÷ starting capacity' },
    { name: 'timeout', kind: 'number', min: 1, max: 600_000, default: 1_000, help: "callers' timeout, ms" },
    { name: 'bulkhead', kind: 'integer', min: 0, max: 100_000, default: 0, help: 'fixed bulkhead size (0: --workers)' },
    { name: 'duration', kind: 'number', min: 3, max: 3_600, default: 30, help: 'seconds simulated' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
