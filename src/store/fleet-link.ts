import type { RetryClaim } from '../orchestration/stages/budget-stage.js';
import type { SharedTicket } from '../orchestration/stages/pacing-stage.js';
import type { BreakerState, CircuitBreaker, CircuitBreakerOptions } from '../policies/circuit-breaker.js';
import { CIRCUIT_BREAKER_DEFAULTS } from '../policies/circuit-breaker.js';
import { BudgetLease, type ClaimsAnswered } from '../policies/fleet-budget.js';
import { PACER_DEFAULTS, type Pacer, type PacerOptions } from '../policies/pacer.js';
import { KeyedRetryBudgets, RETRY_BUDGET_DEFAULTS, type RetryBudgetOptions } from '../policies/retry-budget.js';
import type { Random } from '../random/random.js';
import type { Cancel, Clock } from '../time/clock.js';
import { adoptFleetEstimate, PacedAnswerTally, paceContribution } from './fleet-pace-rate.js';
import {
  BREAKER_CLOSED,
  BREAKER_OPEN,
  type BreakerRecord,
  type FleetScope,
  type FleetStore,
  type PaceBookRequest,
  type StoreAvailability,
} from './fleet-store.js';
import { FleetQueueView, UNSERVABLE_SLOT } from './fleet-ticket.js';

/** How a downstream shares its policies' state through a fleet store. */
export interface FleetLinkOptions {
  store: FleetStore;
  downstream: string;
  clock: Clock;
  random: Random;
  /** The downstream's budget options (`undefined`: no budget). */
  budget: RetryBudgetOptions | undefined;
  breaker: CircuitBreakerOptions | undefined;
  pacing: PacerOptions | undefined;
  maxKeys: number;
  /** Told when the store goes down or comes back. */
  onAvailability: (change: StoreAvailability, atMs: number) => void;
}

/**
 * Background sync period, ms, while anything is happening that the fleet shares: a failure
 * or retry within the last `FLEET_QUIET_SYNC_MS`, a breaker not closed (here or in the
 * fleet), pacing, or a store that cannot push breaker news. Without news, it bounds how long
 * an opened breaker takes to reach the other processes: one period plus about 1.5 round trips
 * (its report, then their next read).
 */
export const FLEET_SYNC_MS = 80;
/**
 * Background sync period, ms, of a calm downstream (every call succeeding, breakers closed,
 * no retry, no pacing) while the store pushes breaker news (`FleetStore.onBreakerNews`): an
 * opened breaker then reaches it as news, in about two round trips, whatever this period.
 * What waits for it is the budget's deposits (first attempts counted into the fleet's window
 * up to this much late: the fleet then grants fewer retry tokens, never more) and the
 * renewal of leases no retry is using. A failure or retry goes back to `FLEET_SYNC_MS` at once.
 */
export const FLEET_QUIET_SYNC_MS = 1_000;
/** A downstream with no call for this long stops syncing until its next call. */
const IDLE_MS = 10_000;
/** Most tokens one process leases at once. */
const MAX_LEASE = 50;
/**
 * Retries one process may make on credit while it holds no token (see `BudgetLease`): the
 * fleet's budget can be overshot by at most P × this.
 */
export const FLEET_BUDGET_CREDIT = 2;
/**
 * After a booking the store did not answer, attempts hold tickets in the local pacer for this
 * long before the shared queue is offered again (one recheck of a held ticket, `RECHECK_MS`):
 * time passes between bookings however fast the store fails.
 */
const BOOK_AGAIN_MS = 40;
/** A probe lease outlives one probe call; an answer later than this cannot close the fleet's breaker. */
const PROBE_LEASE_MS = 10_000;

/** Removes a collected link's listeners from its store (see the `FleetLink` constructor). */
const collected = new FinalizationRegistry<() => void>((gone) => gone());

interface BreakerLink {
  key: string;
  breaker: CircuitBreaker;
  /** The generation last seen (−1: none, e.g. after the store lost its state). */
  generation: number;
  /** Last call through this lane (local ms): only processes still calling take a probe lease. */
  lastCallAt: number;
  /** Whether the fleet's record read closed at the last sync (false until one answered). */
  fleetClosed: boolean;
}

