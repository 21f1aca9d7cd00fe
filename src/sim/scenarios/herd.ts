import type { RetryOptions } from '../../policies/retry-decision.js';
import { LATENCY_DISTRIBUTIONS, type LatencyDistribution } from '../distributions.js';
import { ADAPTIVE_HERD_STRATEGY } from '../herd-adaptive.js';
import {
  firstTryTimes,
  type HerdRun,
  type HerdSetup,
  type HerdStrategy,
  herdLowerBound,
  herdServerSpec,
  herdSpreadLowerBound,
  runHerd,
} from '../herd-run.js';
import { RETRY_HERD_STRATEGIES, retryStrategy } from '../herd-strategies.js';
import { keptBusyReferenceMs, type LowerBound, SERVER_MODELS, type ServerModel, serverIsRandom } from '../models/index.js';
import { bareSeconds, jsonSpread, number, seconds, spreadText } from '../report/format.js';
import type { Chart, Marker, Table } from '../report/model.js';
import { bucketSeries } from '../report/series.js';
import { REFERENCE_COLOR } from '../report/svg-chart.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult, str } from '../scenario.js';
import { type Spread, spread } from '../summary.js';

/** Every built-in herd strategy, in report order. */
export const HERD_STRATEGIES: readonly HerdStrategy[] = [...RETRY_HERD_STRATEGIES, ADAPTIVE_HERD_STRATEGY];

export const HERD_STRATEGY_NAMES = HERD_STRATEGIES.map((s) => s.name);

/** One strategy's row over all seeds. */
export interface HerdRow {
  strategy: string;
  description: string;
  seeds: number;
  totalRequests: Spread;
  peakRetriesPerSlot: Spread;
  /** `Infinity` in a seed where some client gave up. */
  allSucceededMs: Spread;
  gaveUp: Spread;
  /** Attempts simulated over all seeds. */
  attempts: number;
  /** The first seed's run, for the chart. */
  firstRun: HerdRun;
}

/**
 * How many seeds a strategy runs: all of them when its run depends on the seed (jitter, random
 * arrivals, a random server latency), else one — every seed would give the same run.
 */
export function seedsFor(strategy: Pick<HerdStrategy, 'random'>, setup: Omit<HerdSetup, 'seed'>, seeds: number): number {
  const randomServer = setup.server !== undefined && serverIsRandom({ ...setup.server, capacity: 1, slotMs: 1 });
  return strategy.random || (setup.arrivalMs ?? 0) > 0 || randomServer ? seeds : 1;
}

/**
 * Runs `strategy` over `seeds` consecutive seeds from `setup.seed` (one seed when the
 * strategy draws no randomness: every seed would give the same run).
 */
export function herdRow(
  setup: Omit<HerdSetup, 'seed'> & { seed: number },
  strategy: HerdStrategy,
  seeds: number,
  onClientsDone?: (clients: number) => void,
): HerdRow {
  const n = seedsFor(strategy, setup, seeds);
  const runs: HerdRun[] = [];
  for (let i = 0; i < n; i++) {
    let reported = 0;
    const run = runHerd({ ...setup, seed: setup.seed + i }, strategy, {
      recordSeries: i === 0,
      onProgress:
        onClientsDone === undefined
          ? undefined
          : (done) => {
              onClientsDone(done - reported);
              reported = done;
            },
    });
    runs.push(run);
  }
  return {
    strategy: strategy.name,
    description: strategy.description,
    seeds: n,
    totalRequests: spread(runs.map((r) => r.totalRequests)),
    peakRetriesPerSlot: spread(runs.map((r) => r.peakRetriesPerSlot)),
    allSucceededMs: spread(runs.map((r) => r.allSucceededMs)),
    gaveUp: spread(runs.map((r) => r.gaveUp)),
    attempts: runs.reduce((s, r) => s + r.totalRequests, 0),
    firstRun: runs[0]!,
  };
}

