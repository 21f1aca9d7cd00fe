import type { FleetLink, FleetLinkOptions } from './fleet-link.js';

/**
 * The shared state of a fleet: what processes calling one callee keep in common so that
 * their retry budget, circuit breaker and pacer act as one. Implemented by `RedisStore`
 * (processes on many hosts, `kindly-calls/redis`) and, for tests, by `MemoryFleetStore`
 * (test/support), with the same arithmetic (`fleet-ledger.ts` and its Lua twin).
 *
 * Every operation is one atomic step on the store, timed by the store's own clock (Redis
 * `TIME`): hosts' clocks drift, so no shared timestamp ever comes from a host. Replies carry
 * `now`, the store's clock at that step, from which each process maps shared times onto its
 * monotonic clock.
 *
 * Operations resolve to `undefined` when the store cannot answer (down, slow, restarting):
 * the caller then falls back to its local policies. They never reject.
 */
export interface FleetStore {
  /** Brand, so `downstream()` can tell a fleet store from a misplaced option. */
  readonly fleetStore: true;
  /**
   * Links one downstream to this store: `new FleetLink({ ...options, store: this })`. The store
   * makes the link, not `downstream()`, so that the link's code (~35 KB built) loads with the
   * store's entry (`kindly-calls/redis`) and not with the root, which every caller imports
   * and few give a store.
   */
  link(options: Omit<FleetLinkOptions, 'store'>): FleetLink;
  /** Whether the store answered its last operation (false while it is down and being retried). */
  readonly available: boolean;
  /** Subscribes to availability changes; returns the unsubscribe function. */
  onAvailability(listener: (change: StoreAvailability) => void): () => void;
  /**
   * Optional: tells `listener` at once when any process of the fleet opened a breaker (the
   * `breaker` operation with `report: 'open'` that opened it), with that breaker's scope — or
   * with `undefined` when news may have been lost (the store's news connection dropped).
   * Returns the unsubscribe function. While news arrives (`newsLive`), a downstream whose
   * policies are calm syncs every `FLEET_QUIET_SYNC_MS` instead of every `FLEET_SYNC_MS`: an
   * opened breaker still reaches it within a round trip or two. A store without it is polled
   * at the fast period.
   */
  onBreakerNews?(listener: (scope: FleetScope | undefined) => void): () => void;
  /** Whether news from `onBreakerNews` is being received now. */
  readonly newsLive?: boolean;

  budget(scope: FleetScope, request: BudgetSyncRequest): Promise<BudgetSyncReply | undefined>;
  breaker(scope: FleetScope, request: BreakerSyncRequest): Promise<BreakerRecord | undefined>;
  bookSlot(scope: FleetScope, request: PaceBookRequest): Promise<PaceBookReply | undefined>;
  pace(scope: FleetScope, request: PaceSyncRequest): Promise<PaceSyncReply | undefined>;
}

export interface StoreAvailability {
  available: boolean;
  /** Why it went down (the error's message), when it did. */
  reason?: string;
}

/** Which shared record: the downstream (the hash tag) and the policy key within it. */
export interface FleetScope {
  downstream: string;
  key: string;
}

/** One budget sync: deposit first attempts, give back unused tokens, lease new ones. */
export interface BudgetSyncRequest {
  /** This process's id: the store counts the processes sharing the budget. */
  owner: string;
  bucketMs: number;
  windowBuckets: number;
  ratio: number;
  /** Retries the fleet may always make per window (counted once for the whole fleet). */
  reserve: number;
  /** First attempts made since the last sync. */
  requests: number;
  /** Leased tokens not used, given back to the bucket they were taken from. */
  returned: number;
  /** The store's bucket number of the lease being given back. */
  returnBucket: number;
  /** Retries made on credit since the last sync (while no token was held): withdrawn unconditionally. */
  spent: number;
  /** Tokens wanted for the next lease. */
  want: number;
}

export interface BudgetSyncReply {
  /** The store's clock, ms. */
  now: number;
  /** The store's bucket the grant was booked in. */
  bucket: number;
  /** Tokens leased to the caller (already counted as retries fleet-wide). */
  granted: number;
  /** Tokens still available fleet-wide after the grant. */
  available: number;
  /** Fleet-wide first attempts and retries in the window, after the sync. */
  requests: number;
  retries: number;
  /** Processes that synced this budget within the window, the caller included. */
  owners: number;
}

export const BREAKER_CLOSED = 0;
export const BREAKER_OPEN = 1;
export const BREAKER_HALF_OPEN = 2;

/** One breaker sync: report a local transition (if any), read the shared state, maybe take the probe lease. */
export interface BreakerSyncRequest {
  /** This process's id (owner of a probe lease). */
  owner: string;
  /** The generation this process last saw (−1: none yet). Reports made against an old generation are ignored. */
  generation: number;
  report: 'none' | 'open' | 'close';
  /** For 'open': the break's parameters; the store computes d(k) from its own count of openings in a row. */
  breakMs: number;
  breakGrowth: number;
  maxBreakMs: number;
  breakJitter: number;
  /** Uniform in [0, 1) from the caller's Random, for the break's jitter. */
  u: number;
  /** Take the probe lease if the breaker is half-open and the lease is free. */
  wantProbe: boolean;
  probeLeaseMs: number;
  ttlMs: number;
}

