import { HEDGING_DEFAULTS } from '../../policies/hedging.js';
import { type Random, SeededRandom } from '../../random/random.js';
import { lognormal } from '../distributions.js';
import { Simulation } from '../engine.js';
import { percentile } from '../percentile.js';
import { number } from '../report/format.js';
import type { Table } from '../report/model.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';
import { type SimCallEnd, SimDownstream, type SimDownstreamOptions } from '../sim-downstream.js';
import { spread } from '../summary.js';

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
  /** Share of the calls' first attempts that were slow (the tail as drawn, not as asked for). */
  slowShare: number;
  hedges: number;
  /** Hedges that answered first. */
  hedgeWins: number;
  p50Ms: number;
  p99Ms: number;
  p999Ms: number;
  /** hedges ÷ requests: the extra attempts the callee received. */
  extraLoad: number;
}

/** The callee: an attempt's latency, log-normal and `slowdown` times longer with probability `tail`. */
export function attemptLatencies(setup: HedgingSetup): (random: Random) => { ms: number; slow: boolean } {
  const meanMs = setup.medianMs * Math.exp((setup.sigma * setup.sigma) / 2);
  return (random) => {
    const base = lognormal(random, meanMs, setup.sigma);
    if (!(random.next() < setup.tail)) return { ms: base, slow: false };
    return { ms: base * setup.slowdown, slow: true };
  };
}

/** The seed of the hedges' own stream of draws. */
export function hedgeSeed(seed: number): number {
  return seed ^ 0x5bd1e995;
}

/**
 * The callers: `downstream()` with one attempt and no attempt timeout (every attempt answers
 * in the end), hedging at the learned `percentile` (`maxExtraLoad` 5 %), the default retry budget.
 */
export function hedgingOptions(setup: HedgingSetup, hedging: boolean): SimDownstreamOptions {
  return { retry: false, attemptTimeoutMs: false, ...(hedging ? { hedging: { percentile: setup.percentile } } : {}) };
}

/**
 * One run: Poisson arrivals; every attempt's latency is log-normal (median, σ) and, with
 * probability `tail`, `slowdown` times longer — independently per attempt, as when a hedge
 * lands on another replica or misses the pause that held the first. The callers are a
 * `SimDownstream` (the runtime's pipeline): with hedging, each hedge is admitted by its stages
 * — kindly's `HedgingPolicy` (learned delay, `maxExtraLoad`) and the retry budget — exactly as
 * the runtime admits it; the first answer wins and the other attempt is abandoned, its
 * elapsed time recorded as a (censored) latency.
 *
 * Paired: arrivals and first attempts draw from one stream and hedges from another, so a run
 * with hedging sees exactly the traffic and the slow first attempts of the run without — the
 * difference between the two is hedging's alone.
 */
export function runHedging(setup: HedgingSetup, hedging: boolean, observe?: (end: SimCallEnd) => void): HedgingRun {
  const sim = new Simulation({ seed: setup.seed });
  // Hedges' own draws: a second stream, so that the first stream stays the same with and without.
  const hedgeRandom = new SeededRandom(hedgeSeed(setup.seed));
  const ratePerMs = setup.ratePerSecond / 1000;
  const startedAt: number[] = [];
  const latencies: number[] = [];
  let slowFirstAttempts = 0;

  const latencyOf = attemptLatencies(setup);
  const answerKinds = [0, 1].map((hedge) => sim.on((call, now) => api.answer(call, now, undefined, hedge)));
  const send = (call: number, _attempt: number, _now: number, hedge: number) => {
    const latency = latencyOf(hedge === 0 ? sim.random : hedgeRandom);
    if (hedge === 0 && latency.slow) slowFirstAttempts++;
    sim.after(latency.ms, answerKinds[hedge === 0 ? 0 : 1]!, call);
  };
  const api: SimDownstream = new SimDownstream(sim, 'callee', hedgingOptions(setup, hedging), { send }, (end) => {
    latencies.push(end.atMs - startedAt[end.call]!);
    observe?.(end);
  });
  const arrival = sim.on((_, now) => {
    const next = now - Math.log(1 - sim.random.next()) / ratePerMs;
    if (next < setup.durationMs) sim.at(next, arrival);
    const call = startedAt.length;
    startedAt.push(now);
    api.start(call, now);
  });
  sim.at(0, arrival);
  sim.run();
  return hedgingRun(startedAt.length, slowFirstAttempts, api.hedgesSent, api.hedgeWins, latencies);
}