function selectedStrategies(params: ScenarioParams, retry: RetryOptions | undefined): HerdStrategy[] {
  const which = str(params, 'strategy');
  const chosen = which === 'all' ? [...HERD_STRATEGIES] : HERD_STRATEGIES.filter((s) => s.name === which);
  if (retry !== undefined) chosen.push(retryStrategy('config', 'your --config retry options', retry));
  return chosen;
}

type HerdParams = HerdSetup & { server: ServerParams; arrivalMs: number };

/** The run's setup from the command line's options. */
export function herdSetupOf(params: ScenarioParams): HerdParams {
  return {
    clients: num(params, 'clients'),
    capacity: num(params, 'capacity'),
    slotMs: num(params, 'slot-ms'),
    seed: num(params, 'seed'),
    server: {
      model: str(params, 'server') as ServerModel,
      burst: num(params, 'burst') || num(params, 'capacity'),
      latencyMs: num(params, 'latency-ms'),
      ...(num(params, 'reject-latency-ms') > 0 ? { rejectLatencyMs: num(params, 'reject-latency-ms') } : {}),
      distribution: str(params, 'latency') as LatencyDistribution,
      queue: num(params, 'queue'),
      mode: str(params, 'leaky-mode') as 'nodelay' | 'delay',
    },
    arrivalMs: num(params, 'arrival-ms'),
  };
}

/**
 * Reports progress in simulated clients over every strategy and seed: returns what each row
 * is told as its clients finish (nothing to tell without `onProgress`).
 */
export function clientProgress(
  strategies: readonly HerdStrategy[],
  setup: HerdParams,
  seeds: number,
  onProgress: ((done: number, total: number) => void) | undefined,
): ((clients: number) => void) | undefined {
  if (onProgress === undefined) return undefined;
  const total = strategies.reduce((sum, st) => sum + seedsFor(st, setup, seeds) * setup.clients, 0);
  let done = 0;
  return (n) => {
    done += n;
    onProgress(done, total);
  };
}

/** Retry options as JSON text, `Infinity` spelled as the `--config` file may write it. */
function jsonRetryOptions(retry: RetryOptions): string {
  return JSON.stringify(retry, (_key, value: unknown) => (value === Number.POSITIVE_INFINITY ? 'Infinity' : value));
}

/** The `--json` document. */
function herdJson(
  setup: HerdParams,
  seeds: number,
  bound: LowerBound,
  rows: readonly HerdRow[],
  strategy: string,
  retry: RetryOptions | undefined,
): Record<string, unknown> {
  return {
    scenario: 'herd',
    parameters: {
      clients: setup.clients,
      capacity: setup.capacity,
      slotMs: setup.slotMs,
      seeds,
      seed: setup.seed,
      arrivalMs: setup.arrivalMs,
      server: serverParameters(setup.server.model, setup.server),
      strategy,
      ...(retry === undefined ? {} : { config: JSON.parse(jsonRetryOptions(retry)) as unknown }),
    },
    lowerBound: bound,
    attempts: rows.reduce((sum, r) => sum + r.attempts, 0),
    strategies: rows.map((r) => ({
      strategy: r.strategy,
      description: r.description,
      seeds: r.seeds,
      totalRequests: jsonSpread(r.totalRequests),
      peakRetriesPerSlot: jsonSpread(r.peakRetriesPerSlot),
      allSucceededMs: jsonSpread(r.allSucceededMs),
      gaveUp: jsonSpread(r.gaveUp),
      lowerBound: bound,
      attempts: r.attempts,
    })),
  };
}