interface PaceLink {
  key: string;
  pacer: Pacer;
  /** Local ms until which the fleet is throttling (from the last sync). */
  activeUntil: number;
  /** Wait hint seen locally and not yet shared: local ms it ends. */
  hintUntil: number;
  /** Where the fleet's queue stands, as this process last heard; the pacer follows it. */
  queue: FleetQueueView;
  /** The pacer's paced answers reported to the fleet so far. */
  tally: PacedAnswerTally;
  /** Local ms before which no booking is offered: the last one went unanswered (`BOOK_AGAIN_MS`). */
  bookAgainAt: number;
}

/**
 * One downstream's link to a fleet store. The calls' hot path keeps using the local
 * policies, synchronously; this link mirrors them into the store in the background, and
 * the store's answers back into them:
 *
 * - **budget**: `budgets` replaces the downstream's `KeyedRetryBudgets` — deposits and
 *   leased tokens (`BudgetLease`) while the store answers, the local budget (always fed)
 *   while it does not;
 * - **breaker**: a local trip is reported at once; every `FLEET_SYNC_MS` the shared record is
 *   read and the local breaker held open, given the probe lease, or released to match;
 * - **pacing**: while anyone in the fleet is throttled, each paced attempt takes a ticket
 *   in the fleet's queue (one script, one round trip, taken while the attempt waits anyway)
 *   and waits for its slot under the latest epoch any reply brought (`FleetQueueView`).
 *
 * Store time is mapped onto the local monotonic clock with the offset measured on the
 * fastest recent round trip: `local = store − offset`, error ≤ half that round trip.
 */
export class FleetLink {
  readonly store: FleetStore;
  readonly owner: string;
  readonly budgets: FleetBudgets | undefined;
  readonly clock: Clock;
  /** The downstream's name: the hash tag of every key. */
  readonly scopeName: string;
  private readonly random: Random;
  private readonly breakerOptions: Required<
    Pick<CircuitBreakerOptions, 'breakMs' | 'breakGrowth' | 'maxBreakMs' | 'breakJitter'>
  >;
  private readonly quietMs: number;
  private readonly minRate: number;
  private readonly breakers = new Map<string, BreakerLink>();
  private readonly paces = new Map<string, PaceLink>();
  private offset = 0;
  private offsetRtt = Number.POSITIVE_INFINITY;
  private synced = false;
  private timer: Cancel | undefined;
  /** Local ms the scheduled sync is due. */
  private timerDueAt = Number.NEGATIVE_INFINITY;
  /** Last failure, retry, trip or throttling seen (local ms): the fast period holds a while after. */
  private troubleAt = Number.NEGATIVE_INFINITY;
  private lastActivity = Number.NEGATIVE_INFINITY;
  private applying = false;
  private readonly unsubscribe: () => void;
  private readonly unsubscribeNews: (() => void) | undefined;
  private readonly onAvailability: FleetLinkOptions['onAvailability'];

