import type { Classification } from '../../classify/outcome.js';
import type { RetryBudgetOptions } from '../../policies/retry-budget.js';
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

const BUCKET_MS = 1_000;

/** The callee's answer to everything: 503, an explicit rejection (outcome `failed`), retryable. */
const UNAVAILABLE: Readonly<Classification> = Object.freeze({ outcome: 'failed', retryable: true, status: 503 });

export interface BudgetVariant {
  variant: string;
  /** The budget's options, or null without one. */
  budget: Required<Pick<RetryBudgetOptions, 'ratio' | 'reservePerSecond' | 'windowMs'>> | null;
  requests: number;
  attempts: number;
  /** attempts / requests. */
  amplification: number;
  /** Retries the budget refused. */
  budgetRejections: number;
  perSecond: number[];
}

/**
 * One run: steady arrivals against a callee that fails everything; each call goes through a
 * `SimDownstream` with `retry` and, with a budget, kindly's retry budget as `downstream()` wires
 * it: every call deposits when it starts, every retry must be granted (step 4 of the retry
 * decision), and with `shrinkOnErrors` every attempt's outcome is recorded.
 */
export function runBudget(
  setup: { ratePerSecond: number; durationMs: number; seed: number },
  variant: string,
  retry: RetryOptions,
  budgetOptions: RetryBudgetOptions | undefined,
): BudgetVariant {
  const sim = new Simulation({ seed: setup.seed });
  const callee = new Dependency({ refuseMs: 10, down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] });
  const perSecond = new BucketCounter(BUCKET_MS);
  const answered = sim.on((call, now) => api.answer(call, now, UNAVAILABLE));
  const api: SimDownstream = new SimDownstream(
    sim,
    'callee',
    { retry, budget: budgetOptions ?? false },
    {
      send(call, _attempt, now) {
        perSecond.add(now);
        sim.after(callee.answerDelay(callee.call(now), Number.POSITIVE_INFINITY), answered, call);
      },
    },
  );
  const arrivals = new SteadyArrivals(sim, { ratePerSecond: setup.ratePerSecond, durationMs: setup.durationMs }, (call, now) =>
    api.start(call, now),
  );
  arrivals.start();
  sim.run();
  const budget = api.budgets?.get(api.name);
  return {
    variant,
    budget:
      budget === undefined ? null : { ratio: budget.ratio, reservePerSecond: budget.reservePerSecond, windowMs: budget.windowMs },
    requests: arrivals.count,
    attempts: callee.calls,
    amplification: arrivals.count === 0 ? 0 : callee.calls / arrivals.count,
    budgetRejections: api.budgetRejections,
    perSecond: perSecond.toArray(),
  };
}

/** The scenario's parameters: the load, the attempts per request, and the budget's. */
interface BudgetSetup {
  ratePerSecond: number;
  durationMs: number;
  seed: number;
  attempts: number;
  ratio: number;
  reservePerSecond: number;
}

function setupFrom(params: ScenarioParams): BudgetSetup {
  return {
    ratePerSecond: num(params, 'rate'),
    durationMs: num(params, 'duration') * 1000,
    seed: num(params, 'seed'),
    attempts: num(params, 'attempts'),
    ratio: num(params, 'ratio'),
    reservePerSecond: num(params, 'reserve'),
  };
}

/** Without a budget, with one (the given reserve, then kindly's default), then on `--config`'s retry options. */
function variantRows(setup: BudgetSetup, context: ScenarioContext): BudgetVariant[] {
  const { ratio, reservePerSecond } = setup;
  const retry: RetryOptions = { maxAttempts: setup.attempts };
  const runs: [string, RetryOptions, RetryBudgetOptions | undefined][] = [
    ['without budget', retry, undefined],
    [`with budget (ratio ${ratio}, reserve ${number(reservePerSecond)}/s)`, retry, { ratio, reservePerSecond }],
    [`with budget (ratio ${ratio}, kindly's default reserve 10/s)`, retry, { ratio }],
  ];
  if (context.retry !== undefined) {
    runs.push(
      ['config, without budget', context.retry, undefined],
      ['config, with budget', context.retry, { ratio, reservePerSecond }],
    );
  }
  return runs.map(([name, r, b], i) => {
    const out = runBudget(setup, name, r, b);
    context.onProgress?.(i + 1, runs.length);
    return out;
  });
}

