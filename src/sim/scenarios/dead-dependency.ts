import type { CircuitBreakerOptions } from '../../policies/circuit-breaker.js';
import type { RetryBudgetOptions } from '../../policies/retry-budget.js';
import type { RetryOptions } from '../../policies/retry-decision.js';
import { ANSWER_OK, ANSWER_REFUSED, Dependency, REFUSED } from '../dependency.js';
import { Simulation } from '../engine.js';
import { number, seconds } from '../report/format.js';
import type { Chart, Report, Table } from '../report/model.js';
import { attemptsPerSecondChart } from '../report/series.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult, str } from '../scenario.js';
import { type SimCallEnd, SimDownstream } from '../sim-downstream.js';
import { SteadyArrivals } from '../steady-arrivals.js';
import { DeadDependencyTally } from './dead-dependency-tally.js';

export interface DeadDependencySetup {
  ratePerSecond: number;
  durationMs: number;
  downFromMs: number;
  downForMs: number;
  /** How the callee fails while down. */
  failure: 'refuse' | 'timeout';
  /** Attempt timeout, ms (what a hanging callee costs per attempt). */
  timeoutMs: number;
  seed: number;
}

export interface DeadDependencyVariant {
  variant: string;
  breaker: boolean;
  requests: number;
  /** Attempts that reached the callee. */
  attempts: number;
  /** Attempts that reached the callee while it was down. */
  requestsToDead: number;
  /** Attempts the breaker failed fast (never sent). */
  failedFast: number;
  /** Attempts failed fast after the callee was back. */
  failedFastAfterRecovery: number;
  succeeded: number;
  failed: number;
  /** Times the breaker opened. */
  breakerOpens: number;
  /**
   * How long after the callee came back the breaker kept failing fast: from the callee's
   * return to the breaker's closing (0 without a breaker, or if it was closed then).
   */
  recoveryDelayMs: number;
  /** Attempts that reached the callee, per second. */
  perSecond: number[];
}

/** One row of the scenario: its name and the policies its calls run with. */
export interface VariantPolicies {
  /** The row's name. */
  variant: string;
  retry: RetryOptions;
  /** The breaker's options, or undefined for no breaker. */
  breaker: CircuitBreakerOptions | undefined;
  /** Told how each call ended (to compare with the same scenario run by `downstream()`). */
  observe?: (end: SimCallEnd) => void;
  /** The retry budget. @default false: the rows differ by the breaker alone */
  budget?: RetryBudgetOptions | false;
}

/** When the callee comes back. */
function backAtMs(setup: DeadDependencySetup): number {
  return setup.downFromMs + setup.downForMs;
}

/** The callee: answers in 10 ms, except while down, when it refuses or never answers. */
export function deadCallee(setup: DeadDependencySetup): Dependency {
  return new Dependency({
    whenDown: setup.failure === 'refuse' ? 'refuse' : 'hang',
    down: [{ fromMs: setup.downFromMs, untilMs: backAtMs(setup) }],
  });
}

/**
 * The callers: a `SimDownstream` sending to `callee`. Refused answers come back after
 * `refuseMs`, good ones after `latencyMs`; a hanging callee never answers and the attempt
 * timeout ends the attempt.
 */
function deadDependencyCaller(
  sim: Simulation,
  setup: DeadDependencySetup,
  policies: VariantPolicies,
  callee: Dependency,
  tally: DeadDependencyTally,
): SimDownstream {
  const { retry, breaker, observe, budget = false } = policies;
  const refused = sim.on((call, now) => api.answer(call, now, REFUSED));
  const ok = sim.on((call, now) => api.answer(call, now, undefined));
  const api: SimDownstream = new SimDownstream(
    sim,
    'callee',
    { retry, breaker: tally.watchBreaker(breaker), budget, attemptTimeoutMs: setup.timeoutMs },
    {
      send(call, _attempt, now) {
        tally.perSecond.add(now);
        const answer = callee.call(now);
        if (answer === ANSWER_OK) sim.after(callee.latencyMs, ok, call);
        else if (answer === ANSWER_REFUSED) sim.after(callee.refuseMs, refused, call);
      },
    },
    (end) => {
      observe?.(end);
      // Rejected locally: outcome `failed`, never sent; the breaker said stop, so no retry.
      if (end.refused) tally.failFast(end.atMs);
    },
  );
  return api;
}

