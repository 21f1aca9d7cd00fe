import { DerivedTimeout } from '../../policies/derived-timeout.js';
import { lognormal } from '../distributions.js';
import { Simulation } from '../engine.js';
import { number } from '../report/format.js';
import type { Series, Table } from '../report/model.js';
import { num, type Scenario, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';

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
  /** Per second: the timeout in force (mean over attempts) and the false-timeout rate. */
  perSecond: { timeoutMs: number[]; rate: number[] };
}

const BUCKET_MS = 1_000;

/**
 * One run: Poisson arrivals; each attempt takes a log-normal time (median, σ) times a
 * multiplier that is 1 until `spikeAtMs`, then grows linearly to 2 over `rampMs` and stays
 * there. Every attempt would answer in the end, so every timeout is a false one. Fixed: the
 * timeout kindly's `DerivedTimeout` had reached when the spike began, frozen (what a
 * well-measured configuration value would be). Derived: `DerivedTimeout` live, fed as the
 * runtime feeds it — successful latencies, and timeouts.
 */
export function runLatencySpike(setup: LatencySpikeSetup, timeouts: 'fixed' | 'derived'): LatencySpikeRun {
  const sim = new Simulation({ seed: setup.seed });
  const derived = new DerivedTimeout({ percentile: setup.percentile, factor: setup.factor, floorMs: 1, ceilingMs: 60_000 });
  const ratePerMs = setup.ratePerSecond / 1000;
  const multiplier = (t: number) =>
    t < setup.spikeAtMs ? 1 : setup.rampMs === 0 ? 2 : 1 + Math.min(1, (t - setup.spikeAtMs) / setup.rampMs);
  let frozen: number | undefined;
  const buckets = Math.ceil(setup.durationMs / BUCKET_MS);
  const timeoutSum = new Float64Array(buckets);
  const attemptsPer = new Float64Array(buckets);
  const timedOutPer = new Float64Array(buckets);
  let attempts = 0;
  let timedOut = 0;
  let attemptsBefore = 0;
  let timedOutBefore = 0;
  let finalTimeoutMs = 0;

  const arrival = sim.on((_, now) => {
    const next = now - Math.log(1 - sim.random.next()) / ratePerMs;
    if (next < setup.durationMs) sim.at(next, arrival);
    const latency =
      lognormal(sim.random, setup.medianMs * Math.exp((setup.sigma * setup.sigma) / 2), setup.sigma) * multiplier(now);
    let timeout: number;
    if (timeouts === 'fixed' && now >= setup.spikeAtMs) {
      frozen ??= derived.timeoutMs(now);
      timeout = frozen;
    } else timeout = derived.timeoutMs(now);
    finalTimeoutMs = timeout;
    const b = Math.min(buckets - 1, Math.floor(now / BUCKET_MS));
    timeoutSum[b]! += timeout;
    attemptsPer[b]!++;
    const during = now >= setup.spikeAtMs;
    if (during) attempts++;
    else attemptsBefore++;
    // The outcome is known from the start (the attempt's latency is drawn now); it is fed
    // to the estimate when it would be known: at the answer or at the timeout.
    if (latency > timeout) {
      timedOutPer[b]!++;
      if (during) timedOut++;
      else timedOutBefore++;
      sim.after(timeout, timedOutKind, Math.round(timeout * 1000));
    } else sim.after(latency, answeredKind, Math.round(latency * 1000));
  });
  // Latencies travel as integer µs in the event argument.
  const answeredKind = sim.on((us, now) => derived.recordSuccess(us / 1000, now));
  const timedOutKind = sim.on((us, now) => derived.recordTimeout(us / 1000, now));
  sim.at(0, arrival);
  sim.run();
  return {
    timeouts,
    falseTimeoutRate: attempts === 0 ? 0 : timedOut / attempts,
    falseTimeoutRateBefore: attemptsBefore === 0 ? 0 : timedOutBefore / attemptsBefore,
    attempts: attempts + attemptsBefore,
    timedOut: timedOut + timedOutBefore,
    finalTimeoutMs,
    perSecond: {
      timeoutMs: Array.from(timeoutSum, (s, b) => (attemptsPer[b] === 0 ? 0 : s / attemptsPer[b]!)),
      rate: Array.from(timedOutPer, (t, b) => (attemptsPer[b] === 0 ? 0 : t / attemptsPer[b]!)),
    },
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup: LatencySpikeSetup = {
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
  const rows = (['fixed', 'derived'] as const).map((t, i) => {
    const r = runLatencySpike(setup, t);
    context.onProgress?.(i + 1, 2);
    return r;
  });
  const promisedRate = 1 - setup.percentile;
  const json = {
    scenario: 'latency-spike',
    parameters: setup,
    promisedRate,
    rows: rows.map(({ perSecond: _, ...r }) => r),
  };
  const pct = (x: number) => `${number(x * 100, 2)}%`;
  const table: Table = {
    columns: ['timeouts', 'false timeouts while latency doubles', 'before', 'timeout at the end'],
    align: ['left', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      r.timeouts,
      pct(r.falseTimeoutRate),
      pct(r.falseTimeoutRateBefore),
      `${number(r.finalTimeoutMs, 1)} ms`,
    ]),
  };
  const seconds = (values: readonly number[], name: string): Series => ({
    name,
    points: values.map((v, b) => [(b * BUCKET_MS) / 1000, v] as const),
  });
  const [fixed, derived] = rows as [LatencySpikeRun, LatencySpikeRun];
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
      tables: [{ title: '', table }],
      charts: [
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
      ],
      notes: [
        `Choosing p${number(setup.percentile * 100, 1)} promises about ${pct(promisedRate)} false timeouts (fewer with a factor above 1).`,
        `A fixed timeout measured before the spike (${number(fixed.finalTimeoutMs, 1)} ms) cuts ${pct(fixed.falseTimeoutRate)} of the attempts once latency doubles.`,
        `The derived timeout follows the latency (${number(derived.finalTimeoutMs, 1)} ms at the end): ${pct(derived.falseTimeoutRate)}, with no configuration change.`,
      ],
    },
  };
}

export const latencySpike: Scenario = {
  name: 'latency-spike',
  summary: 'latency doubles: false timeouts with a fixed timeout vs one derived from recent latency',
  description: [
    'Requests arrive as a Poisson stream (--rate per second). Each attempt takes a log-normal time',
    '(median --median ms, spread --sigma); from --spike-at seconds that time grows linearly to twice',
    'as long over --ramp seconds and stays there until --duration. Every attempt would answer in the',
    "end, so every timeout is false. Derived: kindly's DerivedTimeout (p --percentile × --factor of",
    'recent latency, timeouts recorded as longer than the timeout). Fixed: the same value at the',
    'moment the spike began, frozen. Measured: timed-out attempts ÷ attempts from the spike to the end;',
    'the promise is 1 − percentile.',
  ],
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
