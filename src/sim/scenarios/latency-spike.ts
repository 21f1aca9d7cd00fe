import type { DerivedTimeoutOptions } from '../../policies/derived-timeout.js';
import { lognormal } from '../distributions.js';
import { Simulation } from '../engine.js';
import { number } from '../report/format.js';
import type { Series, Table } from '../report/model.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';
import { SimDownstream } from '../sim-downstream.js';

export interface LatencySpikeSetup {
  ratePerSecond: number;
  medianMs: number;
  sigma: number;
  /** When latency starts to grow, ms. */
  spikeAtMs: number;
  /** How long it takes to double, ms (0: at once). */
  rampMs: number;
  durationMs: number;
  percentile: number;
  factor: number;
  seed: number;
}

export interface LatencySpikeRun {
  timeouts: 'fixed' | 'derived';
  /** Timed-out attempts ÷ attempts, from the spike's start to the end. */
  falseTimeoutRate: number;
  /** The same before the spike. */
  falseTimeoutRateBefore: number;
  attempts: number;
  timedOut: number;
  /** The timeout in force at the end, ms. */
  finalTimeoutMs: number;
  /** The timeout in force when the spike began, ms (`undefined` when it never did). */
  atSpikeMs: number | undefined;
  /** Per second: the timeout in force (mean over attempts) and the false-timeout rate. */
  perSecond: { timeoutMs: number[]; rate: number[] };
}

const BUCKET_MS = 1_000;

/**
 * One run: Poisson arrivals; each attempt takes a log-normal time (median, σ) times a
 * multiplier that is 1 until `spikeAtMs`, then grows linearly to 2 over `rampMs` and stays
 * there. Every attempt would answer in the end, so every timeout is a false one. The callers
 * are a `SimDownstream` (the runtime's pipeline, one attempt per call): derived —
 * `attemptTimeoutMs: { percentile, factor }`, kindly's `DerivedTimeout` fed by the latency
 * stage as the runtime feeds it (successful latencies, and timeouts); fixed —
 * `attemptTimeoutMs: fixedMs`, the timeout the derived run had reached when the spike began
 * (what a well-measured configuration value would be), in force from the start.
 */
export function runLatencySpike(setup: LatencySpikeSetup, timeouts: 'fixed' | 'derived', fixedMs?: number): LatencySpikeRun {
  const sim = new Simulation({ seed: setup.seed });
  const ratePerMs = setup.ratePerSecond / 1000;
  const multiplier = (t: number) =>
    t < setup.spikeAtMs ? 1 : setup.rampMs === 0 ? 2 : 1 + Math.min(1, (t - setup.spikeAtMs) / setup.rampMs);
  const count = new SpikeCounts(setup);
  const timedOut = new Set<number>();
  const mean = setup.medianMs * Math.exp((setup.sigma * setup.sigma) / 2);
  const answerKind = sim.on((call, now) => api.answer(call, now, undefined));
  const api: SimDownstream = new SimDownstream(
    sim,
    'callee',
    { retry: false, budget: false, attemptTimeoutMs: timeouts === 'derived' ? derivedTimeout(setup) : (fixedMs as number) },
    { send: (call, _attempt, now) => sim.after(lognormal(sim.random, mean, setup.sigma) * multiplier(now), answerKind, call) },
    (end) => {
      if (!end.ok) timedOut.add(end.call);
    },
  );
  const arrivedAt: number[] = [];
  const arrival = sim.on((_, now) => {
    const next = now - Math.log(1 - sim.random.next()) / ratePerMs;
    if (next < setup.durationMs) sim.at(next, arrival);
    const call = arrivedAt.length;
    arrivedAt.push(now);
    api.start(call, now);
    count.started(now, api.timeoutOf(call) as number);
  });
  sim.at(0, arrival);
  sim.run();
  for (const call of timedOut) count.timedOut(arrivedAt[call] as number);
  return count.run(timeouts);
}

/** The derived attempt timeout of a setup: p`percentile` × `factor` of recent latency, 1 ms to 60 s. */
export function derivedTimeout(setup: LatencySpikeSetup): DerivedTimeoutOptions {
  return { percentile: setup.percentile, factor: setup.factor, floorMs: 1, ceilingMs: 60_000 };
}

