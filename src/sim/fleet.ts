import type { Classification } from '../classify/outcome.js';
import { BudgetLease } from '../policies/fleet-budget.js';
import { PACER_DEFAULTS, Pacer } from '../policies/pacer.js';
import { RETRY_BUDGET_DEFAULTS, RetryBudget } from '../policies/retry-budget.js';
import { type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import { type BudgetLedger, bookSlot, emptyPace, syncBudget, syncPace } from '../store/fleet-ledger.js';
import { FLEET_BUDGET_CREDIT, FLEET_SYNC_MS } from '../store/fleet-link.js';
import { Dependency } from './dependency.js';
import { Simulation } from './engine.js';
import type { HerdClients, HerdStrategy } from './herd-run.js';
import { delayedClients, REJECTED } from './herd-run.js';
import { GIVE_UP, RetryState } from './retry-state.js';
import { SteadyArrivals } from './steady-arrivals.js';

/**
 * Fleets in the simulator: P processes, each with its own policies (the same `Pacer`,
 * `RetryBudget` and `BudgetLease` as the runtime), either on their own or sharing state
 * through the fleet ledger (`fleet-ledger.ts`, the arithmetic the Redis scripts run). The
 * store is modelled as instantaneous and always up; what is modelled is *when* each process
 * talks to it: budgets and pacer flags sync every `FLEET_SYNC_MS`, as `FleetLink` does, and
 * a paced retry books its slot when it is decided, as a real one does before its wait.
 */

/** Retry until success; when is the pacer's business (as in the one-process adaptive strategy). */
const ADAPTIVE_RETRY: RetryOptions = {
  maxAttempts: Number.POSITIVE_INFINITY,
  maxElapsedMs: 3_600_000,
  backoff: { shape: 'constant', baseMs: 0, jitter: 'none' },
};

/**
 * The herd's clients split over `processes` processes (client i in process i mod P), each
 * with its own `Pacer`; with `shared`, paced retries book their slots in the fleet's queue.
 */
export function fleetPacingStrategy(processes: number, shared: boolean): HerdStrategy {
  const policy = new RetryPolicy(ADAPTIVE_RETRY);
  return {
    name: shared ? `fleet-shared-${processes}` : `fleet-local-${processes}`,
    description: shared
      ? `${processes} processes, each with a kindly Pacer, booking slots in one shared queue at the sum of their learned rates`
      : `${processes} processes, each with its own kindly Pacer`,
    random: false,
    create(sim, setup, wire): HerdClients {
      const pacers = Array.from({ length: processes }, () => new Pacer());
      const activeUntil = new Float64Array(processes).fill(Number.NEGATIVE_INFINITY);
      const state = new RetryState(policy, sim.random, setup.clients);
      const sentAt = new Float64Array(setup.clients);
      const ledger = emptyPace();
      const quietMs = PACER_DEFAULTS.quietMs;
      const minRate = 1 / PACER_DEFAULTS.maxSpacingMs;
      const owner = (p: number) => String(p);
      let finished = 0;
      const rateOf = (p: number, now: number) => (pacers[p]!.throttling(now) ? (pacers[p]!.rate(now) ?? 0) / 1000 : 0);
      if (shared) {
        // FleetLink's background sync: each throttled process refreshes its contribution and
        // the fleet's throttling flag; the others learn the flag.
        const sync = sim.on((p, now) => {
          const active = pacers[p]!.throttling(now);
          if (active || now < activeUntil[p]!) {
            const reply = syncPace(ledger, now, {
              owner: owner(p),
              rate: rateOf(p, now),
              contributionMs: quietMs,
              active,
              quietMs,
              hintMs: 0,
              ttlMs: 60_000,
            });
            activeUntil[p] = reply.activeUntil;
          }
          if (finished < setup.clients) sim.after(FLEET_SYNC_MS, sync, p);
        });
        // Processes start their sync loops at different phases, as real ones do.
        for (let p = 0; p < processes; p++) sim.at((p * FLEET_SYNC_MS) / processes, sync, p);
      }
      return delayedClients(sim, wire, {
        send(client, now) {
          sentAt[client] = now;
          return state.attempt(client, now);
        },
        served(client, now) {
          finished++;
          pacers[client % processes]!.onResult(now, 'ok', undefined, sentAt[client]);
        },
        rejected(client, now) {
          const p = client % processes;
          const pacer = pacers[p]!;
          pacer.onResult(now, 'rejected', undefined, sentAt[client]);
          if (state.next(client, REJECTED, now) === GIVE_UP) {
            finished++;
            return GIVE_UP;
          }
          if (!shared) return pacer.reserve(now);
          if (!pacer.throttling(now) && now >= activeUntil[p]!) return 0;
          const reply = bookSlot(ledger, now, {
            owner: owner(p),
            rate: rateOf(p, now),
            contributionMs: quietMs,
            minRate,
            ttlMs: 60_000,
          });
          return Math.max(0, reply.slot - now);
        },
      });
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
}

/**
 * P processes, each sending `ratePerSecond` first attempts to a callee that fails them all,
 * each call retried up to `maxAttempts` with the default budget (ratio 0.2, reserve 10/s):
 * one `RetryBudget` per process, or one fleet budget shared through `BudgetLease`s synced
 * every `FLEET_SYNC_MS`.
 */
export function runFleetBudget(setup: {
  processes: number;
  ratePerSecond: number;
  durationMs: number;
  shared: boolean;
  seed: number;
  maxAttempts?: number;
}): FleetBudgetRun {
  const sim = new Simulation({ seed: setup.seed });
  const policy = new RetryPolicy({ maxAttempts: setup.maxAttempts ?? 3, backoff: { baseMs: 50, capMs: 1_000 } });
  const P = setup.processes;
  const callee = new Dependency({ refuseMs: 10, down: [{ fromMs: 0, untilMs: Number.POSITIVE_INFINITY }] });
  const d = RETRY_BUDGET_DEFAULTS;
  const local = Array.from({ length: P }, () => new RetryBudget());
  const ledger: BudgetLedger = { buckets: new Map() };
  const shape = {
    bucketMs: d.windowMs / d.buckets,
    windowBuckets: d.buckets,
    ratio: d.ratio,
    reserve: (d.reservePerSecond * d.windowMs) / 1000,
  };
  const leases = Array.from(
    { length: P },
    () => new BudgetLease({ leaseMs: Math.min(shape.bucketMs, 1_000), maxLease: 50, borrow: FLEET_BUDGET_CREDIT }),
  );
  const expected = Math.ceil((setup.ratePerSecond * setup.durationMs) / 1000) * P + 16;
  const state = new RetryState(policy, sim.random, expected);
  const processOf = new Int32Array(expected);
  let requests = 0;
  let attempts = 0;
  const syncLease = (p: number, now: number) => {
    const lease = leases[p]!;
    lease.applyReply(now, syncBudget(ledger, now, lease.syncRequest(now, { owner: String(p), ...shape })));
    if (lease.wantsTopUp(now))
      lease.applyReply(now, syncBudget(ledger, now, lease.syncRequest(now, { owner: String(p), ...shape })));
  };

  const answered = sim.on((call, now) => {
    const p = processOf[call]!;
    const admit = () => {
      if (!setup.shared) return local[p]!.tryRetry(now) ? undefined : ('budget' as const);
      const lease = leases[p]!;
      const ok = lease.take(now);
      // Running dry syncs at once, as `FleetBudgets.tryRetry` does (the store answers instantly here).
      if (!ok || lease.tokens(now) === 0) syncLease(p, now);
      return ok ? undefined : ('budget' as const);
    };
    const delay = state.next(call, UNAVAILABLE, now, admit);
    if (delay !== GIVE_UP) sim.after(delay, attempt, call);
  });
  const attempt = sim.on((call, now) => {
    attempts++;
    if (state.attempt(call, now) === 1) {
      requests++;
      const p = processOf[call]!;
      if (setup.shared) leases[p]!.recordRequest();
      else local[p]!.recordRequest(now);
    }
    sim.after(callee.answerDelay(callee.call(now), Number.POSITIVE_INFINITY), answered, call);
  });
  if (setup.shared) {
    const sync = sim.on((p, now) => {
      syncLease(p, now);
      if (now < setup.durationMs) sim.after(FLEET_SYNC_MS, sync, p);
    });
    for (let p = 0; p < P; p++) sim.at((p * FLEET_SYNC_MS) / P, sync, p);
  }
  // Process p's arrivals are calls p, p + P, p + 2P, …: interleaved ids, one steady stream each.
  for (let p = 0; p < P; p++) {
    const arrivals = new SteadyArrivals(
      sim,
      { ratePerSecond: setup.ratePerSecond, durationMs: setup.durationMs, startMs: p / P },
      (i, now) => {
        const call = i * P + p;
        processOf[call] = p;
        sim.at(now, attempt, call);
      },
    );
    arrivals.start();
  }
  sim.run();
  return { processes: P, shared: setup.shared, requests, attempts, amplification: attempts / requests };
}
