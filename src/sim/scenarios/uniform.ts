import type { RetryOptions } from '../../policies/retry-decision.js';
import { BucketCounter } from '../bucket-counter.js';
import { Dependency } from '../dependency.js';
import { Simulation } from '../engine.js';
import { number } from '../report/format.js';
import type { Chart, Report, Table } from '../report/model.js';
import { attemptsPerSecondChart } from '../report/series.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';
import { SimDownstream } from '../sim-downstream.js';
import { SteadyArrivals } from '../steady-arrivals.js';

/** Load is counted per second, the granularity at which a callee's peak usually matters. */
const BUCKET_MS = 1_000;

export interface UniformVariant {
  variant: string;
  description: string;
  requests: number;
  attempts: number;
  /** attempts / requests. */
  loadMultiplier: number;
  /** Most attempts in one second. */
  peakPerSecond: number;
  /** Most first attempts (new requests) in one second. */
  arrivalsPeakPerSecond: number;
  perSecond: number[];
}

/**
 * One run: steady arrivals, each a call through a `SimDownstream` with `retry` (the attempt
 * timeout `timeoutMs`, no retry budget: the scenario is about timing, not admission) against a
 * callee that never answers.
 */
export function runUniform(
  setup: { ratePerSecond: number; durationMs: number; timeoutMs: number; seed: number },
  variant: string,
  description: string,
  retry: RetryOptions,
): UniformVariant {
  const sim = new Simulation({ seed: setup.seed });
  const callee = new Dependency({ whenDown: 'hang', down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] });
  const perSecond = new BucketCounter(BUCKET_MS);
  const arrivalsPerSecond = new BucketCounter(BUCKET_MS);
  let attempts = 0;
  // The callee is down for good and never answers: every attempt ends at the caller's timeout.
  const api = new SimDownstream(
    sim,
    'callee',
    { retry, attemptTimeoutMs: setup.timeoutMs, budget: false },
    {
      send(_request, _attempt, now) {
        attempts++;
        perSecond.add(now);
        callee.call(now);
      },
    },
  );
  const arrivals = new SteadyArrivals(
    sim,
    { ratePerSecond: setup.ratePerSecond, durationMs: setup.durationMs },
    (request, now) => {
      arrivalsPerSecond.add(now);
      api.start(request, now);
    },
  );
  arrivals.start();
  sim.run();
  return {
    variant,
    description,
    requests: arrivals.count,
    attempts,
    loadMultiplier: arrivals.count === 0 ? 0 : attempts / arrivals.count,
    peakPerSecond: perSecond.max(),
    arrivalsPeakPerSecond: arrivalsPerSecond.max(),
    perSecond: perSecond.toArray(),
  };
}

/** A retry schedule compared, by name. */
interface Schedule {
  name: string;
  description: string;
  retry: RetryOptions;
}

/** The schedules compared: the herd's exponential ceiling, with and without full jitter. */
function variants(attempts: number): Schedule[] {
  const backoff = { shape: 'exponential', baseMs: 200, factor: 2, capMs: 5_000 } as const;
  return [
    {
      name: 'no jitter',
      description: `${attempts} attempts, delay min(5 s, 100 ms × 2ⁿ) after the n-th timeout`,
      retry: { maxAttempts: attempts, backoff: { ...backoff, jitter: 'none' } },
    },
    {
      name: 'full jitter',
      description: `${attempts} attempts, delay uniform in [0, min(5 s, 100 ms × 2ⁿ)]`,
      retry: { maxAttempts: attempts, backoff: { ...backoff, jitter: 'full' } },
    },
  ];
}

type UniformSetup = Parameters<typeof runUniform>[0];

function setupFrom(params: ScenarioParams): UniformSetup {
  return {
    ratePerSecond: num(params, 'rate'),
    durationMs: num(params, 'duration') * 1000,
    timeoutMs: num(params, 'timeout-ms'),
    seed: num(params, 'seed'),
  };
}

/** Runs each schedule in turn, reporting progress. */
function variantRows(setup: UniformSetup, chosen: Schedule[], context: ScenarioContext): UniformVariant[] {
  return chosen.map((v, i) => {
    const r = runUniform(setup, v.name, v.description, v.retry);
    context.onProgress?.(i + 1, chosen.length);
    return r;
  });
}