  constructor(options: FleetLinkOptions) {
    this.store = options.store;
    this.clock = options.clock;
    this.random = options.random;
    this.scopeName = options.downstream;
    // Ids only need to differ between processes; 52 random bits do.
    this.owner = `${Math.floor(options.random.next() * 2 ** 26).toString(36)}${Math.floor(options.random.next() * 2 ** 26).toString(36)}`;
    const b = options.breaker ?? {};
    const d = CIRCUIT_BREAKER_DEFAULTS;
    this.breakerOptions = {
      breakMs: b.breakMs ?? d.breakMs,
      breakGrowth: b.breakGrowth ?? d.breakGrowth,
      maxBreakMs: b.maxBreakMs ?? d.maxBreakMs,
      breakJitter: b.breakJitter ?? d.breakJitter,
    };
    this.quietMs = options.pacing?.quietMs ?? PACER_DEFAULTS.quietMs;
    this.minRate = 1 / (options.pacing?.maxSpacingMs ?? PACER_DEFAULTS.maxSpacingMs);
    this.budgets = options.budget === undefined ? undefined : new FleetBudgets(this, options.budget, options.maxKeys);
    this.onAvailability = options.onAvailability;
    // The store outlives the downstreams given it, and nothing tells a link its downstream is
    // no longer used: the store's listeners reach this link only weakly, so that a downstream
    // dropped by its owner (a client per tenant, per request) is collected with its link, and
    // its listeners are then removed. (Held strongly, every such downstream stayed for good.)
    const self = new WeakRef<FleetLink>(this);
    const subscriptions: Array<() => void> = [];
    const gone = () => {
      for (const off of subscriptions) off();
    };
    this.unsubscribe = this.store.onAvailability((change) => {
      const link = self.deref();
      if (link === undefined) gone();
      else link.availabilityChanged(change);
    });
    subscriptions.push(this.unsubscribe);
    this.unsubscribeNews = this.store.onBreakerNews?.((scope) => {
      const link = self.deref();
      if (link === undefined) gone();
      else link.heard(scope);
    });
    if (this.unsubscribeNews !== undefined) subscriptions.push(this.unsubscribeNews);
    collected.register(this, gone, this);
  }

  private availabilityChanged(change: StoreAvailability): void {
    this.onAvailability(change, this.clock.monotonic());
    if (change.available) this.resync();
    else this.fellBack();
  }

  /** Stops syncing (the downstream is no longer used). */
  close(): void {
    collected.unregister(this);
    this.unsubscribe();
    this.unsubscribeNews?.();
    this.timer?.();
    this.timer = undefined;
  }

  /** Whether shared state is in force now (the store answers and has answered once). */
  get sharing(): boolean {
    return this.synced && this.store.available;
  }

  /** Store ms → local monotonic ms. */
  toLocal(storeMs: number): number {
    return storeMs - this.offset;
  }

  /** A call went through: keeps the background sync running. */
  touch(nowMs: number): void {
    this.lastActivity = nowMs;
    if (this.timer === undefined) this.schedule(FLEET_SYNC_MS);
  }

  /**
   * A failure, retry, trip, wait hint or throttling: what the fleet shares is moving, so the
   * background sync runs at the fast period from now on, until a quiet period passes without
   * any. A calm sync due later is brought forward to now: the fleet hears of the trouble (and
   * this process of the fleet) sooner than a fast period's phase would have allowed.
   */
  trouble(nowMs: number): void {
    this.troubleAt = nowMs;
    if (this.timer !== undefined && this.timerDueAt > nowMs + FLEET_SYNC_MS) {
      this.timer();
      this.schedule(0);
    }
  }

  /** News from the store: a process opened `scope`'s breaker (`undefined`: news may have been lost). */
  private heard(scope: FleetScope | undefined): void {
    const now = this.clock.monotonic();
    if (scope === undefined) {
      // Nothing to read at once: the fast period reads every breaker in use.
      this.trouble(now);
      return;
    }
    if (scope.downstream !== this.scopeName) return;
    const link = this.breakers.get(scope.key);
    // Open here already: most likely this process's own trip, which it reported itself.
    if (link === undefined || link.breaker.state(now) === 'open') return;
    this.trouble(now);
    void this.syncBreaker(link, 'none');
  }

  // ---- breaker -------------------------------------------------------------------------

  /** Registers a lane's breaker (called when the lane is created). */
  attachBreaker(key: string, breaker: CircuitBreaker): void {
    const link: BreakerLink = {
      key,
      breaker,
      generation: -1,
      lastCallAt: Number.NEGATIVE_INFINITY,
      fleetClosed: false,
    };
    this.breakers.set(key, link);
    if (this.breakers.size > 4 * 1024) this.breakers.delete(this.breakers.keys().next().value as string);
    // Learn the fleet's state at once: a process new to the key may join an open breaker.
    void this.syncBreaker(link, 'none');
  }

