import { ADAPTIVE_CONCURRENCY_DEFAULTS } from '../../policies/adaptive-concurrency.js';
import { Simulation } from '../engine.js';
import { percentile } from '../percentile.js';
import { QueueingCallee } from '../queueing-callee.js';
import { number } from '../report/format.js';
import type { Series, Table } from '../report/model.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';
import { type SimCallEnd, SimDownstream, type SimDownstreamOptions } from '../sim-downstream.js';

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
 * What each strategy's callers are: `downstream()` with one attempt and the callers' timeout,
 * and a bulkhead (`maxConcurrent` = the setup's, no line) or the adaptive concurrency limit
 * (its defaults), or nothing in the way (`none`; `oracle` admits before the downstream).
 */
export function queueingOptions(setup: QueueingSetup, strategy: QueueingStrategy): SimDownstreamOptions {
  return {
    retry: false,
    attemptTimeoutMs: setup.timeoutMs,
    ...(strategy === 'bulkhead' ? { bulkhead: { maxConcurrent: setup.bulkhead } } : {}),
    ...(strategy === 'adaptive' ? { concurrency: {} } : {}),
  };
}

/** The offered traffic and the callee's capacity over time. */
interface Traffic {
  third: number;
  halved: number;
  changes: { atMs: number; workers: number }[];
  meanServiceMs: number;
  ratePerMs: number;
  capacityAt(t: number): number;
}

function trafficOf(setup: QueueingSetup): Traffic {
  const third = setup.durationMs / 3;
  const halved = Math.max(1, Math.floor(setup.workers / 2));
  const meanServiceMs = setup.serviceMedianMs * Math.exp((setup.serviceSigma * setup.serviceSigma) / 2);
  return {
    third,
    halved,
    changes: setup.capacityChanges
      ? [
          { atMs: third, workers: halved },
          { atMs: 2 * third, workers: setup.workers },
        ]
      : [],
    meanServiceMs,
    ratePerMs: (setup.load * setup.workers) / meanServiceMs,
    capacityAt: (t) => (setup.capacityChanges && t >= third && t < 2 * third ? halved : setup.workers),
  };
}

/**
 * One run: Poisson arrivals at `load ×` the callee's starting capacity, through one of the
 * strategies, to a `QueueingCallee`. Each request is a call of a `SimDownstream` — the
 * runtime's pipeline, so the bulkhead and the adaptive limit are kindly's own stages:
 * admitted requests hold a slot until they are answered or their caller's timeout fires
 * (the callee keeps working on those, unaware).
 */
export function runQueueing(setup: QueueingSetup, strategy: QueueingStrategy, unloadedP99Ms: number): QueueingRun {
  const sim = new Simulation({ seed: setup.seed });
  const traffic = trafficOf(setup);
  const tally = new QueueingTally(setup);
  let oracleInFlight = 0;
  const callee = new QueueingCallee(
    sim,
    {
      workers: setup.workers,
      changes: traffic.changes,
      serviceMedianMs: setup.serviceMedianMs,
      serviceSigma: setup.serviceSigma,
    },
    (request, now) => api.answer(request, now, undefined),
  );
  // The callers: one downstream() as the runtime would build it, driven on virtual time.
  const api: SimDownstream = new SimDownstream(sim, 'callee', queueingOptions(setup, strategy), callee.asSimCallee(), (end) => {
    if (strategy === 'oracle' && !end.refused) oracleInFlight--;
    tally.ended(end);
  });
  const limiter = api.latency?.limit;
  const arrival = sim.on((_, now) => {
    const next = now - Math.log(1 - sim.random.next()) / traffic.ratePerMs;
    if (next < setup.durationMs) sim.at(next, arrival);
    if (limiter !== undefined) tally.limitAt(now, limiter.limit);
    const request = tally.arrived(now);
    if (strategy === 'oracle') {
      const workersNow = traffic.capacityAt(now);
      if (oracleInFlight >= workersNow + Math.ceil(Math.sqrt(workersNow))) {
        tally.refused();
        return;
      }
      oracleInFlight++;
    }
    api.start(request, now);
  });
  sim.at(0, arrival);
  sim.run(setup.durationMs + setup.timeoutMs);
  return tally.run(strategy, traffic, unloadedP99Ms);
}

/** What the callers saw: per request its start, per 250 ms bucket the answers, latencies and limit. */
class QueueingTally {
  requests = 0;
  good = 0;
  rejected = 0;
  timedOut = 0;
  private startedAt = new Float64Array(1 << 14);
  private readonly latencies: number[] = [];
  private readonly latencyBucket: number[] = [];
  private readonly buckets: number;
  private readonly goodPerBucket: Float64Array;
  private readonly limitPerBucket: Float64Array;

  constructor(private readonly setup: QueueingSetup) {
    this.buckets = Math.ceil(setup.durationMs / QUEUEING_BUCKET_MS);
    this.goodPerBucket = new Float64Array(this.buckets);
    this.limitPerBucket = new Float64Array(this.buckets);
  }

  bucketOf(t: number): number {
    return Math.min(this.buckets - 1, Math.floor(t / QUEUEING_BUCKET_MS));
  }

  limitAt(now: number, limit: number): void {
    this.limitPerBucket[this.bucketOf(now)] = limit;
  }

  /** A request arrives now: its id. */
  arrived(now: number): number {
    const request = this.requests++;
    if (request >= this.startedAt.length) {
      const longer = new Float64Array(this.startedAt.length * 2);
      longer.set(this.startedAt);
      this.startedAt = longer;
    }
    this.startedAt[request] = now;
    return request;
  }

  refused(): void {
    this.rejected++;
  }

  ended(end: SimCallEnd): void {
    const startedAt = this.startedAt[end.call]!;
    if (end.reason === 'rejected') {
      this.refused();
      return;
    }
    if (end.ok) {
      this.good++;
      this.goodPerBucket[this.bucketOf(startedAt)]!++;
      this.latencies.push(end.atMs - startedAt);
    } else {
      this.timedOut++;
      this.latencies.push(this.setup.timeoutMs);
    }
    this.latencyBucket.push(this.bucketOf(startedAt));
  }

  run(strategy: QueueingStrategy, traffic: Traffic, unloadedP99Ms: number): QueueingRun {
    const { setup, buckets, latencies } = this;
    // The most the callee could usefully serve: its capacity or the offered load, whichever is less.
    const bestPerBucket = new Float64Array(buckets);
    for (let b = 0; b < buckets; b++) {
      const t = b * QUEUEING_BUCKET_MS;
      const span = Math.min(QUEUEING_BUCKET_MS, setup.durationMs - t);
      bestPerBucket[b] = Math.min(traffic.ratePerMs, traffic.capacityAt(t) / traffic.meanServiceMs) * span;
    }
    const best = bestPerBucket.reduce((sum, b) => sum + b, 0);
    const byBucket: number[][] = Array.from({ length: buckets }, () => []);
    for (let i = 0; i < latencies.length; i++) byBucket[this.latencyBucket[i]!]!.push(latencies[i]!);
    const judged = { good: this.goodPerBucket, best: bestPerBucket, latencies: byBucket, unloadedP99Ms };
    const { third } = traffic;
    return {
      strategy,
      requests: this.requests,
      good: this.good,
      rejected: this.rejected,
      timedOut: this.timedOut,
      goodputRatio: best === 0 ? 0 : this.good / best,
      p50Ms: percentile(latencies, 0.5),
      p99Ms: percentile(latencies, 0.99),
      convergenceMs: setup.capacityChanges
        ? { halving: settledAfter(judged, third, 2 * third), doubling: settledAfter(judged, 2 * third, setup.durationMs) }
        : null,
      buckets: {
        goodput: Array.from(this.goodPerBucket, (g, b) => g / bestPerBucket[b]!),
        p99: byBucket.map((l) => (l.length === 0 ? 0 : percentile(l, 0.99))),
        limit: Array.from(this.limitPerBucket),
      },
    };
  }
}

/** Per bucket: answers, what the callee could have served, and the latencies. */
interface Judged {
  good: Float64Array;
  best: Float64Array;
  latencies: number[][];
  unloadedP99Ms: number;
}

/**
 * ms after `fromMs` from which every judging window that starts then or later (and ends by
 * `untilMs`) has goodput ≥ 90 % of what the callee could serve and p99 ≤ 1.5 × the unloaded
 * p99; `null` when never.
 */
function settledAfter(judged: Judged, fromMs: number, untilMs: number): number | null {
  const { good, best, latencies } = judged;
  const first = Math.floor(fromMs / QUEUEING_BUCKET_MS);
  const end = Math.floor(untilMs / QUEUEING_BUCKET_MS);
  const perBucket = best[first]! === 0 ? 1 : best[first]!;
  const width = Math.min(end - first, Math.max(1, Math.ceil(QUEUEING_JUDGED_ANSWERS / perBucket)));
  let settled: number | null = null;
  for (let b = end - width; b >= first; b--) {
    let goodSum = 0;
    let bestSum = 0;
    const window: number[] = [];
    for (let i = b; i < b + width; i++) {
      goodSum += good[i]!;
      bestSum += best[i]!;
      for (const l of latencies[i]!) window.push(l);
    }
    const ok = goodSum >= 0.9 * bestSum && window.length > 0 && percentile(window, 0.99) <= 1.5 * judged.unloadedP99Ms;
    if (!ok) break;
    settled = b;
  }
  return settled === null ? null : settled * QUEUEING_BUCKET_MS - fromMs;
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = queueingSetupOf(params);
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
  return {
    json,
    report: {
      title: `kindly-calls sim queueing — ${setup.workers} workers, offered ${number(setup.load)}× capacity, capacity halves and doubles back`,
      parameters: queueingParameters(setup),
      tables: [{ title: '', table: queueingTable(setup, rows) }],
      charts: queueingCharts(setup, rows, unloadedP99Ms),
      notes: queueingNotes(setup, rows, unloadedP99Ms),
    },
  };
}

function queueingSetupOf(params: ScenarioParams): QueueingSetup {
  const workers = num(params, 'workers');
  return {
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
}

function queueingParameters(setup: QueueingSetup) {
  const { workers } = setup;
  return [
    ['workers', `${workers} (then ${Math.max(1, Math.floor(workers / 2))}, then ${workers})`],
    ['service', `log-normal, median ${number(setup.serviceMedianMs)} ms, σ ${setup.serviceSigma}`],
    ['load', `${number(setup.load)}× starting capacity`],
    ['caller timeout', `${number(setup.timeoutMs)} ms`],
    ['bulkhead', String(setup.bulkhead)],
    ['for', `${number(setup.durationMs / 1000)} s`],
    ['seed', String(setup.seed)],
  ] as const;
}

function queueingTable(setup: QueueingSetup, rows: QueueingRun[]): Table {
  return {
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
}

function queueingCharts(setup: QueueingSetup, rows: QueueingRun[], unloadedP99Ms: number) {
  const seconds = (values: readonly number[], name: string): Series => ({
    name,
    points: values.map((v, b) => [(b * QUEUEING_BUCKET_MS) / 1000, v] as const),
  });
  const third = setup.durationMs / 3000;
  const adaptive = rows[2] as QueueingRun;
  return [
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
      markers: [{ axis: 'y', value: setup.workers, label: 'workers at start' }],
      steps: true,
    },
  ] as const;
}

function queueingNotes(setup: QueueingSetup, rows: QueueingRun[], unloadedP99Ms: number): string[] {
  const { workers } = setup;
  const adaptive = rows[2] as QueueingRun;
  return [
    `The callee serves ${workers} requests at once and queues the rest; past ${2 * workers} in the system every service slows down (throughput collapses). Its unloaded p99 is ${number(unloadedP99Ms, 1)} ms.`,
    `Without a limit the queue grows until callers time out (${number(setup.timeoutMs)} ms) while the callee keeps serving requests nobody waits for: goodput ${number((rows[0] as QueueingRun).goodputRatio * 100, 1)}%.`,
    `A bulkhead sized for the starting capacity (${setup.bulkhead}) is right until the capacity halves; then it queues ${setup.bulkhead - Math.floor(workers / 2)} requests at the callee.`,
    `kindly's adaptive limit (defaults, no number configured: initial ${ADAPTIVE_CONCURRENCY_DEFAULTS.initialLimit}) follows the capacity from latency alone: goodput ${number(adaptive.goodputRatio * 100, 1)}%, p99 ${number(adaptive.p99Ms, 1)} ms (${number(adaptive.p99Ms / unloadedP99Ms, 2)}× unloaded).`,
    `Settled = from then on, every judging window (whole 250 ms buckets, sliding, wide enough to expect ${QUEUEING_JUDGED_ANSWERS} answers at the phase's capacity) had goodput ≥ 90 % of capacity and p99 ≤ 1.5× the unloaded p99.`,
  ];
}

export const queueing: BuiltinScenario = {
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
  // Its rows are kindly's own policies against each other: no retry options of the user's to add.
  retryConfig: false,
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
