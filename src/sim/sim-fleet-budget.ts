import type { LineWaiter, VirtualLine } from '../orchestration/stage.js';
import type { BudgetLedger, RetryClaim } from '../orchestration/stages/budget-stage.js';
import { BudgetLease } from '../policies/fleet-budget.js';
import { RETRY_BUDGET_DEFAULTS } from '../policies/retry-budget.js';
import { type BudgetLedger as StoreBudgets, syncBudget } from '../store/fleet-ledger.js';
import { FLEET_BUDGET_CREDIT, FLEET_SYNC_MS } from '../store/fleet-link.js';
import type { Simulation } from './engine.js';

/** Most tokens a process leases at once (`FleetBudgets`' cap). */
const MAX_LEASE = 50;

/** A claimed retry on virtual time: decided when the store's answer arrives. */
class SimClaim implements RetryClaim, VirtualLine {
  granted: boolean | undefined = undefined;
  private waiter: LineWaiter | undefined;

  constructor(private readonly sim: Simulation) {}

  get settled(): VirtualLine {
    return this;
  }

  join(waiter: LineWaiter): undefined {
    // Never told from inside `join`: an event, even when already decided.
    if (this.granted !== undefined) this.tell(waiter, this.granted);
    else this.waiter = waiter;
    return undefined;
  }

  decide(granted: boolean): void {
    this.granted = granted;
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter !== undefined) this.tell(waiter, granted);
  }

  private tell(waiter: LineWaiter, granted: boolean): void {
    this.sim.schedule(0, (_: undefined, at) => waiter.granted(at, granted), undefined);
  }
}

/**
 * A fleet retry budget on virtual time: the store's ledger (the arithmetic its Lua script runs,
 * with the default ratio, reserve and window) and, for each process, what `FleetBudgets` does
 * — deposits batched and tokens leased through a `BudgetLease`, synced every `FLEET_SYNC_MS`
 * and at once when a process runs dry, and a retry with no token claimed and decided by the
 * store before its attempt. A sync's request is built when sent, applied to the ledger half a
 * round trip later (the ledger's clock is the store's) and its reply applied a round trip
 * after sending — leases, deposits and claims are as stale as on a network.
 */
export class SimFleetBudget {
  readonly ledger: StoreBudgets = { buckets: new Map() };
  private readonly shape = {
    bucketMs: RETRY_BUDGET_DEFAULTS.windowMs / RETRY_BUDGET_DEFAULTS.buckets,
    windowBuckets: RETRY_BUDGET_DEFAULTS.buckets,
    ratio: RETRY_BUDGET_DEFAULTS.ratio,
    reserve: (RETRY_BUDGET_DEFAULTS.reservePerSecond * RETRY_BUDGET_DEFAULTS.windowMs) / 1000,
  };
  private running = true;

  constructor(
    private readonly sim: Simulation,
    private readonly storeRttMs: number,
  ) {}

  /** Ends the background syncs (the run is over). */
  stop(): void {
    this.running = false;
  }

  /** Process `owner`'s budget ledger, for its downstream's budget stage. */
  process(owner: string, phaseMs: number): BudgetLedger {
    const sim = this.sim;
    const half = this.storeRttMs / 2;
    const lease = new BudgetLease({
      leaseMs: Math.min(this.shape.bucketMs, 1_000),
      maxLease: MAX_LEASE,
      borrow: FLEET_BUDGET_CREDIT,
    });
    /** Claims not yet decided, oldest first. */
    const claims: SimClaim[] = [];
    let syncing = false;
    const startSync = (now: number) => {
      if (syncing) return;
      syncing = true;
      const request = lease.syncRequest(now, { owner, ...this.shape });
      sim.schedule(
        half,
        (_: undefined, atStore) => {
          const reply = syncBudget(this.ledger, atStore, request);
          sim.schedule(
            half,
            (__: undefined, back) => {
              syncing = false;
              const answer = lease.applyReply(back, reply);
              const decided = claims.splice(0, answer.granted + answer.refused);
              for (let i = 0; i < decided.length; i++) decided[i]!.decide(i < answer.granted);
              if (lease.claims > 0) startSync(back);
            },
            undefined,
          );
        },
        undefined,
      );
    };
    const tick = (now: number) => {
      if (lease.wantsSync(now)) startSync(now);
      if (this.running) sim.schedule(FLEET_SYNC_MS, (_: undefined, at) => tick(at), undefined);
    };
    sim.scheduleAt(phaseMs, (_: undefined, at) => tick(at), undefined);
    const take = (now: number) => {
      if (!lease.take(now)) return false;
      if (lease.tokens(now) === 0) startSync(now);
      return true;
    };
    let first = true;
    return {
      recordRequest: (_key, now) => {
        lease.recordRequest();
        // A new key leases its first tokens at once rather than after a sync period.
        if (first) {
          first = false;
          startSync(now);
        }
      },
      tryRetry: (_key, now) => take(now),
      recordOutcome: () => {},
      claimRetry: (_key, now) => {
        if (take(now)) return true;
        lease.claim();
        const claim = new SimClaim(sim);
        claims.push(claim);
        startSync(now);
        return claim;
      },
    };
  }
}