  /** A call used `key`'s breaker. */
  breakerUsed(key: string, nowMs: number): void {
    const link = this.breakers.get(key);
    if (link !== undefined) link.lastCallAt = nowMs;
    this.touch(nowMs);
  }

  /** The local breaker of `key` changed state; reports its own decisions (not the fleet's) at once. */
  breakerChanged(key: string, from: BreakerState, to: BreakerState): void {
    if (this.applying) return;
    const link = this.breakers.get(key);
    if (link === undefined) return;
    this.trouble(this.clock.monotonic());
    if (to === 'open' && from !== 'open') void this.syncBreaker(link, 'open');
    else if (to === 'closed' && from === 'half-open') void this.syncBreaker(link, 'close');
  }

  private async syncBreaker(link: BreakerLink, report: 'none' | 'open' | 'close'): Promise<void> {
    if (!this.store.available) return;
    const sentAt = this.clock.monotonic();
    const local = link.breaker.state(sentAt);
    const o = this.breakerOptions;
    const rec = await this.store.breaker(
      { downstream: this.scopeName, key: link.key },
      {
        owner: this.owner,
        generation: link.generation,
        report,
        ...o,
        u: this.random.next(),
        wantProbe: local !== 'closed' && sentAt - link.lastCallAt < IDLE_MS,
        probeLeaseMs: PROBE_LEASE_MS,
        ttlMs: o.maxBreakMs + PROBE_LEASE_MS,
      },
    );
    if (rec === undefined) return;
    this.measured(sentAt, rec.now);
    this.applyBreaker(link, rec);
  }

  private applyBreaker(link: BreakerLink, rec: BreakerRecord): void {
    const now = this.clock.monotonic();
    const breaker = link.breaker;
    if (rec.generation < link.generation) {
      // Generations only grow: the store lost the record (evicted, or restarted empty). What
      // this process knows is news to it again.
      link.generation = -1;
      if (breaker.state(now) === 'open') void this.syncBreaker(link, 'open');
      return;
    }
    link.generation = rec.generation;
    link.fleetClosed = rec.state === BREAKER_CLOSED;
    // How long a hold lasts without news: a few sync periods, so that a process that loses
    // the store finds its own breaker back soon (fail-open to local policies).
    const hold = now + 3 * FLEET_SYNC_MS;
    this.applying = true;
    try {
      if (rec.state === BREAKER_CLOSED) {
        breaker.release(now);
      } else if (rec.state === BREAKER_OPEN) {
        // An end from the store is trusted up to this breaker's own longest break from now:
        // one written far out (by hand, or by a peer with a longer maxBreakMs) held it open
        // for good. Not a number: held as any other shared state, a few periods.
        const until = this.toLocal(rec.openUntil);
        const end = Number.isFinite(until) ? Math.min(until, now + this.breakerOptions.maxBreakMs) : hold;
        breaker.holdOpen(now, Math.max(end, hold));
      } else if (rec.probeOwner === this.owner && this.toLocal(rec.probeUntil) > now) {
        // This process probes for the fleet.
        const state = breaker.state(now);
        if (state === 'open') breaker.endBreak(now);
        else if (state === 'closed') {
          // Closed here already (its own probe succeeded before the lease reached it).
          this.applying = false;
          void this.syncBreaker(link, 'close');
        }
      } else {
        breaker.holdOpen(now, hold);
      }
    } finally {
      this.applying = false;
    }
  }

  // ---- pacing --------------------------------------------------------------------------

  /** Registers a lane's pacer. */
  attachPacer(key: string, pacer: Pacer): void {
    this.paces.set(key, {
      key,
      pacer,
      activeUntil: Number.NEGATIVE_INFINITY,
      hintUntil: Number.NEGATIVE_INFINITY,
      queue: new FleetQueueView((storeMs) => this.toLocal(storeMs), pacer),
      tally: new PacedAnswerTally(),
      bookAgainAt: Number.NEGATIVE_INFINITY,
    });
    if (this.paces.size > 4 * 1024) this.paces.delete(this.paces.keys().next().value as string);
  }