/** The table: one row per strategy; a `gave up` column only when some client gave up. */
export function herdTable(rows: readonly HerdRow[], bound: LowerBound): Table {
  const anyGaveUp = rows.some((r) => r.gaveUp.max > 0);
  const columns = ['strategy', 'requests', 'peak retries/slot', 'all succeeded at', 'lower bound', 'seeds'];
  if (anyGaveUp) columns.splice(4, 0, 'gave up');
  const boundText = `${bound.totalRequests} req · ${seconds(bound.allSucceededMs)}`;
  return {
    columns,
    align: columns.map((c) => (c === 'strategy' ? 'left' : 'right')),
    rows: rows.map((r) => {
      const cells = [
        r.strategy,
        spreadText(r.totalRequests),
        spreadText(r.peakRetriesPerSlot),
        spreadText(r.allSucceededMs, seconds, bareSeconds),
        boundText,
        String(r.seeds),
      ];
      if (anyGaveUp) cells.splice(4, 0, spreadText(r.gaveUp));
      return cells;
    }),
  };
}

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = herdSetupOf(params);
  const seeds = num(params, 'seeds');
  const strategies = selectedStrategies(params, context.retry);
  const bound = herdSpreadLowerBound(setup, seeds);
  const keptBusyMs = keptBusyReferenceMs(herdServerSpec(setup), setup.clients, (s) => firstTryTimes(setup, s), setup.seed, seeds);
  const onClientsDone = clientProgress(strategies, setup, seeds, context.onProgress);
  const rows = strategies.map((s) => herdRow(setup, s, seeds, onClientsDone));
  const which = str(params, 'strategy');
  const json = herdJson(setup, seeds, bound, rows, which, context.retry);
  if (keptBusyMs !== undefined) json.keptBusyMs = Math.round(keptBusyMs);
  const { model } = setup.server;
  return {
    json,
    report: {
      title: `kindly-calls sim herd — ${setup.clients} clients, ${serverTitle(model, setup.capacity, setup.slotMs)}`,
      parameters: [
        ['server', serverText(model, setup.server, setup.capacity, setup.slotMs)],
        ['clients', String(setup.clients)],
        ['capacity', `${setup.capacity} per slot`],
        ['slot', `${setup.slotMs} ms`],
        ['seeds', `${seeds} from ${setup.seed}`],
        ...(setup.arrivalMs > 0 ? [['first tries', `spread over ${setup.arrivalMs} ms`] as const] : []),
        ...(which === 'all' ? [] : [['strategy', which] as const]),
        ...(context.retry === undefined ? [] : [['config', jsonRetryOptions(context.retry)] as const]),
        ['simulated attempts', String(json.attempts)],
      ] as const,
      tables: [{ title: '', table: herdTable(rows, bound) }],
      charts: herdCharts(setup, rows, bound),
      notes: [
        'Each cell: median (min–max) over the seeds; deterministic strategies run one seed.',
        setup.arrivalMs > 0
          ? `Lower bound, first tries over ${setup.arrivalMs} ms: ${bound.totalRequests} requests (every first try, plus one retry for each first try the server turns away when first tries are all it gets; the fewest over the seeds) and ${seconds(bound.allSucceededMs)} (capacity, or the last first try's arrival).`
          : `Lower bound: ${bound.totalRequests} requests (every first try plus one retry per client the server cannot take at once) and ${seconds(bound.allSucceededMs)} (capacity).`,
        ...(keptBusyMs === undefined
          ? []
          : [
              `Service times that spread: the lower bound takes each at its mean, which no client reaches (while one worker runs a long service the others run out of work). A pool kept busy whenever it has work takes ${seconds(keptBusyMs)} on services drawn like these, on average over the seeds (keptBusyMs; an expectation, not a bound for each seed).`,
            ]),
        ...rows.map((r) => `${r.strategy}: ${r.description}.`),
      ],
    },
  };
}

type ServerParams = {
  model: ServerModel;
  burst: number;
  latencyMs: number;
  /** Rejections' latency when it differs from the answers' (`--reject-latency-ms`). */
  rejectLatencyMs?: number;
  distribution: LatencyDistribution;
  queue: number;
  mode: 'nodelay' | 'delay';
};