function variantTable(rows: UniformVariant[]): Table {
  return {
    columns: ['variant', 'requests', 'attempts', 'load', 'peak attempts/s', 'peak new requests/s'],
    align: ['left', 'right', 'right', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      r.variant,
      String(r.requests),
      String(r.attempts),
      `${r.loadMultiplier.toFixed(2)}×`,
      String(r.peakPerSecond),
      String(r.arrivalsPeakPerSecond),
    ]),
  };
}

function attemptsChart(setup: UniformSetup, maxAttempts: number, rows: UniformVariant[]): Chart {
  return attemptsPerSecondChart('Attempts per second', rows, [
    {
      axis: 'y',
      value: setup.ratePerSecond * maxAttempts,
      label: `${number(setup.ratePerSecond)}/s × ${maxAttempts} attempts`,
    },
  ]);
}

function notes(maxAttempts: number, chosen: Schedule[]): string[] {
  return [
    `Jitter moves retries in time; it cannot remove any. Every request still makes ${maxAttempts} attempts, so the load is ${maxAttempts}× either way.`,
    'When arrivals are already steady there is no burst to spread: the un-jittered schedule keeps the per-second load flat, while jitter lets retries cluster by chance, so its per-second peak is no lower and usually higher.',
    ...chosen.map((v) => `${v.name}: ${v.description}.`),
  ];
}

function report(setup: UniformSetup, maxAttempts: number, chosen: Schedule[], rows: UniformVariant[]): Report {
  return {
    title: `kindly-calls sim uniform — ${number(setup.ratePerSecond)} requests/s to a callee that always times out`,
    parameters: [
      ['rate', `${number(setup.ratePerSecond)}/s`],
      ['for', `${number(setup.durationMs / 1000)} s`],
      ['attempt timeout', `${setup.timeoutMs} ms`],
      ['attempts', String(maxAttempts)],
      ['seed', String(setup.seed)],
    ] as const,
    tables: [{ title: '', table: variantTable(rows) }],
    charts: [attemptsChart(setup, maxAttempts, rows)],
    notes: notes(maxAttempts, chosen),
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = setupFrom(params);
  const maxAttempts = num(params, 'attempts');
  const chosen = variants(maxAttempts);
  if (context.retry !== undefined)
    chosen.push({ name: 'config', description: 'your --config retry options', retry: context.retry });
  const rows = variantRows(setup, chosen, context);
  const [plain, jittered] = rows as [UniformVariant, UniformVariant];
  const json = {
    scenario: 'uniform',
    parameters: { ...setup, attempts: maxAttempts },
    loadMultiplier: { withoutJitter: plain.loadMultiplier, withJitter: jittered.loadMultiplier },
    peakPerSecond: { withoutJitter: plain.peakPerSecond, withJitter: jittered.peakPerSecond },
    variants: rows.map(({ perSecond: _, ...r }) => r),
  };
  return { json, report: report(setup, maxAttempts, chosen, rows) };
}

export const uniform: BuiltinScenario = {
  name: 'uniform',
  summary: 'steady arrivals to a callee that always times out: jitter does not reduce load',
  description: [
    'Requests arrive steadily (--rate per second, for --duration seconds) at a callee that never',
    "answers; each attempt ends at the caller's --timeout-ms and is retried up to --attempts attempts",
    "in all, with the herd's exponential schedule (base 200 ms, factor 2, cap 5 s), without and with",
    'full jitter. Measured: attempts ÷ requests (the load multiplier) and the most attempts in one',
    'second.',
  ],
  options: [
    { name: 'rate', kind: 'number', min: 0.001, max: 1_000_000, default: 11, help: 'new requests per second' },
    { name: 'duration', kind: 'number', min: 0, max: 86_400, default: 60, help: 'seconds of arrivals' },
    { name: 'timeout-ms', kind: 'integer', min: 1, max: 3_600_000, default: 1_000, help: 'attempt timeout, ms' },
    { name: 'attempts', kind: 'integer', min: 1, max: 100, default: 3, help: 'attempts per request, the first included' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