/**
 * One run: steady arrivals, each a call through a `SimDownstream` with `retry` and, with
 * `breaker`, kindly's `CircuitBreaker` in the pipeline: an open breaker fails the attempt fast
 * (never sent), a permit is given back however the attempt ends, and a retry is refused while
 * the breaker is open. No retry budget by default, so that the rows differ by the breaker
 * alone (the `budget` scenario measures the budget).
 */
export function runDeadDependency(setup: DeadDependencySetup, policies: VariantPolicies): DeadDependencyVariant {
  const sim = new Simulation({ seed: setup.seed });
  const callee = deadCallee(setup);
  const tally = new DeadDependencyTally(backAtMs(setup));
  const api = deadDependencyCaller(sim, setup, policies, callee, tally);
  const arrivals = new SteadyArrivals(sim, { ratePerSecond: setup.ratePerSecond, durationMs: setup.durationMs }, (call, now) =>
    api.start(call, now),
  );
  arrivals.start();
  sim.run();
  const calls = {
    variant: policies.variant,
    breaker: api.breaker !== undefined,
    requests: arrivals.count,
    succeeded: api.succeeded,
    failed: api.failed,
    breakerOpens: api.breaker?.opens ?? 0,
  };
  return tally.row(calls, callee);
}

/** The client's retry options: kindly's defaults (3 attempts, exponential 100 ms, full jitter). */
const CLIENT_RETRY: RetryOptions = {};
/** kindly's default breaker: 5 failures in a row, 5 s break doubling up to 60 s, ±10% jitter. */
const BREAKER: CircuitBreakerOptions = {};

function setupFrom(params: ScenarioParams): DeadDependencySetup {
  return {
    ratePerSecond: num(params, 'rate'),
    durationMs: num(params, 'duration') * 1000,
    downFromMs: num(params, 'down-from') * 1000,
    downForMs: num(params, 'down-for') * 1000,
    failure: str(params, 'failure') as 'refuse' | 'timeout',
    timeoutMs: num(params, 'timeout-ms'),
    seed: num(params, 'seed'),
  };
}

/** Without and with the breaker, on kindly's default retry options, then on `--config`'s. */
function variantRows(setup: DeadDependencySetup, context: ScenarioContext): DeadDependencyVariant[] {
  const runs: [string, RetryOptions, CircuitBreakerOptions | undefined][] = [
    ['without breaker', CLIENT_RETRY, undefined],
    ['with breaker', CLIENT_RETRY, BREAKER],
  ];
  if (context.retry !== undefined) {
    runs.push(['config, without breaker', context.retry, undefined], ['config, with breaker', context.retry, BREAKER]);
  }
  return runs.map(([name, retry, breaker], i) => {
    const r = runDeadDependency(setup, { variant: name, retry, breaker });
    context.onProgress?.(i + 1, runs.length);
    return r;
  });
}

function variantTable(rows: DeadDependencyVariant[]): Table {
  return {
    columns: [
      'variant',
      'requests',
      'sent',
      'sent while down',
      'failed fast',
      'succeeded',
      'failed',
      'breaker opens',
      'recovery delay',
    ],
    align: ['left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      r.variant,
      String(r.requests),
      String(r.attempts),
      String(r.requestsToDead),
      String(r.failedFast),
      String(r.succeeded),
      String(r.failed),
      String(r.breakerOpens),
      r.breaker ? seconds(r.recoveryDelayMs) : '—',
    ]),
  };
}

function attemptsChart(setup: DeadDependencySetup, rows: DeadDependencyVariant[]): Chart {
  return attemptsPerSecondChart('Attempts reaching the callee per second', rows, [
    { axis: 'x', value: setup.downFromMs / 1000, label: 'callee down' },
    { axis: 'x', value: backAtMs(setup) / 1000, label: 'callee back' },
  ]);
}