/** A run's figures from its counts and its calls' latencies. */
export function hedgingRun(
  requests: number,
  slowFirstAttempts: number,
  hedges: number,
  hedgeWins: number,
  latencies: number[],
): HedgingRun {
  return {
    requests,
    slowShare: requests === 0 ? 0 : slowFirstAttempts / requests,
    hedges,
    hedgeWins,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    p999Ms: percentile(latencies, 0.999),
    extraLoad: requests === 0 ? 0 : hedges / requests,
  };
}

/** The nearest-rank p99 of a run without hedging sits on the boundary of a tail this close to 1 %. */
function onTheBoundary(tail: number, requests: number): boolean {
  // Within 3 standard deviations of the share of slow attempts a run of this size draws.
  return Math.abs(tail - 0.01) < 3 * Math.sqrt((0.01 * 0.99) / Math.max(1, requests));
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
  const seeds = num(params, 'seeds');
  const perSeed: SeedRuns[] = [];
  for (let i = 0; i < seeds; i++) {
    const seeded = { ...setup, seed: setup.seed + i };
    const without = runHedging(seeded, false);
    const withHedging = runHedging(seeded, true);
    perSeed.push({ seed: seeded.seed, without, with: withHedging, p99Ratio: withHedging.p99Ms / without.p99Ms });
    context.onProgress?.(i + 1, seeds);
  }
  const json = hedgingJson(setup, perSeed);
  return { json, report: hedgingReport(setup, perSeed, json) };
}

/** One seed's pair of runs. */
interface SeedRuns {
  seed: number;
  without: HedgingRun;
  with: HedgingRun;
  p99Ratio: number;
}

/** The JSON document: each figure the median over the seeds (one seed: that seed's); extraLoad the largest. */
function hedgingJson(setup: HedgingSetup, perSeed: SeedRuns[]) {
  const median = (f: (r: SeedRuns) => number) => spread(perSeed.map(f)).median;
  const ratio = spread(perSeed.map((r) => r.p99Ratio));
  const requests = median((r) => r.without.requests);
  return {
    scenario: 'hedging',
    parameters: { ...setup, seeds: perSeed.length },
    withoutHedging: {
      p50Ms: median((r) => r.without.p50Ms),
      p99Ms: median((r) => r.without.p99Ms),
      p999Ms: median((r) => r.without.p999Ms),
      requests,
      slowShare: median((r) => r.without.slowShare),
    },
    withHedging: {
      p50Ms: median((r) => r.with.p50Ms),
      p99Ms: median((r) => r.with.p99Ms),
      p999Ms: median((r) => r.with.p999Ms),
      requests: median((r) => r.with.requests),
      hedges: median((r) => r.with.hedges),
      hedgeWins: median((r) => r.with.hedgeWins),
      extraLoad: spread(perSeed.map((r) => r.with.extraLoad)).max,
    },
    p99Ratio: ratio.median,
    p99RatioRange: [ratio.min, ratio.max],
    p999Ratio: median((r) => r.with.p999Ms / r.without.p999Ms),
    p99OnTheTailBoundary: onTheBoundary(setup.tail, requests),
    perSeed: perSeed.map((r) => ({
      seed: r.seed,
      withoutP99Ms: r.without.p99Ms,
      withP99Ms: r.with.p99Ms,
      p99Ratio: r.p99Ratio,
      extraLoad: r.with.extraLoad,
      slowShare: r.without.slowShare,
    })),
  };
}

/** A figure over the seeds as a cell: the median, and (several seeds) its range. */
function rangeOf(perSeed: SeedRuns[]) {
  return (f: (r: SeedRuns) => number, digits: number, unit: string) => {
    const s = spread(perSeed.map(f));
    const one = (v: number) => number(v, digits);
    return perSeed.length === 1 ? `${one(s.median)}${unit}` : `${one(s.median)}${unit} (${one(s.min)}–${one(s.max)})`;
  };
}

function hedgingTable(setup: HedgingSetup, perSeed: SeedRuns[]): Table {
  const range = rangeOf(perSeed);
  return {
    columns: ['', 'p50', 'p99', 'p99.9', 'extra attempts', 'hedges won'],
    align: ['left', 'right', 'right', 'right', 'right', 'right'],
    rows: [
      [
        'without hedging',
        range((r) => r.without.p50Ms, 1, ' ms'),
        range((r) => r.without.p99Ms, 1, ' ms'),
        range((r) => r.without.p999Ms, 1, ' ms'),
        '0',
        '—',
      ],
      [
        `hedging at learned p${number(setup.percentile * 100, 1)}`,
        range((r) => r.with.p50Ms, 1, ' ms'),
        range((r) => r.with.p99Ms, 1, ' ms'),
        range((r) => r.with.p999Ms, 1, ' ms'),
        range((r) => r.with.extraLoad * 100, 2, '%'),
        range((r) => r.with.hedgeWins, 0, ''),
      ],
    ],
  };
}

