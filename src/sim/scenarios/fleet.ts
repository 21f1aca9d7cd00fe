import { type FleetBudgetRun, fleetPacingStrategy, runFleetBudget } from '../fleet.js';
import { ADAPTIVE_HERD_STRATEGY } from '../herd-adaptive.js';
import { type HerdSetup, herdLowerBound, runHerd } from '../herd-run.js';
import type { LowerBound } from '../models/index.js';
import { number } from '../report/format.js';
import type { Table } from '../report/model.js';
import { type BuiltinScenario, num, type ScenarioContext, type ScenarioParams, type ScenarioResult } from '../scenario.js';

type PacingRow = {
  name: string;
  processes: number;
  callers: number;
  requests: number;
  allSucceededMs: number | null;
  failed: number;
};
type BudgetRow = { name: string } & FleetBudgetRun;
type BudgetSetup = Omit<Parameters<typeof runFleetBudget>[0], 'shared'>;

/** The herd split over `processes` processes: one process, a pacer each, shared pacing. */
function pacingRows(herd: HerdSetup, processes: number, storeRttMs: number, context: ScenarioContext): PacingRow[] {
  return [
    { name: 'one process, one pacer', processes: 1, strategy: ADAPTIVE_HERD_STRATEGY },
    { name: `${processes} processes, a pacer each`, processes, strategy: fleetPacingStrategy(processes, false, storeRttMs) },
    {
      name: `${processes} processes, shared pacing (store)`,
      processes,
      strategy: fleetPacingStrategy(processes, true, storeRttMs),
    },
  ].map((r, i) => {
    const out = runHerd(herd, r.strategy);
    context.onProgress?.(i + 1, 5);
    return {
      name: r.name,
      processes: r.processes,
      callers: herd.clients / r.processes,
      requests: out.totalRequests,
      allSucceededMs: Number.isFinite(out.allSucceededMs) ? out.allSucceededMs : null,
      failed: out.gaveUp,
    };
  });
}

/** The outage with a budget per process, then one for the fleet. */
function budgetRows(setup: BudgetSetup, context: ScenarioContext): BudgetRow[] {
  return [false, true].map((shared, i) => {
    const out = runFleetBudget({ ...setup, shared });
    context.onProgress?.(4 + i, 5);
    return { name: shared ? 'one budget for the fleet (store)' : 'a budget per process', ...out };
  });
}

function pacingTable(rows: PacingRow[], lowerBound: LowerBound): Table {
  return {
    columns: ['pacing', 'processes', 'requests', 'all served', 'failed'],
    align: ['left', 'right', 'right', 'right', 'right'],
    rows: [
      ...rows.map((r) => [
        r.name,
        String(r.processes),
        String(r.requests),
        r.allSucceededMs === null ? '—' : `${number(r.allSucceededMs / 1000, 2)} s`,
        String(r.failed),
      ]),
      ['lower bound', '—', String(lowerBound.totalRequests), `${number(lowerBound.allSucceededMs / 1000, 2)} s`, '—'],
    ],
  };
}

function budgetTable(rows: BudgetRow[]): Table {
  return {
    columns: ['retry budget', 'processes', 'requests', 'attempts', 'refused', 'amplification'],
    align: ['left', 'right', 'right', 'right', 'right', 'right'],
    rows: rows.map((r) => [
      r.name,
      String(r.processes),
      String(r.requests),
      String(r.attempts),
      String(r.refused),
      `${r.amplification.toFixed(3)}×`,
    ]),
  };
}

function fleetNotes(rows: BudgetRow[], setup: BudgetSetup): string[] {
  return [
    'Each process runs its own kindly policies; "store" rows share their state through the fleet ledger, the arithmetic the Redis store runs in Lua, synced every 80 ms as the runtime does; every store answer arrives one store round trip after the question (--store-rtt-ms), so shared state is as stale as over a network.',
    `The allowance is max(0.2 × requests, reserve 10 retries/s): a budget per process has its own floor (${setup.processes} × 10/s), one fleet budget has one. Amplification ${rows[0]!.amplification.toFixed(3)}× per process → ${rows[1]!.amplification.toFixed(3)}× shared at ${number(setup.ratePerSecond)} requests/s per process; below 50/s per process (--rate 20) the per-process floors add up and only the shared budget stays at 1.2×.`,
  ];
}

