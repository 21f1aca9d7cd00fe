import {
  type BudgetLedger,
  bookSlot,
  closedBreaker,
  emptyPace,
  type PaceLedger,
  syncBreaker,
  syncBudget,
  syncPace,
} from '../../src/store/fleet-ledger.js';
import { FleetLink, type FleetLinkOptions } from '../../src/store/fleet-link.js';
import {
  BREAKER_OPEN,
  type BreakerRecord,
  type BreakerSyncRequest,
  type BudgetSyncReply,
  type BudgetSyncRequest,
  type FleetScope,
  type FleetStore,
  type PaceBookReply,
  type PaceBookRequest,
  type PaceSyncReply,
  type PaceSyncRequest,
  type StoreAvailability,
} from '../../src/store/fleet-store.js';
import type { Clock } from '../../src/time/clock.js';

/**
 * A fleet store inside one process: several downstreams standing for several processes
 * (the simulator, tests) share it. Same arithmetic as Redis (`fleet-ledger.ts`); its clock
 * plays the Redis server's. `setAvailable(false)` makes it answer nothing, like a Redis
 * that is down. State is never expired (a simulation is short).
 */
export class MemoryFleetStore implements FleetStore {
  readonly fleetStore = true as const;
  /** Operations answered. */
  operations = 0;
  /** Breaker operations answered (reads and reports). */
  breakerOperations = 0;
  private up = true;
  private readonly budgets = new Map<string, BudgetLedger>();
  private readonly breakers = new Map<string, BreakerRecord>();
  private readonly paces = new Map<string, PaceLedger>();
  private readonly listeners = new Set<(change: StoreAvailability) => void>();
  private readonly newsListeners = new Set<(scope: FleetScope | undefined) => void>();
  private newsUp: boolean;
  private lateBudgets = 0;

  /** `news: false` makes a store that cannot push breaker news (downstreams then poll it). */
  constructor(
    private readonly clock: Pick<Clock, 'monotonic'>,
    options: { news?: boolean } = {},
  ) {
    this.newsUp = options.news ?? true;
  }

  get newsLive(): boolean {
    return this.up && this.newsUp;
  }

  onBreakerNews(listener: (scope: FleetScope | undefined) => void): () => void {
    this.newsListeners.add(listener);
    return () => this.newsListeners.delete(listener);
  }

  /** Cuts or restores the news (a dropped subscriber connection); listeners hear of a cut. */
  setNews(live: boolean): void {
    if (live === this.newsUp) return;
    this.newsUp = live;
    if (!live) for (const l of this.newsListeners) l(undefined);
  }

  get available(): boolean {
    return this.up;
  }

  /** Takes the store down or brings it back (listeners are told, as with Redis). */
  setAvailable(available: boolean): void {
    if (available === this.up) return;
    this.up = available;
    for (const l of this.listeners) l(available ? { available } : { available, reason: 'taken down' });
  }

  /** Forgets everything, as a Redis restarted without persistence. */
  clear(): void {
    this.budgets.clear();
    this.breakers.clear();
    this.paces.clear();
  }

  /** Links one downstream to this store (`FleetStore.link`). */
  link(options: Omit<FleetLinkOptions, 'store'>): FleetLink {
    return new FleetLink({ ...options, store: this });
  }

  onAvailability(listener: (change: StoreAvailability) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The next `n` budget syncs are run but answered `undefined`, as a Redis store answers a
   * script whose reply came after its `timeoutMs`: the store's state moved, the caller
   * does not know how.
   */
  answerBudgetsLate(n: number): void {
    this.lateBudgets = n;
  }

  budget(scope: FleetScope, r: BudgetSyncRequest): Promise<BudgetSyncReply | undefined> {
    const reply = this.answer(() => {
      const id = `${scope.downstream}\0${scope.key}`;
      let ledger = this.budgets.get(id);
      if (ledger === undefined) this.budgets.set(id, (ledger = { buckets: new Map() }));
      return syncBudget(ledger, this.clock.monotonic(), r);
    });
    if (this.lateBudgets === 0 || !this.up) return reply;
    this.lateBudgets--;
    return reply.then(() => undefined);
  }

  breaker(scope: FleetScope, r: BreakerSyncRequest): Promise<BreakerRecord | undefined> {
    return this.answer(() => {
      this.breakerOperations++;
      const id = `${scope.downstream}\0${scope.key}`;
      const before = this.breakers.get(id) ?? closedBreaker();
      const rec = syncBreaker(before, this.clock.monotonic(), r);
      this.breakers.set(id, rec);
      if (this.newsUp && r.report === 'open' && rec.state === BREAKER_OPEN && rec.generation !== before.generation) {
        // Published now, heard after this answer (as Redis delivers a script's PUBLISH).
        queueMicrotask(() => {
          for (const l of this.newsListeners) l(scope);
        });
      }
      return rec;
    });
  }

  bookSlot(scope: FleetScope, r: PaceBookRequest): Promise<PaceBookReply | undefined> {
    return this.answer(() => bookSlot(this.pace_(scope), this.clock.monotonic(), r));
  }

  pace(scope: FleetScope, r: PaceSyncRequest): Promise<PaceSyncReply | undefined> {
    return this.answer(() => syncPace(this.pace_(scope), this.clock.monotonic(), r));
  }

  /** The fleet's pacing queue for `scope`, as the store holds it (for tests to read). */
  paceLedger(scope: FleetScope): Readonly<PaceLedger> {
    return this.pace_(scope);
  }

  private pace_(scope: FleetScope): PaceLedger {
    const id = `${scope.downstream}\0${scope.key}`;
    let p = this.paces.get(id);
    if (p === undefined) this.paces.set(id, (p = emptyPace()));
    return p;
  }

  private answer<T>(op: () => T): Promise<T | undefined> {
    if (!this.up) return Promise.resolve(undefined);
    this.operations++;
    return Promise.resolve(op());
  }
}
