import type { LineWaiter, VirtualLine } from '../orchestration/stage.js';
import type { BudgetLedger, RetryClaim } from '../orchestration/stages/budget-stage.js';
import { BudgetLease } from '../policies/fleet-budget.js';
import { RETRY_BUDGET_DEFAULTS } from '../policies/retry-budget.js';
import { type BudgetLedger as StoreBudgets, syncBudget } from '../store/fleet-ledger.js';
import { FLEET_BUDGET_CREDIT, FLEET_SYNC_MS } from '../store/fleet-link.js';
import type { BudgetSyncReply, BudgetSyncRequest } from '../store/fleet-store.js';
import type { Simulation } from './engine.js';
import { SimulatedStore } from './simulated-store.js';

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
export class SimFleetBudget extends SimulatedStore {
  private readonly ledger: StoreBudgets = { buckets: new Map() };
  private readonly shape = {
    bucketMs: RETRY_BUDGET_DEFAULTS.windowMs / RETRY_BUDGET_DEFAULTS.buckets,
    windowBuckets: RETRY_BUDGET_DEFAULTS.buckets,
    ratio: RETRY_BUDGET_DEFAULTS.ratio,
    reserve: (RETRY_BUDGET_DEFAULTS.reservePerSecond * RETRY_BUDGET_DEFAULTS.windowMs) / 1000,
  };

  /** Process `owner`'s budget ledger, for its downstream's budget stage. */
  process(owner: string, phaseMs: number): BudgetLedger {
    return new SimBudgetProcess(this.sim, this, owner, phaseMs);
  }

  /** The store's side of one sync, applied when the request arrives (store time). */
  apply(atStore: number, request: BudgetSyncRequest): BudgetSyncReply {
    return syncBudget(this.ledger, atStore, request);
  }

  /** Half the round trip to the store, ms. */
  get halfRttMs(): number {
    return this.storeRttMs / 2;
  }

  /** The budget's shape, as every process sends it. */
  get budgetShape(): typeof this.shape {
    return this.shape;
  }
}

/** One process's side of the fleet budget: what `FleetBudgets` does for one key. */
class SimBudgetProcess implements BudgetLedger {
  private readonly lease = new BudgetLease({
    leaseMs: Math.min(RETRY_BUDGET_DEFAULTS.windowMs / RETRY_BUDGET_DEFAULTS.buckets, 1_000),
    maxLease: MAX_LEASE,
    borrow: FLEET_BUDGET_CREDIT,
  });
  /** Claims not yet decided, oldest first. */
  private readonly claims: SimClaim[] = [];
  private syncing = false;
  private first = true;

  constructor(
    private readonly sim: Simulation,
    private readonly fleet: SimFleetBudget,
    private readonly owner: string,
    phaseMs: number,
  ) {
    sim.scheduleAt(phaseMs, (_: undefined, at) => this.tick(at), undefined);
  }

  recordRequest(_key: string, nowMs: number): void {
    this.lease.recordRequest();
    // A new key leases its first tokens at once rather than after a sync period.
    if (this.first) {
      this.first = false;
      this.startSync(nowMs);
    }
  }

  tryRetry(_key: string, nowMs: number): boolean {
    return this.take(nowMs);
  }

  recordOutcome(): void {}

  claimRetry(_key: string, nowMs: number): boolean | RetryClaim {
    if (this.take(nowMs)) return true;
    // Refused by the fleet with no room shown since: refused here, unasked.
    if (this.lease.exhausted) return false;
    this.lease.claim();
    const claim = new SimClaim(this.sim);
    this.claims.push(claim);
    this.startSync(nowMs);
    return claim;
  }

  private take(nowMs: number): boolean {
    if (!this.lease.take(nowMs)) return false;
    // Running dry: top up now rather than at the next period.
    if (this.lease.tokens(nowMs) === 0) this.startSync(nowMs);
    return true;
  }

  private tick(nowMs: number): void {
    if (this.lease.wantsSync(nowMs)) this.startSync(nowMs);
    if (this.fleet.active) this.sim.schedule(FLEET_SYNC_MS, (_: undefined, at) => this.tick(at), undefined);
  }

  /** Request built now, applied by the store half a round trip later, answered a round trip after sending. */
  private startSync(nowMs: number): void {
    if (this.syncing) return;
    this.syncing = true;
    const request = this.lease.syncRequest(nowMs, { owner: this.owner, ...this.fleet.budgetShape });
    const half = this.fleet.halfRttMs;
    this.sim.schedule(
      half,
      (_: undefined, atStore) => {
        const reply = this.fleet.apply(atStore, request);
        this.sim.schedule(half, (__: undefined, back) => this.replied(back, reply), undefined);
      },
      undefined,
    );
  }

  private replied(nowMs: number, reply: BudgetSyncReply): void {
    this.syncing = false;
    const answer = this.lease.applyReply(nowMs, reply);
    const decided = this.claims.splice(0, answer.granted + answer.refused);
    for (let i = 0; i < decided.length; i++) decided[i]!.decide(i < answer.granted);
    // Claims made while this sync was under way are asked for at once.
    if (this.lease.claims > 0) this.startSync(nowMs);
  }
}
