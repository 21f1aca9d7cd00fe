import { HEDGING_DEFAULTS, HedgingPolicy } from '../../policies/hedging.js';
import { RetryBudget } from '../../policies/retry-budget.js';
import { lognormal } from '../distributions.js';
import { Simulation } from '../engine.js';
import { percentile } from '../percentile.js';
import { number } from '../report/format.js';
import type { Table } from '../report/model.js';
import { num, type Scenario, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';

export interface HedgingSetup {
  ratePerSecond: number;
  durationMs: number;
  medianMs: number;
  sigma: number;
  /** Share of attempts that are slow. */
  tail: number;
  /** How much slower a slow attempt is. */
  slowdown: number;
  /** Percentile of latency the hedge waits for. */
  percentile: number;
  seed: number;
}

export interface HedgingRun {
  requests: number;
  hedges: number;
  /** Hedges that answered first. */
  hedgeWins: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** hedges ÷ requests: the extra attempts the callee received. */
  extraLoad: number;
}

/**
 * One run: Poisson arrivals; every attempt's latency is log-normal (median, σ) and, with
 * probability `tail`, `slowdown` times longer — independently per attempt, as when a hedge
 * lands on another replica or misses the pause that held the first. With hedging, kindly's
 * `HedgingPolicy` (learned delay at `percentile`, `maxExtraLoad` 5 %) and a default
 * `RetryBudget` decide each hedge exactly as the runtime does; the first answer wins and the
 * other attempt is abandoned, its elapsed time recorded as a (censored) latency.
 */
export function runHedging(setup: HedgingSetup, hedging: boolean): HedgingRun {
  const sim = new Simulation({ seed: setup.seed });
  const policy = hedging ? new HedgingPolicy({ percentile: setup.percentile }) : undefined;
  const budget = new RetryBudget();
  const ratePerMs = setup.ratePerSecond / 1000;
  const expected = Math.ceil(setup.durationMs * ratePerMs * 1.2) + 16;
  let startedAt = new Float64Array(expected);
  let primaryStart = new Float64Array(expected);
  let hedgeStart = new Float64Array(expected);
  let done = new Uint8Array(expected);
  const latencies: number[] = [];
  let requests = 0;
  let hedges = 0;
  let hedgeWins = 0;

  const attemptLatency = () =>
    lognormal(sim.random, setup.medianMs * Math.exp((setup.sigma * setup.sigma) / 2), setup.sigma) *
    (sim.random.next() < setup.tail ? setup.slowdown : 1);

  const answered = (request: number, now: number, isHedge: boolean) => {
    if (done[request] === 1) return;
    done[request] = 1;
    latencies.push(now - startedAt[request]!);
    if (isHedge) hedgeWins++;
    if (policy !== undefined) {
      policy.recordLatency(now - (isHedge ? hedgeStart[request]! : primaryStart[request]!), now);
      // The loser is abandoned now: its elapsed time is all we learn of it.
      const other = isHedge ? primaryStart[request]! : hedgeStart[request]!;
      if (!Number.isNaN(other)) policy.recordLatency(now - other, now);
    }
  };
  const primaryAnswer = sim.on((request, now) => answered(request, now, false));
  const hedgeAnswer = sim.on((request, now) => answered(request, now, true));
  const hedgeDue = sim.on((request, now) => {
    if (done[request] === 1 || policy === undefined) return;
    const refusal = policy.decide({
      nowMs: now,
      idempotent: true,
      hedgesSent: 0,
      trouble: false,
      retryBudget: () => budget.tryRetry(now),
    });
    if (refusal !== undefined) return;
    hedges++;
    hedgeStart[request] = now;
    sim.after(attemptLatency(), hedgeAnswer, request);
  });
  const arrival = sim.on((_, now) => {
    const next = now - Math.log(1 - sim.random.next()) / ratePerMs;
    if (next < setup.durationMs) sim.at(next, arrival);
    const request = requests++;
    if (request >= startedAt.length) {
      const grow = <A extends Float64Array | Uint8Array>(a: A): A => {
        const b = new (a.constructor as new (n: number) => A)(a.length * 2);
        b.set(a);
        return b;
      };
      startedAt = grow(startedAt);
      primaryStart = grow(primaryStart);
      hedgeStart = grow(hedgeStart);
      done = grow(done);
    }
    startedAt[request] = now;
    primaryStart[request] = now;
    hedgeStart[request] = Number.NaN;
    budget.recordRequest(now);
    policy?.recordRequest(now);
    sim.after(attemptLatency(), primaryAnswer, request);
    const delay = policy?.delayMs(now);
    if (delay !== undefined) sim.after(delay, hedgeDue, request);
  });
  sim.at(0, arrival);
  sim.run();
  return {
    requests,
    hedges,
    hedgeWins,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    p999Ms: percentile(latencies, 0.999),
    extraLoad: requests === 0 ? 0 : hedges / requests,
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup: HedgingSetup = {
    ratePerSecond: num(params, 'rate'),
    durationMs: num(params, 'duration') * 1000,
    medianMs: num(params, 'median'),
    sigma: num(params, 'sigma'),
    tail: num(params, 'tail'),
    slowdown: num(params, 'slowdown'),
    percentile: num(params, 'percentile'),
    seed: num(params, 'seed'),
  };
  const without = runHedging(setup, false);
  context.onProgress?.(1, 2);
  const withHedging = runHedging(setup, true);
  context.onProgress?.(2, 2);
  const json = {
    scenario: 'hedging',
    parameters: setup,
    withoutHedging: { p50Ms: without.p50Ms, p99Ms: without.p99Ms, p999Ms: without.p999Ms, requests: without.requests },
    withHedging: {
      p50Ms: withHedging.p50Ms,
      p99Ms: withHedging.p99Ms,
      p999Ms: withHedging.p999Ms,
      requests: withHedging.requests,
      hedges: withHedging.hedges,
      hedgeWins: withHedging.hedgeWins,
      extraLoad: withHedging.extraLoad,
    },
    p99Ratio: withHedging.p99Ms / without.p99Ms,
  };
  const table: Table = {
    columns: ['', 'p50', 'p99', 'p99.9', 'extra attempts', 'hedges won'],
    align: ['left', 'right', 'right', 'right', 'right', 'right'],
    rows: [
      [
        'without hedging',
        `${number(without.p50Ms, 1)} ms`,
        `${number(without.p99Ms, 1)} ms`,
        `${number(without.p999Ms, 1)} ms`,
        '0',
        '—',
      ],
      [
        `hedging at learned p${number(setup.percentile * 100, 1)}`,
        `${number(withHedging.p50Ms, 1)} ms`,
        `${number(withHedging.p99Ms, 1)} ms`,
        `${number(withHedging.p999Ms, 1)} ms`,
        `${number(withHedging.extraLoad * 100, 2)}%`,
        String(withHedging.hedgeWins),
      ],
    ],
  };
  return {
    json,
    report: {
      title: `kindly-calls sim hedging — ${number(setup.tail * 100)}% of attempts ${number(setup.slowdown)}× slower`,
      parameters: [
        ['rate', `${number(setup.ratePerSecond)}/s`],
        ['for', `${number(setup.durationMs / 1000)} s`],
        ['latency', `log-normal, median ${number(setup.medianMs)} ms, σ ${setup.sigma}`],
        ['tail', `${number(setup.tail * 100)}% at ${number(setup.slowdown)}×`],
        ['hedge after', `learned p${number(setup.percentile * 100, 1)}`],
        ['seed', String(setup.seed)],
      ] as const,
      tables: [{ title: '', table }],
      charts: [],
      notes: [
        `${number(setup.tail * 100, 2)}% of attempts are ${number(setup.slowdown)}× slower, independently per attempt. With a tail of exactly 1 % the p99 sits on the boundary between normal and slow attempts and the seed decides which side it lands on; the p99.9 shows the tail either way.`,
        `Hedging cuts p99 from ${number(without.p99Ms, 1)} ms to ${number(withHedging.p99Ms, 1)} ms (${number(json.p99Ratio, 2)}×) for ${number(withHedging.extraLoad * 100, 2)}% more attempts.`,
        `Hedges are capped at maxExtraLoad (${HEDGING_DEFAULTS.maxExtraLoad * 100}% of requests over 10 s) and draw on the retry budget, so hedging can never double the load; a slow attempt is not cancelled by its hedge, the first answer wins.`,
      ],
    },
  };
}

export const hedging: Scenario = {
  name: 'hedging',
  summary: 'a callee with a heavy latency tail: p99 with and without hedging, and what the hedges cost',
  description: [
    'Requests arrive as a Poisson stream (--rate per second for --duration seconds). Each attempt takes',
    'a log-normal time (median --median ms, spread --sigma) and, with probability --tail, --slowdown',
    "times longer, independently per attempt. With hedging, kindly's HedgingPolicy sends a second",
    'attempt once a call has waited the learned --percentile of latency, if its maxExtraLoad cap (5 %)',
    'and the retry budget allow; the first answer wins. Measured: p50/p99/p99.9 of call latency and',
    'hedges ÷ requests (the extra load). The default tail is a little over 1 % (1.2 %) so that the p99',
    'falls inside it: with exactly 1 % the p99 sits on the boundary between normal and slow attempts',
    'and which side it lands on depends on the seed (the p99.9 then shows the effect).',
  ],
  options: [
    { name: 'rate', kind: 'number', min: 1, max: 1_000_000, default: 1_000, help: 'requests per second' },
    { name: 'duration', kind: 'number', min: 1, max: 86_400, default: 60, help: 'seconds of arrivals' },
    { name: 'median', kind: 'number', min: 0.1, max: 60_000, default: 10, help: 'median attempt latency, ms' },
    { name: 'sigma', kind: 'number', min: 0, max: 2, default: 0.2, help: 'log-normal spread of latency' },
    { name: 'tail', kind: 'number', min: 0, max: 0.5, default: 0.012, help: 'share of slow attempts' },
    { name: 'slowdown', kind: 'number', min: 1, max: 1_000, default: 10, help: 'how much slower a slow attempt is' },
    {
      name: 'percentile',
      kind: 'number',
      min: 0.5,
      max: 0.999,
      default: HEDGING_DEFAULTS.percentile,
      help: 'latency percentile a hedge waits for',
    },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