/** The options that matter for `model`, for the JSON document. */
function serverParameters(model: ServerModel, p: ServerParams): Record<string, unknown> {
  const rejects = p.rejectLatencyMs === undefined ? {} : { rejectLatencyMs: p.rejectLatencyMs };
  switch (model) {
    case 'slot':
      return { model };
    case 'fixed-window':
      return { model, latencyMs: p.latencyMs, latency: p.distribution, ...rejects };
    case 'concurrency':
      return {
        model,
        queue: p.queue,
        latencyMs: p.latencyMs,
        latency: p.distribution,
        rejectLatencyMs: p.rejectLatencyMs ?? p.latencyMs,
      };
    case 'leaky-bucket':
      return { model, burst: p.burst, mode: p.mode, latencyMs: p.latencyMs, latency: p.distribution, ...rejects };
    default:
      return { model, burst: p.burst, latencyMs: p.latencyMs, latency: p.distribution, ...rejects };
  }
}

function serverTitle(model: ServerModel, capacity: number, slotMs: number): string {
  if (model === 'slot') return `${capacity} served per ${slotMs} ms slot`;
  if (model === 'concurrency') return `${capacity} workers, ${slotMs} ms per request`;
  return `${model} server, ${number((capacity * 1000) / slotMs)} requests/s`;
}

function serverText(model: ServerModel, p: ServerParams, capacity: number, slotMs: number): string {
  const rate = `${number((capacity * 1000) / slotMs)}/s`;
  const rejects = p.rejectLatencyMs === undefined ? '' : `, rejections after ${p.rejectLatencyMs} ms`;
  const latency = `answers after ${p.latencyMs} ms (${p.distribution})${rejects}`;
  switch (model) {
    case 'slot':
      return `slot: first ${capacity} per ${slotMs} ms served, answers at the slot's end`;
    case 'token-bucket':
      return `token bucket: ${rate}, bucket of ${p.burst}; ${latency}`;
    case 'leaky-bucket':
      return `leaky bucket (nginx limit_req): ${rate}, burst ${p.burst - 1} (${p.burst} at once), ${p.mode}; ${latency}`;
    case 'fixed-window':
      return `fixed window: ${capacity} per ${slotMs} ms window from the first request; ${latency}`;
    case 'gcra':
      return `GCRA: ${rate}, ${p.burst} at once; ${latency}`;
    case 'concurrency':
      return `concurrency: ${capacity} workers, ${slotMs} ms (${p.distribution}) each, queue ${p.queue}; answers ${p.latencyMs} ms on their way back, 503 after ${p.rejectLatencyMs ?? p.latencyMs} ms when full`;
  }
}

/**
 * The report's charts, readable with seven strategies: one small panel per strategy on shared
 * axes (requests per slot), then every strategy's callers served over time beside the best
 * any strategy could do against this server.
 */
function herdCharts(setup: HerdParams, rows: readonly HerdRow[], bound: LowerBound): Chart[] {
  const panels = requestPanels(setup, rows, bound);
  return [...panels, servedChart(setup, rows, panels[0]?.xMax ?? 0)];
}

/**
 * The shared x range of the panels: everything, unless the slowest strategy runs on for more
 * than 1.5 × three times the lower bound — then the first 3 × lower bound (the jittered and
 * adaptive strategies finish within a few seconds while the exponential one runs for tens).
 */
export function panelXMax(longestS: number, boundMs: number): number {
  const zoom = (boundMs / 1000) * 3;
  return longestS > zoom * 1.5 ? zoom : longestS;
}