  /** Whether attempts on `key` are paced now: this process is throttled, or the fleet is. */
  throttling(key: string, pacer: Pacer, nowMs: number): boolean {
    if (pacer.throttling(nowMs)) {
      this.trouble(nowMs);
      return true;
    }
    if (!this.sharing) return false;
    const link = this.paces.get(key);
    return link !== undefined && nowMs < link.activeUntil;
  }

  /**
   * A first try on `key` left unpaced: while the fleet paces it takes a slot of the fleet's
   * queue, reported with the next booking or sync.
   */
  unpacedSent(key: string, pacer: Pacer, nowMs: number): void {
    if (!this.sharing || !this.throttling(key, pacer, nowMs)) return;
    this.paces.get(key)?.tally.sentFirst();
  }

  /** A wait hint seen on `key` (shared with the fleet at the next sync). */
  hint(key: string, nowMs: number, hintMs: number): void {
    const link = this.paces.get(key);
    if (link !== undefined && nowMs + hintMs > link.hintUntil) link.hintUntil = nowMs + hintMs;
    this.trouble(nowMs);
  }

  /**
   * Books a send slot for one attempt on `key` in the fleet's queue while the store answers
   * (one round trip): resolves to a ticket whose slot moves with the fleet's queue (the
   * process learns where it stands from every reply). `undefined` (now, or when the store does
   * not answer): the attempt books in the local pacer and holds its ticket there — also while
   * that pacer searches (its probes are its own: spaced by what it learns answer by answer);
   * once a held ticket is due (`due`: a probe), it is booked in the fleet's queue, which spaces
   * the processes' probes at the fastest probing rate.
   */
  reserve(
    key: string,
    pacer: Pacer,
    nowMs: number,
    due = false,
    latestMs = Number.POSITIVE_INFINITY,
  ): number | Promise<SharedTicket | undefined> | undefined {
    if (!this.sharing || (pacer.searching && !due)) return undefined;
    if (!this.throttling(key, pacer, nowMs)) return 0;
    const link = this.paces.get(key);
    // A booking the store did not answer sends its caller to the local pacer, which offers it
    // the shared queue again at once: a store answering \`undefined\` without delay would keep
    // it in that loop without time passing (microtasks only, its deadline never checked).
    if (link === undefined || nowMs < link.bookAgainAt) return undefined;
    return this.bookSlot(link, nowMs, latestMs);
  }

  private async bookSlot(link: PaceLink, nowMs: number, latestMs: number): Promise<SharedTicket | undefined> {
    const pacer = link.pacer;
    const c = paceContribution(pacer, nowMs, link.tally);
    const request: PaceBookRequest = {
      owner: this.owner,
      ...c,
      contributionMs: this.quietMs,
      minRate: this.minRate,
      ttlMs: 60_000,
    };
    // In store time (local = store − offset): a slot the caller could not use is not booked.
    if (latestMs < Number.POSITIVE_INFINITY) request.latest = latestMs + this.offset;
    const reply = await this.store.bookSlot({ downstream: this.scopeName, key: link.key }, request);
    if (reply === undefined) {
      link.tally.unsent(c);
      link.bookAgainAt = this.clock.monotonic() + BOOK_AGAIN_MS;
      return undefined;
    }
    this.measured(nowMs, reply.now);
    link.tally.heardEstimate = reply.estimate;
    if (reply.ticket === 0) {
      link.queue.learn(reply.now, reply);
      adoptFleetEstimate(pacer, reply.estimate, this.clock.monotonic());
      return UNSERVABLE_SLOT;
    }
    link.queue.learn(reply.now, reply, reply.ticket);
    adoptFleetEstimate(pacer, reply.estimate, this.clock.monotonic());
    return link.queue.ticket(reply.ticket);
  }

