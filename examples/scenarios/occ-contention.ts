/**
 * A scenario of your own for `kindly-calls sim ./occ-contention.ts`: optimistic-concurrency
 * contention, as in Marc Brooker's 2015 study of backoff and jitter.
 *
 * `clients` clients each update one shared record once, at t = 0. An attempt reads the
 * record's version, works for one round trip (latency drawn from the network stream) and
 * commits only if nobody committed in between; otherwise it conflicts and the client retries
 * after kindly's backoff (base 5 ms, factor 2, cap 1 s). We count the work (calls, conflicts
 * included) and when the last client got through, over many seeds: the network draws come
 * from their own stream, so every strategy meets the same latencies.
 *
 *     npx kindly-calls sim examples/scenarios/occ-contention.ts --clients 50 --seeds 100
 */
import { Backoff, type Jitter } from 'kindly-calls/policies';
import { networkRandom, num, type Scenario, type ScenarioParams, Simulation, sampleLatency, spread, str } from 'kindly-calls/sim';
import { SeededRandom } from 'kindly-calls/testing';

const STRATEGIES: ReadonlyArray<{ name: string; jitter: Jitter }> = [
  { name: 'no jitter', jitter: 'none' },
  { name: 'full jitter', jitter: 'full' },
  { name: 'equal jitter', jitter: 'equal' },
  { name: 'decorrelated', jitter: 'decorrelated' },
];

/** One run: returns the calls made and when the last commit happened (ms). */
function contend(clients: number, latencyMs: number, jitter: Jitter, seed: number): { calls: number; doneMs: number } {
  const sim = new Simulation({ seed });
  const network = networkRandom(seed);
  const backoff = new Backoff({ shape: 'exponential', baseMs: 5, factor: 2, capMs: 1_000, jitter });
  const jitterRandom = new SeededRandom(seed);
  const failures = new Int32Array(clients);
  const previous = new Float64Array(clients).fill(Number.NaN);
  let version = 0;
  let calls = 0;
  let doneMs = 0;
  const readVersion = new Int32Array(clients);
  const commit = sim.on((client, now) => {
    if (readVersion[client] === version) {
      version++;
      doneMs = now;
      return;
    }
    failures[client]!++;
    const prev = previous[client]!;
    const delay = backoff.delay(failures[client]!, jitterRandom, Number.isNaN(prev) ? undefined : prev);
    previous[client] = delay;
    sim.after(delay, start, client);
  });
  const start = sim.on((client) => {
    calls++;
    readVersion[client] = version;
    sim.after(sampleLatency({ ms: latencyMs, distribution: 'exponential' }, network), commit, client);
  });
  for (let c = 0; c < clients; c++) sim.at(0, start, c);
  sim.run();
  return { calls, doneMs };
}

export const scenario: Scenario = {
  name: 'occ-contention',
  summary: 'optimistic-concurrency contention on one record (Brooker 2015)',
  description: [
    'clients update one record at t = 0; an attempt commits one round trip after its read, and',
    'conflicts if another commit came in between; conflicts retry with exponential backoff',
    '(base 5 ms, factor 2, cap 1 s) and the chosen jitter. Latency: exponential, mean --latency-ms.',
  ],
  options: [
    { name: 'clients', kind: 'integer', min: 1, max: 10_000, default: 50, help: 'clients, one update each' },
    { name: 'latency-ms', kind: 'number', min: 0.01, max: 10_000, default: 10, help: 'mean round trip, ms' },
    { name: 'seeds', kind: 'integer', min: 1, max: 100_000, default: 100, help: 'seeds per strategy' },
    { name: 'seed', kind: 'integer', min: 0, max: 2 ** 31, default: 1, help: 'first seed' },
    {
      name: 'strategy',
      kind: 'choice',
      choices: ['all', ...STRATEGIES.map((s) => s.jitter)],
      default: 'all',
      help: 'which jitter to simulate',
    },
  ],
  run(params: ScenarioParams, context) {
    const clients = num(params, 'clients');
    const latencyMs = num(params, 'latency-ms');
    const seeds = num(params, 'seeds');
    const first = num(params, 'seed');
    const which = str(params, 'strategy');
    const chosen = STRATEGIES.filter((s) => which === 'all' || s.jitter === which);
    const rows = chosen.map((s, i) => {
      const runs = Array.from({ length: seeds }, (_, k) => contend(clients, latencyMs, s.jitter, first + k));
      context.onProgress?.(i + 1, chosen.length);
      return { name: s.name, calls: spread(runs.map((r) => r.calls)), doneMs: spread(runs.map((r) => r.doneMs)) };
    });
    const fmt = (x: { min: number; median: number; max: number }, unit = '') => `${x.median}${unit} (${x.min}–${x.max})`;
    return {
      json: { scenario: 'occ-contention', parameters: { clients, latencyMs, seeds, seed: first }, strategies: rows },
      report: {
        title: `Optimistic-concurrency contention: ${clients} clients, one record`,
        notes: ['Every strategy sees the same network draws (their own random stream per seed).'],
        parameters: [
          ['clients', String(clients)],
          ['latency', `exponential, mean ${latencyMs} ms`],
          ['seeds', `${seeds} from ${first}`],
        ],
        tables: [
          {
            title: 'Work and completion, median (min–max) over seeds',
            table: {
              columns: ['strategy', 'calls', 'last commit'],
              rows: rows.map((r) => [
                r.name,
                fmt(r.calls),
                fmt(
                  {
                    ...r.doneMs,
                    median: Math.round(r.doneMs.median),
                    min: Math.round(r.doneMs.min),
                    max: Math.round(r.doneMs.max),
                  },
                  ' ms',
                ),
              ]),
              align: ['left', 'right', 'right'],
            },
          },
        ],
        charts: [],
      },
    };
  },
};

export default scenario;