/** Requests per slot, one small panel per strategy on shared axes. */
export function requestPanels(setup: HerdParams, rows: readonly HerdRow[], bound: LowerBound): Chart[] {
  const perSlot = rows.map((r, i) => ({
    ...bucketSeries(r.strategy, r.firstRun.requestsPerSlot ?? [], setup.slotMs),
    color: i,
  }));
  const longest = Math.max(...perSlot.map((s) => s.points[s.points.length - 1]?.[0] ?? 0));
  const xMax = panelXMax(longest, bound.allSucceededMs);
  let yMax = setup.capacity;
  for (const s of perSlot) for (const [x, y] of s.points) if (x <= xMax && y > yMax) yMax = y;
  const markers: Marker[] = [
    { axis: 'y', value: setup.capacity, label: `capacity ${setup.capacity}` },
    { axis: 'x', value: bound.allSucceededMs / 1000, label: `bound ${seconds(bound.allSucceededMs)}` },
  ];
  const group = `Requests per ${setup.slotMs} ms slot, one panel per strategy (shared axes${xMax < longest ? `, the first ${number(xMax)} s` : ''}; seed ${setup.seed})`;
  return perSlot.map((s) => ({
    title: s.name,
    xLabel: 'time (s)',
    yLabel: 'requests / slot',
    series: [s],
    markers,
    steps: true,
    xMax,
    yMax,
    group,
  }));
}

/**
 * Callers served so far per strategy (counted per slot, drawn at the slot's end: never
 * earlier than they were served).
 */
export function servedCurve(servedPerSlot: readonly number[], slotMs: number): [number, number][] {
  const points: [number, number][] = [[0, 0]];
  let total = 0;
  for (let k = 0; k < servedPerSlot.length; k++) {
    total += servedPerSlot[k]!;
    points.push([((k + 1) * slotMs) / 1000, total]);
  }
  return points;
}

/**
 * The lower bound as a curve: the earliest time k callers can have been served, k = 1 …
 * clients (≤ 200 points). With first tries spread (`arrivalMs`, the draws of `seed`), no later
 * than the bound for t = 0 nor before the k-th first try has arrived.
 */
export function idealCurve(
  setup: Pick<HerdSetup, 'clients' | 'capacity' | 'slotMs' | 'server' | 'arrivalMs'> & { seed?: number },
): [number, number][] {
  const ideal: [number, number][] = [[0, 0]];
  const steps = Math.min(setup.clients, 200);
  const arrivals = firstTryTimes(setup, setup.seed ?? 1).sort((a, b) => a - b);
  for (let i = 1; i <= steps; i++) {
    const k = Math.ceil((i * setup.clients) / steps);
    const atOnce = herdLowerBound({ ...setup, clients: k }).allSucceededMs;
    ideal.push([Math.max(atOnce, arrivals[k - 1] ?? 0) / 1000, k]);
  }
  return ideal;
}

/** Every strategy's callers served over time, beside the lower bound. */
function servedChart(setup: HerdParams, rows: readonly HerdRow[], xMax: number): Chart {
  const served = rows.map((r, i) => ({
    name: r.strategy,
    color: i,
    points: servedCurve(r.firstRun.servedPerSlot ?? [], setup.slotMs),
  }));
  return {
    title: `Callers served over time (seed ${setup.seed}), beside the lower bound`,
    xLabel: 'time (s)',
    yLabel: 'callers served',
    series: [...served, { name: 'lower bound', color: REFERENCE_COLOR, dashed: true, points: idealCurve(setup) }],
    markers: [{ axis: 'y', value: setup.clients, label: `all ${setup.clients} callers` }],
    steps: false,
    xMax,
  };
}