  private async syncPace(link: PaceLink): Promise<void> {
    const sentAt = this.clock.monotonic();
    const active = link.pacer.throttling(sentAt);
    const hintMs = link.hintUntil > sentAt ? link.hintUntil - sentAt : 0;
    link.hintUntil = Number.NEGATIVE_INFINITY;
    const c = paceContribution(link.pacer, sentAt, link.tally);
    const reply = await this.store.pace(
      { downstream: this.scopeName, key: link.key },
      {
        owner: this.owner,
        ...c,
        contributionMs: this.quietMs,
        minRate: this.minRate,
        active,
        quietMs: this.quietMs,
        hintMs,
        ttlMs: 60_000,
      },
    );
    if (reply === undefined) {
      link.tally.unsent(c);
      return;
    }
    this.measured(sentAt, reply.now);
    link.activeUntil = this.toLocal(reply.activeUntil);
    link.tally.heardEstimate = reply.estimate;
    link.queue.learn(reply.now, reply);
    adoptFleetEstimate(link.pacer, reply.estimate, this.clock.monotonic());
  }

  // ---- background sync -----------------------------------------------------------------

  private schedule(ms: number): void {
    this.timerDueAt = this.clock.monotonic() + ms;
    this.timer = this.clock.schedule(ms, () => this.tick());
  }

  private tick(): void {
    this.timer = undefined;
    const now = this.clock.monotonic();
    let busy = now - this.lastActivity < IDLE_MS;
    // Calm: news would bring a trip, and nothing else shared is moving (see FLEET_QUIET_SYNC_MS).
    let calm = this.store.available && this.store.newsLive === true && now - this.troubleAt >= FLEET_QUIET_SYNC_MS;
    if (this.store.available) {
      if (this.budgets !== undefined) {
        if (!this.budgets.calm()) calm = false;
        this.budgets.sync(now);
      }
      for (const link of this.breakers.values()) {
        const state = link.breaker.state(now);
        if (state !== 'closed' || now - link.lastCallAt < IDLE_MS) {
          busy = true;
          if (state !== 'closed' || !link.fleetClosed) calm = false;
          void this.syncBreaker(link, 'none');
        }
      }
      for (const link of this.paces.values()) {
        if (link.pacer.throttling(now) || now < link.activeUntil || link.hintUntil > now) {
          busy = true;
          calm = false;
          void this.syncPace(link);
        }
      }
    }
    if (busy) this.schedule(calm ? FLEET_QUIET_SYNC_MS : FLEET_SYNC_MS);
  }

  /** A reply's store time, sent at local `sentAt` and received now: refines the clock offset. */
  measured(sentAt: number, storeNow: number): void {
    const receivedAt = this.clock.monotonic();
    const rtt = receivedAt - sentAt;
    // The fastest round trip bounds the offset's error best; the bar rises slowly so that a
    // changed path (or a drifting clock) is followed.
    if (rtt <= this.offsetRtt) {
      this.offsetRtt = rtt;
      this.offset = storeNow - (sentAt + receivedAt) / 2;
    } else {
      this.offsetRtt += 0.05;
    }
    this.synced = true;
  }

  /** The store came back: forget what it may have lost and push local state again. */
  private resync(): void {
    const now = this.clock.monotonic();
    this.budgets?.reset();
    for (const link of this.breakers.values()) {
      link.generation = -1;
      // A breaker open here is news for a store that restarted empty.
      void this.syncBreaker(link, link.breaker.state(now) === 'open' ? 'open' : 'none');
    }
    // One sync round soon, which goes on only if this downstream is in use (`tick`): marking
    // it active here kept every idle downstream of the process syncing for IDLE_MS after
    // each outage (20,000 idle ones: 20,000 budget syncs every 80 ms for 10 s).
    if (this.timer === undefined) this.schedule(FLEET_SYNC_MS);
  }

  /** The store went down: local policies decide alone (holds on breakers lapse by themselves). */
  private fellBack(): void {
    this.budgets?.reset();
    for (const link of this.paces.values()) {
      link.activeUntil = Number.NEGATIVE_INFINITY;
      // Local bookings no longer wait behind the fleet's queue: nothing updates its end while
      // the store is down, and an end far out (a first guess, a poisoned record) held them.
      link.queue.forget();
    }
  }
}

