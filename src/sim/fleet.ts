import type { Classification } from '../classify/outcome.js';
import type { RetryOptions } from '../policies/retry-decision.js';
import { FLEET_SYNC_MS } from '../store/fleet-link.js';
import { Dependency } from './dependency.js';
import { Simulation } from './engine.js';
import type { HerdClients, HerdStrategy } from './herd-run.js';
import { REJECTED } from './herd-run.js';
import { SimDownstream } from './sim-downstream.js';
import { SimFleetBudget } from './sim-fleet-budget.js';
import { SimFleetPacing } from './sim-fleet-pacing.js';
import { SteadyArrivals } from './steady-arrivals.js';

/**
 * Fleets in the simulator: P processes, each a `SimDownstream` — the orchestration
 * `downstream()` runs, with the same `Pacer`, retry budget and stages — either on their own or
 * sharing state through the fleet ledger (`fleet-ledger.ts`, the arithmetic the Redis scripts
 * run), linked as `FleetLink` and `FleetBudgets` link a process (`SimFleetPacing`,
 * `SimFleetBudget`): what is modelled is *when* each process talks to the store and how stale
 * its answers are — background syncs every `FLEET_SYNC_MS`, every answer a store round trip
 * (`storeRttMs`) after the question. The store is always up here (its outages are tested
 * against a real redis-server).
 */

/** Retry until success; when is the pacer's business (as in the one-process adaptive strategy). */
const ADAPTIVE_RETRY: RetryOptions = {
  maxAttempts: Number.POSITIVE_INFINITY,
  maxElapsedMs: 3_600_000,
  backoff: { shape: 'constant', baseMs: 0, jitter: 'none' },
};

/**
 * The herd's clients split over `processes` processes (client i in process i mod P), each a
 * `SimDownstream` with `pacing` (no retry budget); with `shared`, paced attempts book their
 * slots in the fleet's queue through the process's link, as `FleetLink` books them.
 */
export function fleetPacingStrategy(
  processes: number,
  shared: boolean,
  storeRttMs = 1,
  retry: RetryOptions = ADAPTIVE_RETRY,
): HerdStrategy {
  return {
    name: shared ? `fleet-shared-${processes}` : `fleet-local-${processes}`,
    description: shared
      ? `${processes} processes, each with a kindly Pacer, booking slots in one shared queue at the sum of their learned rates`
      : `${processes} processes, each with its own kindly Pacer`,
    random: false,
    create(sim, setup, wire): HerdClients {
      const fleet = shared ? new SimFleetPacing(sim, storeRttMs) : undefined;
      let finished = 0;
      const apis = Array.from(
        { length: processes },
        (_, p) =>
          new SimDownstream(
            sim,
            `process-${p}`,
            { retry, attemptTimeoutMs: false, budget: false, pacing: {} },
            { send: (client, attempt, now) => wire.send(client, attempt, now) },
            (end) => {
              if (++finished === setup.clients) fleet?.stop();
              if (!end.ok) wire.gaveUp(end.call, end.atMs);
            },
            fleet === undefined
              ? undefined
              : { booker: (pacer) => fleet.link(String(p), pacer, (p * FLEET_SYNC_MS) / processes) },
          ),
      );
      return {
        start: (client, now) => apis[client % processes]!.start(client, now),
        served: (client, now) => apis[client % processes]!.answer(client, now, undefined),
        rejected: (client, now) => apis[client % processes]!.answer(client, now, REJECTED),
      };
    },
  };
}

/** The callee's answer during the outage: 503, retryable. */
const UNAVAILABLE: Readonly<Classification> = Object.freeze({ outcome: 'failed', retryable: true, status: 503 });

export interface FleetBudgetRun {
  processes: number;
  shared: boolean;
  requests: number;
  attempts: number;
  /** attempts / requests over the whole run. */
  amplification: number;
  /** Retries refused by the budget. */
  refused: number;
}

/**
 * P processes, each sending `ratePerSecond` first attempts to a callee that fails them all,
 * each call retried up to `maxAttempts` with the default budget (ratio 0.2, reserve 10/s):
 * one retry budget per process, or one fleet budget shared through `SimFleetBudget` (leases
 * synced every `FLEET_SYNC_MS`; a process that runs dry syncs at once, and a retry with no
 * token is claimed and decided by the store before its attempt). Each process is a
 * `SimDownstream`: the budget stage decides, as in `downstream()`.
 */
export function runFleetBudget(setup: {
  processes: number;
  ratePerSecond: number;
  durationMs: number;
  shared: boolean;
  seed: number;
  maxAttempts?: number;
  /** Round trip to the store, ms. @default 1 */
  storeRttMs?: number;
}): FleetBudgetRun {
  const sim = new Simulation({ seed: setup.seed });
  const P = setup.processes;
  const callee = new Dependency({ refuseMs: 10, down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] });
  const fleet = setup.shared ? new SimFleetBudget(sim, setup.storeRttMs ?? 1) : undefined;
  const retry: RetryOptions = { maxAttempts: setup.maxAttempts ?? 3, backoff: { baseMs: 50, capMs: 1_000 } };
  let requests = 0;
  let attempts = 0;
  const answered = sim.on((call, now) => apis[call % P]!.answer(call, now, UNAVAILABLE));
  const apis = Array.from(
    { length: P },
    (_, p) =>
      new SimDownstream(
        sim,
        `process-${p}`,
        { retry, attemptTimeoutMs: false, budget: {} },
        {
          send: (call, _attempt, now) => {
            attempts++;
            sim.after(callee.answerDelay(callee.call(now), Number.POSITIVE_INFINITY), answered, call);
          },
        },
        undefined,
        fleet === undefined ? undefined : { budgets: fleet.process(String(p), (p * FLEET_SYNC_MS) / P) },
      ),
  );
  // Process p's arrivals are calls p, p + P, p + 2P, …: interleaved ids, one steady stream each.
  for (let p = 0; p < P; p++) {
    const arrivals = new SteadyArrivals(
      sim,
      { ratePerSecond: setup.ratePerSecond, durationMs: setup.durationMs, startMs: p / P },
      (i, now) => {
        requests++;
        apis[p]!.start(i * P + p, now);
      },
    );
    arrivals.start();
  }
  sim.run(setup.durationMs);
  fleet?.stop();
  sim.run();
  const refused = apis.reduce((sum, api) => sum + api.budgetRejections, 0);
  return { processes: P, shared: setup.shared, requests, attempts, amplification: attempts / requests, refused };
}