function hedgingNotes(setup: HedgingSetup, perSeed: SeedRuns[], json: ReturnType<typeof hedgingJson>): string[] {
  const range = rangeOf(perSeed);
  const tailNote = json.p99OnTheTailBoundary
    ? `The tail is within sampling noise of 1 %: the p99 without hedging sits on the boundary between normal and slow attempts, and whether it lands among the slow ones depends on how many the seed drew (slow share ${range((r) => r.without.slowShare * 100, 3, '%')}). No estimator fixes that — the callee's own p99 lies in the empty gap between the two groups — so read the p99.9 here (${number(json.p999Ratio, 2)}× with hedging), or give a tail above 1 %.`
    : `${range((r) => r.without.slowShare * 100, 2, '%')} of first attempts were slow (asked for: ${number(setup.tail * 100, 2)}%), ${number(setup.slowdown)}× slower, independently per attempt.`;
  return [
    ...(perSeed.length === 1
      ? []
      : ['Each cell: median (min–max) over the seeds; each seed runs the same traffic with and without hedging.']),
    tailNote,
    `Hedging cuts p99 from ${number(json.withoutHedging.p99Ms, 1)} ms to ${number(json.withHedging.p99Ms, 1)} ms (${range((r) => r.p99Ratio, 3, '×')}) for at most ${number(json.withHedging.extraLoad * 100, 2)}% more attempts.`,
    `Hedges are capped at maxExtraLoad (${HEDGING_DEFAULTS.maxExtraLoad * 100}% of requests over 10 s) and draw on the retry budget, so hedging can never double the load; a slow attempt is not cancelled by its hedge, the first answer wins.`,
  ];
}

function hedgingReport(setup: HedgingSetup, perSeed: SeedRuns[], json: ReturnType<typeof hedgingJson>) {
  const seeds = perSeed.length;
  return {
    title: `kindly-calls sim hedging — ${number(setup.tail * 100)}% of attempts ${number(setup.slowdown)}× slower`,
    parameters: [
      ['rate', `${number(setup.ratePerSecond)}/s`],
      ['for', `${number(setup.durationMs / 1000)} s`],
      ['latency', `log-normal, median ${number(setup.medianMs)} ms, σ ${setup.sigma}`],
      ['tail', `${number(setup.tail * 100)}% at ${number(setup.slowdown)}×`],
      ['hedge after', `learned p${number(setup.percentile * 100, 1)}`],
      ['seeds', seeds === 1 ? String(setup.seed) : `${seeds} from ${setup.seed}`],
    ] as const,
    tables: [{ title: '', table: hedgingTable(setup, perSeed) }],
    charts: [],
    notes: hedgingNotes(setup, perSeed, json),
  };
}

export const hedging: BuiltinScenario = {
  name: 'hedging',
  summary: 'a callee with a heavy latency tail: p99 with and without hedging, and what the hedges cost',
  description: [
    'Requests arrive as a Poisson stream (--rate per second for --duration seconds). Each attempt takes',
    'a log-normal time (median --median ms, spread --sigma) and, with probability --tail, --slowdown',
    "times longer, independently per attempt. With hedging, kindly's HedgingPolicy sends a second",
    'attempt once a call has waited the learned --percentile of latency, if its maxExtraLoad cap (5 %)',
    'and the retry budget allow; the first answer wins. Measured: p50/p99/p99.9 of call latency and',
    'hedges ÷ requests (the extra load), as the median (min–max) over --seeds seeds from --seed; each seed',
    'runs the same arrivals and first attempts with and without hedging. The default tail is a little',
    'over 1 % (1.2 %) so that the p99 lies inside it on every seed: with exactly 1 % the p99 sits on the',
    "boundary between normal and slow attempts, and the seed's draw decides the side (the p99.9 then",
    'shows the effect).',
  ],
  // Its rows are kindly's own policies against each other: no retry options of the user's to add.
  retryConfig: false,
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
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'first seed' },
    { name: 'seeds', kind: 'integer', min: 1, max: 1_000, default: 5, help: 'seeds run, from --seed' },
  ],
  run,
};