/** A retry waiting for the store's word on its token (`FleetBudgets.claimRetry`). */
class PendingClaim implements RetryClaim {
  granted: boolean | undefined = undefined;
  readonly settled: Promise<boolean>;
  private resolve!: (granted: boolean) => void;

  constructor() {
    this.settled = new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  decide(granted: boolean): void {
    this.granted = granted;
    this.resolve(granted);
  }
}

/**
 * The fleet retry budget, keyed like `KeyedRetryBudgets` and used by the downstream in its
 * place. The local budgets are always fed, so that a fall-back finds them warm.
 *
 * A retry that finds no leased token is claimed: admitted provisionally, and confirmed or
 * refused by the store before its attempt starts (the budget stage waits for the answer,
 * which has usually arrived during the backoff). A store that does not answer leaves the
 * decision to the local budget.
 */
export class FleetBudgets {
  readonly local: KeyedRetryBudgets;
  private readonly leases = new Map<string, BudgetLease>();
  /** Per key, the claims not yet decided, oldest first. */
  private readonly claims = new Map<string, PendingClaim[]>();
  private readonly shape: { bucketMs: number; windowBuckets: number; ratio: number; reserve: number };
  private readonly leaseMs: number;
  private readonly syncing = new Set<string>();

  constructor(
    private readonly link: FleetLink,
    options: RetryBudgetOptions,
    private readonly maxKeys: number,
  ) {
    this.local = new KeyedRetryBudgets({ budget: options, maxKeys });
    const windowMs = options.windowMs ?? RETRY_BUDGET_DEFAULTS.windowMs;
    const buckets = options.buckets ?? RETRY_BUDGET_DEFAULTS.buckets;
    this.shape = {
      bucketMs: windowMs / buckets,
      windowBuckets: buckets,
      ratio: options.ratio ?? RETRY_BUDGET_DEFAULTS.ratio,
      reserve: ((options.reservePerSecond ?? RETRY_BUDGET_DEFAULTS.reservePerSecond) * windowMs) / 1000,
    };
    this.leaseMs = Math.min(windowMs / buckets, 1_000);
  }

  recordRequest(key: string, nowMs: number): void {
    this.local.recordRequest(key, nowMs);
    let lease = this.leases.get(key);
    if (lease === undefined) {
      if (this.leases.size >= this.maxKeys) this.leases.delete(this.leases.keys().next().value as string);
      lease = new BudgetLease({ leaseMs: this.leaseMs, maxLease: MAX_LEASE, borrow: FLEET_BUDGET_CREDIT });
      this.leases.set(key, lease);
      lease.recordRequest();
      // A new key leases its first tokens at once rather than after a sync period.
      this.syncKey(key, lease, nowMs);
    } else lease.recordRequest();
    this.link.touch(nowMs);
  }

  /** A retry that must be decided now (a hedge): a leased token, credit, or no. */
  tryRetry(key: string, nowMs: number): boolean {
    this.link.trouble(nowMs);
    // Only a store that is down hands retries to the local budget. Before its first answer the
    // store is up, just not heard from yet: deciding locally then gave each of ten processes
    // starting an outage together its whole reserve (15 retries each: 12 % over the fleet's
    // budget in that run). Leases and claims need no clock offset, only answers.
    if (!this.link.store.available) return this.local.tryRetry(key, nowMs);
    const lease = this.leases.get(key);
    if (lease === undefined) return this.local.tryRetry(key, nowMs);
    const ok = lease.take(nowMs);
    if (ok) this.local.recordRetries(key, nowMs);
    // Running low: top up now rather than at the next period.
    if (!ok || lease.tokens(nowMs) === 0) this.syncKey(key, lease, nowMs);
    return ok;
  }