/**
 * Fleets: the same policies per process or shared between processes, side by side — the
 * herd split over P processes (pacing), and an outage under steady load from P processes
 * (retry budget).
 */
function run(params: ScenarioParams, context: ScenarioContext): ScenarioResult {
  const processes = num(params, 'processes');
  const storeRttMs = num(params, 'store-rtt-ms');
  const seed = num(params, 'seed');
  const herd: HerdSetup = {
    clients: num(params, 'clients'),
    capacity: num(params, 'capacity'),
    slotMs: num(params, 'slot-ms'),
    seed,
    server: { model: 'leaky-bucket', burst: num(params, 'burst'), latencyMs: num(params, 'latency-ms') },
  };
  const lowerBound = herdLowerBound(herd);
  const pacing = pacingRows(herd, processes, storeRttMs, context);
  const budgetSetup: BudgetSetup = {
    processes: num(params, 'budget-processes'),
    ratePerSecond: num(params, 'rate'),
    durationMs: num(params, 'duration') * 1000,
    seed,
    storeRttMs,
  };
  const budget = budgetRows(budgetSetup, context);
  return {
    json: {
      scenario: 'fleet',
      parameters: { processes, ...herd, budget: budgetSetup },
      pacing: { rows: pacing, lowerBound: { requests: lowerBound.totalRequests, ms: lowerBound.allSucceededMs } },
      budget: { rows: budget },
    },
    report: {
      title: `kindly-calls sim fleet — ${processes} processes sharing a herd, ${budgetSetup.processes} processes in an outage`,
      parameters: [
        ['processes', String(processes)],
        ['clients', String(herd.clients)],
        ['server', `leaky bucket ${number((herd.capacity * 1000) / herd.slotMs)}/s, ${herd.server?.burst} at once`],
        ['budget processes', String(budgetSetup.processes)],
        ['rate per process', `${number(budgetSetup.ratePerSecond)}/s`],
        ['store round trip', `${number(storeRttMs)} ms`],
        ['seed', String(seed)],
      ] as const,
      tables: [
        { title: 'Herd split over processes', table: pacingTable(pacing, lowerBound) },
        { title: 'Outage: retry amplification', table: budgetTable(budget) },
      ],
      charts: [],
      notes: fleetNotes(budget, budgetSetup),
    },
  };
}

export const fleet: BuiltinScenario = {
  name: 'fleet',
  summary: 'processes on their own vs sharing state (store): a herd split over processes, and a fleet-wide retry budget',
  description: [
    'Pacing: --clients callers split over --processes processes each send one request at t = 0 to a',
    'leaky bucket (nginx limit_req: --capacity per --slot-ms, --burst at once, answers after --latency-ms)',
    'and retry until served, paced by a kindly Pacer per process, or by the same pacers booking their',
    'slots in one shared queue (the fleet store). Budget: --budget-processes processes each send --rate',
    'requests/s for --duration s to a callee failing everything, 3 attempts each, default retry budget',
    'per process or shared. Measured: requests and time to serve everyone; attempts ÷ requests.',
  ],
  // Its rows are kindly's own policies against each other: no retry options of the user's to add.
  retryConfig: false,
  options: [
    { name: 'processes', kind: 'integer', min: 1, max: 64, default: 4, help: 'processes sharing the herd' },
    { name: 'clients', kind: 'integer', min: 1, max: 100_000, default: 100, help: 'callers in all' },
    { name: 'capacity', kind: 'integer', min: 1, max: 100_000, default: 10, help: 'requests served per slot' },
    { name: 'slot-ms', kind: 'integer', min: 1, max: 60_000, default: 100, help: 'slot length, ms' },
    { name: 'burst', kind: 'integer', min: 1, max: 100_000, default: 10, help: 'requests served at once from idle' },
    { name: 'latency-ms', kind: 'number', min: 0, max: 60_000, default: 5, help: 'answer latency, ms' },
    { name: 'budget-processes', kind: 'integer', min: 1, max: 1_000, default: 10, help: 'processes in the outage' },
    { name: 'rate', kind: 'number', min: 0.001, max: 100_000, default: 100, help: 'requests per second per process (outage)' },
    { name: 'duration', kind: 'number', min: 1, max: 3_600, default: 30, help: 'seconds of outage' },
    { name: 'store-rtt-ms', kind: 'number', min: 0, max: 1_000, default: 1, help: 'round trip to the store, ms' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'seed' },
  ],
  run,
};
