import type { RetryOptions } from '../../policies/retry-decision.js';
import { ADAPTIVE_HERD_STRATEGY } from '../herd-adaptive.js';
import { type HerdRun, type HerdSetup, type HerdStrategy, herdLowerBound, runHerd } from '../herd-run.js';
import { RETRY_HERD_STRATEGIES, retryStrategy } from '../herd-strategies.js';
import { bareSeconds, jsonSpread, number, seconds, spreadText } from '../report/format.js';
import type { Chart, Marker, Table } from '../report/model.js';
import { bucketSeries } from '../report/series.js';
import { num, type Scenario, type ScenarioContext, type ScenarioParams, type ScenarioResult, str } from '../scenario.js';
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
 * Runs `strategy` over `seeds` consecutive seeds from `setup.seed` (one seed when the
 * strategy draws no randomness: every seed would give the same run).
 */
export function herdRow(
  setup: Omit<HerdSetup, 'seed'> & { seed: number },
  strategy: HerdStrategy,
  seeds: number,
  onClientsDone?: (clients: number) => void,
): HerdRow {
  const n = strategy.random ? seeds : 1;
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

function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const setup = {
    clients: num(params, 'clients'),
    capacity: num(params, 'capacity'),
    slotMs: num(params, 'slot-ms'),
    seed: num(params, 'seed'),
  };
  const seeds = num(params, 'seeds');
  const strategies = selectedStrategies(params, context.retry);
  const bound = herdLowerBound(setup);

  const totalWork = strategies.reduce((s, st) => s + (st.random ? seeds : 1) * setup.clients, 0);
  let done = 0;
  const progress = context.onProgress;
  const onClientsDone =
    progress === undefined
      ? undefined
      : (n: number) => {
          done += n;
          progress(done, totalWork);
        };
  const rows = strategies.map((s) => herdRow(setup, s, seeds, onClientsDone));
  const attempts = rows.reduce((s, r) => s + r.attempts, 0);

  const json = {
    scenario: 'herd',
    parameters: { clients: setup.clients, capacity: setup.capacity, slotMs: setup.slotMs, seeds, seed: setup.seed },
    lowerBound: bound,
    attempts,
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

  const anyGaveUp = rows.some((r) => r.gaveUp.max > 0);
  const columns = ['strategy', 'requests', 'peak retries/slot', 'all succeeded at', 'lower bound', 'seeds'];
  if (anyGaveUp) columns.splice(4, 0, 'gave up');
  const boundText = `${bound.totalRequests} req · ${seconds(bound.allSucceededMs)}`;
  const table: Table = {
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

  const markers: Marker[] = [
    { axis: 'y', value: setup.capacity, label: `capacity: ${setup.capacity} per slot` },
    { axis: 'x', value: bound.allSucceededMs / 1000, label: `lower bound: all served by ${seconds(bound.allSucceededMs)}` },
  ];
  const series = rows.map((r) => bucketSeries(r.strategy, r.firstRun.requestsPerSlot ?? [], setup.slotMs));
  const longest = Math.max(...series.map((s) => s.points[s.points.length - 1]?.[0] ?? 0));
  const charts: Chart[] = [
    {
      title: `Requests per ${setup.slotMs} ms slot (seed ${setup.seed})`,
      xLabel: 'time (s)',
      yLabel: `requests per ${setup.slotMs} ms slot`,
      series,
      markers,
      steps: true,
    },
  ];
  // The jittered and adaptive strategies finish within a few seconds while the exponential one
  // runs for tens: a second view of the start keeps them readable.
  const zoom = (bound.allSucceededMs / 1000) * 3;
  if (longest > zoom * 1.5) {
    charts.push({
      title: `The first ${number(zoom)} s, enlarged`,
      xLabel: 'time (s)',
      yLabel: `requests per ${setup.slotMs} ms slot`,
      series,
      markers,
      steps: true,
      xMax: zoom,
    });
  }

  return {
    json,
    report: {
      title: `kindly-calls sim herd — ${setup.clients} clients, ${setup.capacity} served per ${setup.slotMs} ms slot`,
      parameters: [
        ['clients', String(setup.clients)],
        ['capacity', `${setup.capacity} per slot`],
        ['slot', `${setup.slotMs} ms`],
        ['seeds', `${seeds} from ${setup.seed}`],
        ['simulated attempts', String(attempts)],
      ] as const,
      tables: [{ title: '', table }],
      charts,
      notes: [
        'Each cell: median (min–max) over the seeds; deterministic strategies run one seed.',
        `Lower bound: ${bound.totalRequests} requests (every first try plus one retry per first-slot rejection) and ${seconds(bound.allSucceededMs)} (capacity).`,
        ...rows.map((r) => `${r.strategy}: ${r.description}.`),
      ],
    },
  };
}

export const herd: Scenario = {
  name: 'herd',
  summary: 'thundering herd: N clients at t = 0 against a server serving a few per slot',
  description: [
    'Every client sends one request at t = 0. The server serves the first --capacity requests to',
    'arrive in each --slot-ms slot and rejects the rest with 429 (no wait hint); every response',
    'arrives at the end of its slot. A rejected client waits per its strategy, counted from the',
    'response, and tries again until it succeeds (maxAttempts Infinity, maxElapsed 1 h).',
    'Strategies (kindly RetryOptions; ceiling c(n) = min(5 s, 100 ms × 2ⁿ) after the n-th rejection,',
    'i.e. base 200 ms, factor 2, cap 5 s):',
    '  fixed         constant 1 s, no jitter',
    '  exponential   c(n), no jitter',
    '  full          uniform in [0, c(n)]',
    '  equal         c(n)/2 + uniform in [0, c(n)/2]',
    '  decorrelated  uniform in [100 ms, min(5 s, 3 × previous delay)], previous₀ = 100 ms',
    '  floor         full jitter with a 1 s floor: uniform in [1 s, max(2 s, c(n))]',
    '  adaptive      kindly Pacer: a rejected client retries at now + pacer.reserve(now); the pacer',
    '                learns the served rate from the responses',
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
    { name: 'seeds', kind: 'integer', min: 1, max: 100_000, default: 200, help: 'seeds per jittered strategy' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'first seed' },
  ],
  run,
};