  /** A retry after a failure: a leased token or credit now, else a claim the store decides. */
  claimRetry(key: string, nowMs: number): boolean | RetryClaim {
    this.link.trouble(nowMs);
    // As in `tryRetry`: only a store that is down leaves the decision to the local budget.
    if (!this.link.store.available) return this.local.tryRetry(key, nowMs);
    const lease = this.leases.get(key);
    if (lease === undefined) return this.local.tryRetry(key, nowMs);
    if (lease.take(nowMs)) {
      this.local.recordRetries(key, nowMs);
      if (lease.tokens(nowMs) === 0) this.syncKey(key, lease, nowMs);
      return true;
    }
    if (lease.exhausted) return false;
    lease.claim();
    const claim = new PendingClaim();
    let queue = this.claims.get(key);
    if (queue === undefined) this.claims.set(key, (queue = []));
    queue.push(claim);
    this.syncKey(key, lease, nowMs);
    return claim;
  }

  /** Whether no lease has anything but deposits to sync: no retry, credit, claim or return. */
  calm(): boolean {
    if (this.claims.size > 0) return false;
    for (const lease of this.leases.values()) if (!lease.calm) return false;
    return true;
  }

  available(key: string, nowMs: number): number {
    if (!this.link.sharing) return this.local.available(key, nowMs);
    return this.leases.get(key)?.tokens(nowMs) ?? 0;
  }

  recordOutcome(key: string, nowMs: number, ok: boolean): void {
    this.local.recordOutcome(key, nowMs, ok);
    if (!ok) this.link.trouble(nowMs);
  }

  /** Background: every key with something to deposit, ask or give back. */
  sync(nowMs: number): void {
    for (const [key, lease] of this.leases) if (lease.wantsSync(nowMs)) this.syncKey(key, lease, nowMs);
  }

  reset(): void {
    const now = this.link.clock.monotonic();
    for (const [key, lease] of this.leases) if (lease.reset() > 0) this.decideLocally(key, now);
  }

  /** Claims the store will not answer: the local budget decides them. */
  private decideLocally(key: string, nowMs: number): void {
    const queue = this.claims.get(key);
    if (queue === undefined) return;
    this.claims.delete(key);
    for (const claim of queue) claim.decide(this.local.tryRetry(key, nowMs));
  }

  private answered(key: string, answer: ClaimsAnswered): void {
    const n = answer.granted + answer.refused;
    if (n === 0) return;
    const queue = this.claims.get(key);
    if (queue === undefined) return;
    const decided = queue.splice(0, n);
    for (let i = 0; i < decided.length; i++) decided[i]!.decide(i < answer.granted);
    if (queue.length === 0) this.claims.delete(key);
  }

  private syncKey(key: string, lease: BudgetLease, nowMs: number): void {
    if (this.syncing.has(key)) return;
    if (!this.link.store.available) {
      if (lease.syncFailed() > 0) this.decideLocally(key, nowMs);
      return;
    }
    this.syncing.add(key);
    const request = lease.syncRequest(nowMs, { owner: this.link.owner, ...this.shape });
    void this.link.store.budget({ downstream: this.link.scopeName, key }, request).then((reply) => {
      this.syncing.delete(key);
      const now = this.link.clock.monotonic();
      if (reply === undefined) {
        // A late answer while the store is up (one slow round trip on a busy machine): Redis
        // may well have run the sync, and the local budget would decide the claims with this
        // process's whole reserve — in an outage, ten processes so deciding made 1.25–1.35
        // attempts per call where the fleet allows 1.2. So the claims are asked again at
        // once, and only a second sync in a row without an answer (or the store going down)
        // decides them here.
        const again = this.link.store.available && lease.failedSyncs < 1;
        if (lease.syncFailed(again) > 0) this.decideLocally(key, now);
        else if (again && lease.claims > 0) this.syncKey(key, lease, now);
        return;
      }
      this.link.measured(nowMs, reply.now);
      const answer = lease.applyReply(now, reply);
      // The local budget is charged for what the fleet granted: a fall-back starts from what
      // this process really spent, not from a budget it never used.
      if (answer.granted > 0) this.local.recordRetries(key, now, answer.granted);
      this.answered(key, answer);
      // Claims made while this sync was under way are asked for at once.
      if (lease.claims > 0) this.syncKey(key, lease, now);
    });
  }
}