/** `reduction`: requests to the dead callee without ÷ with the breaker, null if none got through. */
function notes(without: DeadDependencyVariant, withBreaker: DeadDependencyVariant, reduction: number | null): string[] {
  return [
    `The breaker cut the requests sent to the dead callee ${reduction === null ? 'to zero' : `${number(reduction, 1)}×`} (${without.requestsToDead} → ${withBreaker.requestsToDead}).`,
    `Its cost: after the callee came back, calls kept failing fast for ${seconds(withBreaker.recoveryDelayMs)} (${withBreaker.failedFastAfterRecovery} calls), until a half-open probe succeeded.`,
    'Clients: kindly default retry options (3 attempts, exponential from 100 ms, full jitter). Breaker: kindly defaults (opens after 5 failures in a row; 5 s break, doubling per re-opening up to 60 s, ±10% jitter; one probe).',
  ];
}

function report(setup: DeadDependencySetup, rows: DeadDependencyVariant[], reduction: number | null): Report {
  const [without, withBreaker] = rows as [DeadDependencyVariant, DeadDependencyVariant];
  const backAt = backAtMs(setup);
  return {
    title: `kindly-calls sim dead-dependency — ${number(setup.ratePerSecond)} requests/s, callee down from ${seconds(setup.downFromMs)} to ${seconds(backAt)}`,
    parameters: [
      ['rate', `${number(setup.ratePerSecond)}/s`],
      ['for', seconds(setup.durationMs)],
      ['down', `${seconds(setup.downFromMs)} – ${seconds(backAt)}`],
      ['failure', setup.failure === 'refuse' ? 'connection refused' : `no answer (timeout ${setup.timeoutMs} ms)`],
      ['seed', String(setup.seed)],
    ] as const,
    tables: [{ title: '', table: variantTable(rows) }],
    charts: [attemptsChart(setup, rows)],
    notes: notes(without, withBreaker, reduction),
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = setupFrom(params);
  const rows = variantRows(setup, context);
  const [without, withBreaker] = rows as [DeadDependencyVariant, DeadDependencyVariant];
  const reduction = withBreaker.requestsToDead === 0 ? null : without.requestsToDead / withBreaker.requestsToDead;
  const json = {
    scenario: 'dead-dependency',
    parameters: setup,
    requestsToDead: { withoutBreaker: without.requestsToDead, withBreaker: withBreaker.requestsToDead },
    reduction,
    recoveryDelayMs: withBreaker.recoveryDelayMs,
    variants: rows.map(({ perSecond: _, ...r }) => r),
  };
  return { json, report: report(setup, rows, reduction) };
}

export const deadDependency: BuiltinScenario = {
  name: 'dead-dependency',
  summary: 'callee down for a while then back: requests that reach it, with and without a breaker',
  description: [
    'Requests arrive steadily (--rate per second for --duration seconds). The callee is down from',
    '--down-from for --down-for seconds and refuses connections (--failure refuse) or never answers',
    '(--failure timeout, attempt timeout --timeout-ms); otherwise it answers in 10 ms. Clients use',
    "kindly's default retry options (3 attempts, exponential from 100 ms, full jitter), without and",
    "with kindly's default CircuitBreaker (5 failures in a row; 5 s break doubling up to 60 s, ±10%).",
    'Measured: attempts that reach the callee while it is down, and how long after it came back the',
    'breaker kept failing fast (recovery delay: from its return to the breaker closing).',
  ],
  options: [
    { name: 'rate', kind: 'number', min: 0.001, max: 1_000_000, default: 100, help: 'new requests per second' },
    { name: 'duration', kind: 'number', min: 0, max: 86_400, default: 60, help: 'seconds of arrivals' },
    { name: 'down-from', kind: 'number', min: 0, max: 86_400, default: 10, help: 'callee goes down at this second' },
    { name: 'down-for', kind: 'number', min: 0, max: 86_400, default: 30, help: 'seconds it stays down' },
    { name: 'failure', kind: 'choice', choices: ['refuse', 'timeout'], default: 'refuse', help: 'how it fails while down' },
    { name: 'timeout-ms', kind: 'integer', min: 1, max: 3_600_000, default: 1_000, help: 'attempt timeout, ms' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