function variantTable(rows: BudgetVariant[]): Table {
  return {
    columns: ['variant', 'requests', 'attempts', 'amplification', 'retries refused'],
    align: ['left', 'right', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      r.variant,
      String(r.requests),
      String(r.attempts),
      `${r.amplification.toFixed(3)}×`,
      String(r.budgetRejections),
    ]),
  };
}

function attemptsChart(setup: BudgetSetup, rows: BudgetVariant[]): Chart {
  return attemptsPerSecondChart('Attempts reaching the callee per second', rows, [
    { axis: 'y', value: setup.ratePerSecond * (1 + setup.ratio), label: `${number(1 + setup.ratio)}× the request rate` },
  ]);
}

function notes(setup: BudgetSetup, rows: BudgetVariant[]): string[] {
  const [without, withBudget, withDefaultReserve] = rows as [BudgetVariant, BudgetVariant, BudgetVariant];
  return [
    `Without a budget every request makes all ${setup.attempts} attempts: ${number(without.amplification, 3)}×.`,
    `A retry budget (retries ≤ max(ratio × requests, reserve) over a 10 s window) holds it to ${number(withBudget.amplification, 3)}× with ratio ${setup.ratio} and a reserve of ${number(setup.reservePerSecond)}/s.`,
    `kindly's default reserve of 10 retries/s is a floor for quiet callers, not an addition: at ${number(setup.ratePerSecond)} requests/s it gives ${number(withDefaultReserve.amplification, 3)}×.`,
  ];
}

function report(setup: BudgetSetup, rows: BudgetVariant[]): Report {
  return {
    title: `kindly-calls sim budget — ${number(setup.ratePerSecond)} requests/s, ${setup.attempts} attempts, callee failing everything`,
    parameters: [
      ['rate', `${number(setup.ratePerSecond)}/s`],
      ['for', `${number(setup.durationMs / 1000)} s`],
      ['attempts', String(setup.attempts)],
      ['budget ratio', String(setup.ratio)],
      ['reserve', `${number(setup.reservePerSecond)}/s`],
      ['seed', String(setup.seed)],
    ] as const,
    tables: [{ title: '', table: variantTable(rows) }],
    charts: [attemptsChart(setup, rows)],
    notes: notes(setup, rows),
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = setupFrom(params);
  const rows = variantRows(setup, context);
  const [without, withBudget, withDefaultReserve] = rows as [BudgetVariant, BudgetVariant, BudgetVariant];
  const { ratePerSecond, durationMs, seed, attempts, ratio, reservePerSecond } = setup;
  const json = {
    scenario: 'budget',
    // Spelled out so that the keys keep the order the JSON output has always had.
    parameters: { ratePerSecond, durationMs, seed, attempts, ratio, reservePerSecond },
    amplification: {
      withoutBudget: without.amplification,
      withBudget: withBudget.amplification,
      withBudgetDefaultReserve: withDefaultReserve.amplification,
    },
    variants: rows.map(({ perSecond: _, ...r }) => r),
  };
  return { json, report: report(setup, rows) };
}

export const budget: BuiltinScenario = {
  name: 'budget',
  summary: 'an outage under steady load: retry amplification with and without a retry budget',
  description: [
    'Requests arrive steadily (--rate per second for --duration seconds) at a callee that answers',
    'every attempt with 503 after 10 ms. Each is retried up to --attempts attempts in all (kindly',
    "default backoff). With a budget, every first attempt deposits into kindly's RetryBudget and every",
    'retry must be granted by it (ratio --ratio, reserve --reserve retries/s, 10 s window). The',
    'reserve defaults to 0 here so that the ratio alone bounds the load (≤ 1 + ratio); a third row',
    "shows kindly's default reserve of 10/s, a floor that matters only below 50 requests/s.",
    'Measured: attempts ÷ requests.',
  ],
  options: [
    { name: 'rate', kind: 'number', min: 0.001, max: 1_000_000, default: 1_000, help: 'new requests per second' },
    { name: 'duration', kind: 'number', min: 0, max: 86_400, default: 60, help: 'seconds of arrivals' },
    { name: 'attempts', kind: 'integer', min: 1, max: 100, default: 3, help: 'attempts per request, the first included' },
    { name: 'ratio', kind: 'number', min: 0, max: 1, default: 0.2, help: 'budget: retries per request' },
    { name: 'reserve', kind: 'number', min: 0, max: 1_000_000, default: 0, help: 'budget: retries always allowed per second' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