export interface BreakerRecord {
  now: number;
  state: typeof BREAKER_CLOSED | typeof BREAKER_OPEN | typeof BREAKER_HALF_OPEN;
  generation: number;
  /** Store clock ms when an open breaker turns half-open. */
  openUntil: number;
  opensInRow: number;
  /** Holder of the probe lease ('' when none). */
  probeOwner: string;
  probeUntil: number;
}

/** Books one slot in the fleet's virtual queue. */
export interface PaceBookRequest {
  owner: string;
  /** This process's learned rate, requests per ms (0: none to contribute). */
  rate: number;
  /** What `rate` estimates (see `RATE_SHARE`). @default RATE_SHARE */
  kind?: RateKindCode;
  /** How long a contribution counts after it was last refreshed. */
  contributionMs: number;
  /** Floor of the fleet rate, requests per ms (1 / maxSpacingMs). */
  minRate: number;
  ttlMs: number;
  /**
   * Paced requests of this process served / rejected since its last report (see
   * `PaceLedger.answers`). @default 0
   */
  served?: number;
  rejected?: number;
  /**
   * First tries this process sent, unpaced, while the fleet paced, since its last report:
   * each takes a slot of the fleet's queue (see `unpacedSent` in fleet-ledger.ts). @default 0
   */
  unpaced?: number;
  /**
   * Store ms after which the slot is of no use to the caller (its deadline, less the least
   * time an attempt needs): a slot later than this is not booked — the reply's `ticket` is 0
   * and the queue does not grow. A caller that took a ticket it could never use would push
   * every later booking further out (the ticket's slot passes unused, but the queue's end
   * stays where it was moved). @default no limit
   */
  latest?: number;
}

/** Where the fleet's queue stands (see `PaceLedger`): slot(k) = baseAt + (k − baseTicket) × gap. */
export interface PaceEpoch {
  baseTicket: number;
  /** Store clock ms. */
  baseAt: number;
  /** ms between slots (0: no queue yet). */
  gap: number;
}

export interface PaceBookReply extends PaceEpoch {
  now: number;
  /**
   * The booked ticket: it leaves at its slot under the latest epoch its process heard of.
   * 0: none booked, the next slot is later than the request's `latest`.
   */
  ticket: number;
  /** The fleet's learned rate without probes (`fleetEstimate`), requests per ms; 0: none yet. */
  estimate: number;
}

/**
 * What a contributed rate estimates, as the store keeps it: the part of the callee's capacity
 * one process measured it gets (summed over the fleet), a guess at the callee's whole rate
 * (the fleet takes the largest), or a search's probing rate (spaces the queue, never adopted).
 */
export const RATE_SHARE = 0;
export const RATE_WHOLE = 1;
export const RATE_PROBE = 2;
export type RateKindCode = typeof RATE_SHARE | typeof RATE_WHOLE | typeof RATE_PROBE;

/** A pacer's periodic sync: contribute its learned rate, raise the fleet's throttling flag and hint. */
export interface PaceSyncRequest {
  owner: string;
  rate: number;
  kind?: RateKindCode;
  contributionMs: number;
  /** Floor of the fleet rate, requests per ms (1 / maxSpacingMs). */
  minRate: number;
  /** Whether this process's pacer is throttling (keeps the fleet throttling for `quietMs`). */
  active: boolean;
  quietMs: number;
  /** A wait hint this process saw, as ms from now (0: none). */
  hintMs: number;
  ttlMs: number;
  /** As in `PaceBookRequest`. @default 0 */
  served?: number;
  rejected?: number;
  unpaced?: number;
}

export interface PaceSyncReply extends PaceEpoch {
  now: number;
  /** Store clock ms until which the fleet paces (someone was throttled within quietMs). */
  activeUntil: number;
  hintUntil: number;
  /** The fleet's learned rate without probes, requests per ms; 0: none yet. */
  estimate: number;
}

/** Carries the fleet store brand (`fleetStore: true`), whether or not it can make links. */
function branded(value: unknown): value is { fleetStore: true; link?: unknown } {
  return typeof value === 'object' && value !== null && (value as { fleetStore?: unknown }).fleetStore === true;
}

export function isFleetStore(value: unknown): value is FleetStore {
  return branded(value) && typeof value.link === 'function';
}

/** What a `store` option that is no fleet store is, for the error that says so. */
export function describeStore(value: unknown): string {
  if (branded(value)) {
    return 'a fleet store without link(options): a store of your own makes its link, `return new FleetLink({ ...options, store: this })` (FleetLink from kindly-calls/redis)';
  }
  return value === null ? 'null' : typeof value;
}