export const herd: BuiltinScenario = {
  name: 'herd',
  summary: 'thundering herd: N clients at t = 0 against a server serving a few per slot',
  description: [
    'Every client sends one request at t = 0. The server (--server) serves --capacity requests per',
    '--slot-ms and rejects the rest with 429/503 (no wait hint). A rejected client waits per its',
    'strategy, counted from the response, and tries again until it succeeds (maxAttempts Infinity,',
    'maxElapsedMs 1 h). Server models, each at the rate capacity / slot-ms:',
    '  slot          the first --capacity arrivals per slot served; every answer at the slot end',
    '  token-bucket  bucket of --burst tokens refilled at the rate; no token: rejected at once',
    '  leaky-bucket  nginx limit_req: burst --burst − 1 (so --burst pass at once), --leaky-mode',
    '  fixed-window  --capacity per --slot-ms window, the window opening at the first request',
    '  gcra          generic cell rate algorithm: --burst at once, then one per 1 / rate',
    '  concurrency   --capacity workers, --slot-ms per request, --queue may wait, 503 when full',
    'Bucket models answer after --latency-ms (--latency distribution); rejections too, or after --reject-latency-ms.',
    'The lower bound is computed for the chosen model. --arrival-ms spreads the first tries',
    'uniformly over that many ms (a real herd reaches the server over a few ms).',
    'Strategies (kindly RetryOptions; ceiling c(n) = min(5 s, 100 ms × 2ⁿ) after the n-th rejection,',
    'i.e. base 200 ms, factor 2, cap 5 s):',
    '  fixed         constant 1 s, no jitter',
    '  exponential   c(n), no jitter',
    '  full          uniform in [0, c(n)]',
    '  equal         c(n)/2 + uniform in [0, c(n)/2]',
    '  decorrelated  uniform in [100 ms, min(5 s, 3 × previous delay)], previous₀ = 100 ms',
    '  floor         full jitter with a 1 s floor: uniform in [1 s, max(2 s, c(n))]',
    '  adaptive      kindly Pacer as downstream({ pacing: true }) runs it: a rejected call books its',
    '                slot (pacer.reserve) and waits for it; the pacer learns the served rate',
    '  config        your --config retry options (added to the selection)',
    'Measured per seed: total requests, the most retries arriving in one slot, when every client',
    'has succeeded. Reported as median (min–max) over --seeds seeds from --seed.',
  ],
  options: [
    {
      name: 'strategy',
      kind: 'choice',
      choices: [...HERD_STRATEGY_NAMES, 'all'],
      default: 'all',
      help: 'which strategy to simulate',
    },
    { name: 'clients', kind: 'integer', min: 1, max: 50_000_000, default: 100, help: 'clients, one request each at t = 0' },
    { name: 'capacity', kind: 'integer', min: 1, max: 50_000_000, default: 10, help: 'requests served per slot' },
    { name: 'slot-ms', kind: 'integer', min: 1, max: 3_600_000, default: 100, help: 'slot length, ms' },
    { name: 'server', kind: 'choice', choices: SERVER_MODELS, default: 'slot', help: 'server model' },
    {
      name: 'burst',
      kind: 'integer',
      min: 0,
      max: 50_000_000,
      default: 0,
      help: 'requests served at once from idle (bucket models); 0 means --capacity',
    },
    { name: 'latency-ms', kind: 'number', min: 0, max: 3_600_000, default: 1, help: 'answer latency, ms (not slot)' },
    { name: 'latency', kind: 'choice', choices: LATENCY_DISTRIBUTIONS, default: 'constant', help: 'latency distribution' },
    {
      name: 'reject-latency-ms',
      kind: 'number',
      min: 0,
      max: 3_600_000,
      default: 0,
      help: 'rejection latency, ms, same distribution (a limiter in front of a slow backend); 0 means --latency-ms',
    },
    { name: 'queue', kind: 'integer', min: 0, max: 50_000_000, default: 0, help: 'concurrency model: requests that may wait' },
    {
      name: 'arrival-ms',
      kind: 'number',
      min: 0,
      max: 3_600_000,
      default: 0,
      help: 'first tries arrive uniformly over this many ms (0: all at t = 0)',
    },
    {
      name: 'leaky-mode',
      kind: 'choice',
      choices: ['nodelay', 'delay'],
      default: 'nodelay',
      help: 'leaky bucket: nginx nodelay or delay',
    },
    { name: 'seeds', kind: 'integer', min: 1, max: 100_000, default: 200, help: 'seeds per jittered strategy' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'first seed' },
  ],
  run,
};