/** The counts of one run: attempts and timeouts before and during the spike, and per second. */
class SpikeCounts {
  private readonly buckets: number;
  private readonly timeoutSum: Float64Array;
  private readonly attemptsPer: Float64Array;
  private readonly timedOutPer: Float64Array;
  private attempts = 0;
  private attemptsBefore = 0;
  private timedOutDuring = 0;
  private timedOutBefore = 0;
  private finalTimeoutMs = 0;
  /** The timeout in force when the spike began (the first attempt at or after it). */
  atSpikeMs: number | undefined;

  constructor(private readonly setup: LatencySpikeSetup) {
    this.buckets = Math.ceil(setup.durationMs / BUCKET_MS);
    this.timeoutSum = new Float64Array(this.buckets);
    this.attemptsPer = new Float64Array(this.buckets);
    this.timedOutPer = new Float64Array(this.buckets);
  }

  private bucketOf(t: number): number {
    return Math.min(this.buckets - 1, Math.floor(t / BUCKET_MS));
  }

  /** An attempt started at `now` with this timeout. */
  started(now: number, timeoutMs: number): void {
    const b = this.bucketOf(now);
    this.timeoutSum[b]! += timeoutMs;
    this.attemptsPer[b]!++;
    this.finalTimeoutMs = timeoutMs;
    if (now < this.setup.spikeAtMs) this.attemptsBefore++;
    else {
      this.attempts++;
      this.atSpikeMs ??= timeoutMs;
    }
  }

  /** The attempt started at `startedAt` timed out. */
  timedOut(startedAt: number): void {
    this.timedOutPer[this.bucketOf(startedAt)]!++;
    if (startedAt < this.setup.spikeAtMs) this.timedOutBefore++;
    else this.timedOutDuring++;
  }

  run(timeouts: 'fixed' | 'derived'): LatencySpikeRun {
    const { attempts, attemptsBefore, timedOutDuring, timedOutBefore } = this;
    return {
      timeouts,
      falseTimeoutRate: attempts === 0 ? 0 : timedOutDuring / attempts,
      falseTimeoutRateBefore: attemptsBefore === 0 ? 0 : timedOutBefore / attemptsBefore,
      attempts: attempts + attemptsBefore,
      timedOut: timedOutDuring + timedOutBefore,
      finalTimeoutMs: this.finalTimeoutMs,
      atSpikeMs: this.atSpikeMs,
      perSecond: {
        timeoutMs: Array.from(this.timeoutSum, (s, b) => (this.attemptsPer[b] === 0 ? 0 : s / this.attemptsPer[b]!)),
        rate: Array.from(this.timedOutPer, (t, b) => (this.attemptsPer[b] === 0 ? 0 : t / this.attemptsPer[b]!)),
      },
    };
  }
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = latencySpikeSetupOf(params);
  // The derived run first: the fixed timeout is the one it had reached when the spike began.
  const derivedRun = runLatencySpike(setup, 'derived');
  context.onProgress?.(1, 2);
  const fixedRun = runLatencySpike(setup, 'fixed', derivedRun.atSpikeMs ?? derivedRun.finalTimeoutMs);
  context.onProgress?.(2, 2);
  const rows = [fixedRun, derivedRun];
  const promisedRate = 1 - setup.percentile;
  const json = {
    scenario: 'latency-spike',
    parameters: setup,
    promisedRate,
    rows: rows.map(({ perSecond: _, atSpikeMs: __, ...r }) => r),
  };
  return {
    json,
    report: {
      title: `kindly-calls sim latency-spike — latency doubles over ${number(setup.rampMs / 1000)} s; timeout at p${number(setup.percentile * 100, 1)} × ${setup.factor}`,
      parameters: [
        ['rate', `${number(setup.ratePerSecond)}/s`],
        ['latency', `log-normal, median ${number(setup.medianMs)} ms, σ ${setup.sigma}`],
        ['doubles', `from ${number(setup.spikeAtMs / 1000)} s over ${number(setup.rampMs / 1000)} s`],
        ['for', `${number(setup.durationMs / 1000)} s`],
        ['timeout', `p${number(setup.percentile * 100, 1)} × ${setup.factor}`],
        ['seed', String(setup.seed)],
      ] as const,
      tables: [{ title: '', table: spikeTable(rows) }],
      charts: spikeCharts(setup, rows, promisedRate),
      notes: spikeNotes(setup, fixedRun, derivedRun, promisedRate),
    },
  };
}

