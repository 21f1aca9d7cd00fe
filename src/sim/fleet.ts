import type { Classification } from '../classify/outcome.js';
import { BudgetLease } from '../policies/fleet-budget.js';
import { PACER_DEFAULTS, Pacer } from '../policies/pacer.js';
import { RETRY_BUDGET_DEFAULTS, RetryBudget } from '../policies/retry-budget.js';
import { type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import { type BudgetLedger, bookSlot, emptyPace, syncBudget, syncPace } from '../store/fleet-ledger.js';
import { FLEET_BUDGET_CREDIT, FLEET_SYNC_MS } from '../store/fleet-link.js';
import type { BudgetSyncReply, BudgetSyncRequest } from '../store/fleet-store.js';
import { Dependency } from './dependency.js';
import { Simulation } from './engine.js';
import type { HerdClients, HerdStrategy } from './herd-run.js';
import { REJECTED } from './herd-run.js';
import { GIVE_UP, RetryState } from './retry-state.js';
import { SteadyArrivals } from './steady-arrivals.js';

/**
 * Fleets in the simulator: P processes, each with its own policies (the same `Pacer`,
 * `RetryBudget` and `BudgetLease` as the runtime), either on their own or sharing state
 * through the fleet ledger (`fleet-ledger.ts`, the arithmetic the Redis scripts run). What
 * is modelled is *when* each process talks to the store and how stale its answers are:
 * budgets and pacer flags sync every `FLEET_SYNC_MS`, as `FleetLink` does; every answer
 * arrives a store round trip (`storeRttMs`) after the question; a paced retry books its slot
 * when it is decided, as a real one does before its wait. The store is always up here (its
 * outages are tested against a real redis-server).
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
export function fleetPacingStrategy(processes: number, shared: boolean, storeRttMs = 1): HerdStrategy {
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
      const fleetPacing = (p: number, now: number) => pacers[p]!.throttling(now) || now < activeUntil[p]!;
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
            // The process learns the flag a round trip after asking.
            flags[p] = reply.activeUntil;
            sim.after(storeRttMs, learn, p);
          }
          if (finished < setup.clients) sim.after(FLEET_SYNC_MS, sync, p);
        });
        const flags = new Float64Array(processes);
        const learn = sim.on((p) => {
          activeUntil[p] = flags[p]!;
        });
        // Processes start their sync loops at different phases, as real ones do.
        for (let p = 0; p < processes; p++) sim.at((p * FLEET_SYNC_MS) / processes, sync, p);
      }
      // As the pacing stage does: a paced retry holds a ticket in its process's pacer and asks
      // again whenever its wait ends (slots move as the pacer learns). With `shared`, a retry
      // books a fixed slot in the fleet's queue — at once when its pacer has found a rate, or
      // when its probe ticket falls due while the pacer searches (probe slots move, fleet
      // slots cannot; the fleet's queue spaces the processes' probes at their summed rate).
      const ticketOf = new Float64Array(setup.clients);
      const paced = new Uint8Array(setup.clients);
      const send = (client: number, now: number) => {
        sentAt[client] = now;
        wire.send(client, state.attempt(client, now), now);
      };
      const sendPaced = sim.on((client, now) => {
        paced[client] = 1;
        send(client, now);
      });
      const hold = sim.on((client, now) => {
        const more = pacers[client % processes]!.holdFor(ticketOf[client]!, now);
        if (more > 0) sim.after(more, hold, client);
        else if (shared && fleetPacing(client % processes, now)) bookShared(client, now);
        else {
          paced[client] = 1;
          send(client, now);
        }
      });
      const book = sim.on((client, now) => {
        const p = client % processes;
        const pacer = pacers[p]!;
        paced[client] = 0;
        if (shared && !pacer.searching && fleetPacing(p, now)) {
          bookShared(client, now);
          return;
        }
        const wait = pacer.reserve(now);
        const ticket = pacer.lastTicket;
        if (ticket === 0) send(client, now);
        else {
          ticketOf[client] = ticket;
          sim.after(wait, hold, client);
        }
      });
      function bookShared(client: number, now: number): void {
        const p = client % processes;
        const reply = bookSlot(ledger, now, {
          owner: owner(p),
          rate: rateOf(p, now),
          contributionMs: quietMs,
          minRate,
          ttlMs: 60_000,
        });
        pacers[p]!.followQueue(reply.slot + 1 / reply.rate);
        // The slot is booked at once in this model, but known only a round trip later.
        sim.after(Math.max(storeRttMs, reply.slot - now), sendPaced, client);
      }
      return {
        start: send,
        served(client, now) {
          finished++;
          pacers[client % processes]!.onResult(now, 'ok', undefined, sentAt[client], paced[client] === 1);
        },
        rejected(client, now) {
          const pacer = pacers[client % processes]!;
          pacer.onResult(now, 'rejected', undefined, sentAt[client], paced[client] === 1);
          if (state.next(client, REJECTED, now) === GIVE_UP) {
            finished++;
            wire.gaveUp(client, now);
            return;
          }
          // Yield first: every answer arriving now is reported before any of these retries books.
          sim.after(0, book, client);
        },
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

/** A claimed retry's state in the simulator (see `BudgetLease.claim`). */
const NO_CLAIM = 0;
const CLAIM_PENDING = 1;
const CLAIM_GRANTED = 2;
const CLAIM_REFUSED = 3;

/**
 * P processes, each sending `ratePerSecond` first attempts to a callee that fails them all,
 * each call retried up to `maxAttempts` with the default budget (ratio 0.2, reserve 10/s):
 * one `RetryBudget` per process, or one fleet budget shared through `BudgetLease`s synced
 * every `FLEET_SYNC_MS`, as `FleetBudgets` does: a process that runs dry syncs at once, and
 * a retry with no token is claimed and decided by the store before its attempt.
 *
 * The store is `storeRttMs` away: a sync's request is built when sent, applied to the
 * ledger half a round trip later (the ledger's clock is the store's), and its reply applied
 * a round trip after sending — so leases, deposits and claims are as stale as on a network.
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
  const policy = new RetryPolicy({ maxAttempts: setup.maxAttempts ?? 3, backoff: { baseMs: 50, capMs: 1_000 } });
  const P = setup.processes;
  const rtt = setup.storeRttMs ?? 1;
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
  const claimOf = new Uint8Array(expected);
  /** Per process, its claimed calls in the order claimed (decided oldest first). */
  const claimQueues = Array.from({ length: P }, () => [] as number[]);
  const syncing = new Uint8Array(P);
  let requests = 0;
  let attempts = 0;
  let refused = 0;
  const replies: Array<BudgetSyncReply | undefined> = new Array(P);
  const syncArrives = sim.on((p, now) => {
    replies[p] = syncBudget(ledger, now, pendingRequests[p] as BudgetSyncRequest);
    sim.after(rtt / 2, syncReturns, p);
  });
  const pendingRequests: Array<BudgetSyncRequest | undefined> = new Array(P);
  const syncReturns = sim.on((p, now) => {
    syncing[p] = 0;
    const lease = leases[p]!;
    const answer = lease.applyReply(now, replies[p] as BudgetSyncReply);
    const queue = claimQueues[p]!;
    const decided = queue.splice(0, answer.granted + answer.refused);
    for (let i = 0; i < decided.length; i++) {
      claimOf[decided[i]!] = i < answer.granted ? CLAIM_GRANTED : CLAIM_REFUSED;
      if (i >= answer.granted) refused++;
    }
    if (lease.claims > 0) startSync(p, now);
  });
  const startSync = (p: number, now: number) => {
    if (syncing[p] === 1) return;
    syncing[p] = 1;
    pendingRequests[p] = leases[p]!.syncRequest(now, { owner: String(p), ...shape });
    sim.after(rtt / 2, syncArrives, p);
  };

  const answered = sim.on((call, now) => {
    const p = processOf[call]!;
    const admit = () => {
      if (!setup.shared) {
        if (local[p]!.tryRetry(now)) return undefined;
        refused++;
        return 'budget' as const;
      }
      const lease = leases[p]!;
      if (lease.take(now)) {
        if (lease.tokens(now) === 0) startSync(p, now);
        return undefined;
      }
      // No token: claimed, decided by the store before the retry's attempt.
      lease.claim();
      claimOf[call] = CLAIM_PENDING;
      claimQueues[p]!.push(call);
      startSync(p, now);
      return undefined;
    };
    const delay = state.next(call, UNAVAILABLE, now, admit);
    if (delay !== GIVE_UP) sim.after(delay, attempt, call);
  });
  const attempt = sim.on((call, now) => {
    const claim = claimOf[call]!;
    if (claim === CLAIM_PENDING) {
      // The store's answer is still on its way: the attempt waits for it.
      sim.after(rtt, attempt, call);
      return;
    }
    claimOf[call] = NO_CLAIM;
    if (claim === CLAIM_REFUSED) return;
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
      if (leases[p]!.wantsSync(now)) startSync(p, now);
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
  return { processes: P, shared: setup.shared, requests, attempts, amplification: attempts / requests, refused };
}