function latencySpikeSetupOf(params: ScenarioParams): LatencySpikeSetup {
  return {
    ratePerSecond: num(params, 'rate'),
    medianMs: num(params, 'median'),
    sigma: num(params, 'sigma'),
    spikeAtMs: num(params, 'spike-at') * 1000,
    rampMs: num(params, 'ramp') * 1000,
    durationMs: num(params, 'duration') * 1000,
    percentile: num(params, 'percentile'),
    factor: num(params, 'factor'),
    seed: num(params, 'seed'),
  };
}

const pct = (x: number) => `${number(x * 100, 2)}%`;

function spikeTable(rows: LatencySpikeRun[]): Table {
  return {
    columns: ['timeouts', 'false timeouts while latency doubles', 'before', 'timeout at the end'],
    align: ['left', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      r.timeouts,
      pct(r.falseTimeoutRate),
      pct(r.falseTimeoutRateBefore),
      `${number(r.finalTimeoutMs, 1)} ms`,
    ]),
  };
}

function spikeCharts(setup: LatencySpikeSetup, rows: LatencySpikeRun[], promisedRate: number) {
  const seconds = (values: readonly number[], name: string): Series => ({
    name,
    points: values.map((v, b) => [(b * BUCKET_MS) / 1000, v] as const),
  });
  return [
    {
      title: 'False timeouts per second',
      xLabel: 'time (s)',
      yLabel: 'share of attempts',
      series: rows.map((r) => seconds(r.perSecond.rate, r.timeouts)),
      markers: [
        { axis: 'y', value: promisedRate, label: 'promised rate' },
        { axis: 'x', value: setup.spikeAtMs / 1000, label: 'latency starts to grow' },
      ],
      steps: true,
    },
    {
      title: 'Attempt timeout in force',
      xLabel: 'time (s)',
      yLabel: 'ms',
      series: rows.map((r) => seconds(r.perSecond.timeoutMs, r.timeouts)),
      steps: true,
    },
  ] as const;
}

function spikeNotes(setup: LatencySpikeSetup, fixed: LatencySpikeRun, derived: LatencySpikeRun, promisedRate: number): string[] {
  return [
    `Choosing p${number(setup.percentile * 100, 1)} promises about ${pct(promisedRate)} false timeouts (fewer with a factor above 1).`,
    `A fixed timeout measured before the spike (${number(fixed.finalTimeoutMs, 1)} ms) cuts ${pct(fixed.falseTimeoutRate)} of the attempts once latency doubles.`,
    `The derived timeout follows the latency (${number(derived.finalTimeoutMs, 1)} ms at the end): ${pct(derived.falseTimeoutRate)}, with no configuration change.`,
  ];
}

export const latencySpike: BuiltinScenario = {
  name: 'latency-spike',
  summary: 'latency doubles: false timeouts with a fixed timeout vs one derived from recent latency',
  description: [
    'Requests arrive as a Poisson stream (--rate per second). Each attempt takes a log-normal time',
    '(median --median ms, spread --sigma); from --spike-at seconds that time grows linearly to twice',
    'as long over --ramp seconds and stays there until --duration. Every attempt would answer in the',
    "end, so every timeout is false. Derived: kindly's DerivedTimeout (p --percentile × --factor of",
    'recent latency, timeouts recorded as longer than the timeout). Fixed: the value the derived one',
    "had reached when the spike began, configured from the start. Both run the runtime's pipeline",
    '(one attempt per call). Measured: timed-out attempts ÷ attempts from the spike to the end;',
    'the promise is 1 − percentile.',
  ],
  // Its rows are kindly's own policies against each other: no retry options of the user's to add.
  retryConfig: false,
  options: [
    { name: 'rate', kind: 'number', min: 1, max: 1_000_000, default: 200, help: 'requests per second' },
    { name: 'median', kind: 'number', min: 0.1, max: 60_000, default: 20, help: 'median latency before the spike, ms' },
    { name: 'sigma', kind: 'number', min: 0, max: 2, default: 0.4, help: 'log-normal spread of latency' },
    { name: 'spike-at', kind: 'number', min: 0, max: 86_400, default: 20, help: 'when latency starts to grow, s' },
    { name: 'ramp', kind: 'number', min: 0, max: 86_400, default: 10, help: 'seconds to double (0: at once)' },
    { name: 'duration', kind: 'number', min: 1, max: 86_400, default: 60, help: 'seconds simulated' },
    { name: 'percentile', kind: 'number', min: 0.5, max: 0.9999, default: 0.99, help: 'latency percentile of the timeout' },
    { name: 'factor', kind: 'number', min: 1, max: 100, default: 1, help: 'multiplier on that percentile' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
