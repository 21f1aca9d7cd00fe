import type { BudgetSyncReply, BudgetSyncRequest } from '../store/fleet-store.js';

/** One lease: tokens taken from the fleet budget in one store bucket, usable until `expiresAt`. */
interface Lease {
  bucket: number;
  tokens: number;
  expiresAt: number;
}

export interface BudgetLeaseOptions {
  /** Leased tokens are usable this long (local ms), then given back. */
  leaseMs: number;
  /** Most tokens asked for in one sync. */
  maxLease: number;
  /** Retries a process may make on credit while it holds no token, until its next sync. */
  borrow: number;
}

/** How the claims a reply answered went: the oldest `granted` were granted, the next `refused` refused. */
export interface ClaimsAnswered {
  granted: number;
  refused: number;
}

/**
 * One process's share of a fleet retry budget, sans-IO: the hot path (`recordRequest`,
 * `take`) touches only local numbers; `syncRequest` / `applyReply` / `syncFailed` are the
 * background exchange with the store (`syncBudget` in `fleet-ledger.ts`).
 *
 * - First attempts are counted locally and deposited in batches (`pending`).
 * - Retries spend leased tokens, withdrawn from the fleet budget when leased. A lease is
 *   sized to this process's demand: the retries spent since the last sync (× 1.5, at least
 *   1), at most `maxLease` and at most its fair share of the fleet's spare tokens (spare ÷
 *   processes seen in the window); it expires after `leaseMs` and what is left of it is
 *   given back to its bucket.
 * - With no token left, up to `borrow` retries go ahead on credit and are withdrawn
 *   unconditionally at the next sync. Credit is restored only by a reply that shows room
 *   left in the fleet budget, so it never piles up while the budget is exhausted.
 * - With neither, a retry may be *claimed* (`claim`): the next sync asks the store for it,
 *   and the reply grants or refuses it (`applyReply` says how many claims, oldest first).
 *   A retry waits out its backoff anyway, so asking the fleet costs it nothing, and a
 *   process is never refused while the fleet has tokens to spare — which is why leases can
 *   stay small (no process hoards the fleet's tokens in a burst).
 *
 * Overshoot bound. Leased tokens were available when leased, so the fleet's granted retries
 * exceed its allowance only by credit: with P processes, at any instant
 *
 *     fleet retries in the window ≤ max(ratio × R, reserve) + P × borrow
 *
 * (credit is withdrawn unconditionally, but a process borrows again only after the store
 * showed T below the allowance).
 *
 * The price of leasing: a process whose burst of failures outruns its lease and credit is
 * refused retries until its next sync (at most one sync period, or one round trip: running
 * dry triggers a sync at once), even if other processes hold spare tokens.
 *
 * where R counts the first attempts deposited so far (a deposit lags by at most one sync
 * interval, and is lost with a sync that gets no answer, which delays or shrinks a budget's
 * growth, never its limit). A token is spent at most
 * `leaseMs` after the window it was counted in; with `leaseMs` ≤ one bucket that moves a
 * retry by at most one bucket, as Finagle's own buckets do.
 */
export class BudgetLease {
  /** First attempts not yet deposited. */
  private pending = 0;
  /** Retries made on credit, not yet withdrawn. */
  private debt = 0;
  /** Credit left: restored only when the store shows room again, so credit never piles up. */
  private creditLeft: number;
  /** This process's fair share of the fleet's spare tokens at the last sync (spare ÷ processes). */
  private fairShare = 0;
  private replies = 0;
  /** Syncs in a row that got no answer. */
  private failedInRow = 0;
  /** The last reply refused a claim, and none since showed room: claims are refused here. */
  private exhaustedFleet = false;
  /** Tokens spent since the last sync: sizes the next lease. */
  private spentSinceSync = 0;
  /** Retries claimed and not yet asked for. */
  private claimsWaiting = 0;
  /** Retries claimed in the sync in flight. */
  private claimsAsked = 0;
  private readonly leases: Lease[] = [];
  /** Expired leases' leftovers waiting to be given back (one bucket per sync). */
  private readonly toReturn: Lease[] = [];
  /** What the sync in flight carried: its credit is withdrawn again if it gets no answer. */
  private inFlight: { debt: number } | undefined;
  private static readonly NONE: ClaimsAnswered = Object.freeze({ granted: 0, refused: 0 });

  constructor(private readonly options: BudgetLeaseOptions) {
    this.creditLeft = options.borrow;
  }

  /** A first attempt was made. */
  recordRequest(): void {
    this.pending++;
  }

  /** Spends one retry token (or credit); `false` when neither is left. */
  take(nowMs: number): boolean {
    this.expire(nowMs);
    for (const lease of this.leases) {
      if (lease.tokens > 0) {
        lease.tokens--;
        this.spentSinceSync++;
        return true;
      }
    }
    if (this.creditLeft > 0) {
      this.creditLeft--;
      this.debt++;
      this.spentSinceSync++;
      return true;
    }
    return false;
  }

  /**
   * A retry found no token and no credit (`take` returned false): it is asked of the store at
   * the next sync, which grants or refuses it.
   */
  claim(): void {
    this.claimsWaiting++;
  }

  /** Claims not answered yet (waiting for a sync, or in the one in flight). */
  get claims(): number {
    return this.claimsWaiting + this.claimsAsked;
  }

  /** Tokens held and usable now. */
  tokens(nowMs: number): number {
    this.expire(nowMs);
    let n = 0;
    for (const lease of this.leases) n += lease.tokens;
    return n;
  }

  /** Credit used and not yet withdrawn. */
  get credit(): number {
    return this.debt;
  }

  /** First attempts waiting to be deposited. */
  get pendingRequests(): number {
    return this.pending;
  }

  /** Nothing to sync but deposits: no retry spent, credit used, claim waiting or lease to give back. */
  get calm(): boolean {
    return this.debt === 0 && this.spentSinceSync === 0 && this.claims === 0 && this.toReturn.length === 0;
  }

  /** Whether a sync has something to say or to ask (a lease to renew, top up or give back). */
  wantsSync(nowMs: number): boolean {
    this.expire(nowMs);
    return this.pending > 0 || this.debt > 0 || this.toReturn.length > 0 || this.spentSinceSync > 0 || this.claimsWaiting > 0;
  }

  /** The store request for a sync now; its counts are handed over (restored by `syncFailed`). */
  syncRequest(
    nowMs: number,
    budget: Pick<BudgetSyncRequest, 'owner' | 'bucketMs' | 'windowBuckets' | 'ratio' | 'reserve'>,
  ): BudgetSyncRequest {
    this.expire(nowMs);
    const returned = this.toReturn.shift();
    const held = this.tokens(nowMs);
    // Enough for the retries of the last interval and a half more, within this process's fair
    // share of what the fleet has spare: demand sets the size, so the first process to sync
    // in a burst does not take the tokens the others are about to need. A burst beyond the
    // lease is claimed (asked for exactly) rather than refused.
    const demand = Math.max(1, Math.ceil(1.5 * this.spentSinceSync));
    const target = Math.min(this.options.maxLease, this.replies === 0 ? demand : Math.min(demand, Math.max(1, this.fairShare)));
    const want = Math.max(0, target - held) + this.claimsWaiting;
    const request: BudgetSyncRequest = {
      ...budget,
      requests: this.pending,
      returned: returned?.tokens ?? 0,
      returnBucket: returned?.bucket ?? 0,
      spent: this.debt,
      want,
    };
    this.inFlight = { debt: this.debt };
    this.pending = 0;
    this.debt = 0;
    this.spentSinceSync = 0;
    this.claimsAsked = this.claimsWaiting;
    this.claimsWaiting = 0;
    return request;
  }

  /**
   * The store answered the sync in flight. Its grant serves the claims it carried first
   * (oldest first; those it could not serve are refused: the fleet has no room), then claims
   * made since, then the lease.
   */
  applyReply(nowMs: number, reply: BudgetSyncReply): ClaimsAnswered {
    this.inFlight = undefined;
    this.failedInRow = 0;
    // Room left after this grant: the fleet is within its allowance, credit may be used again.
    if (reply.available > 0) this.creditLeft = this.options.borrow;
    this.fairShare = Math.floor((reply.available + reply.granted) / Math.max(1, reply.owners));
    this.replies++;
    const asked = this.claimsAsked;
    this.claimsAsked = 0;
    let tokens = reply.granted;
    let granted = Math.min(asked, tokens);
    const refused = asked - granted;
    tokens -= granted;
    if (reply.available > 0) this.exhaustedFleet = false;
    else if (refused > 0) this.exhaustedFleet = true;
    // Claims made while the sync was under way take what is left before it is leased.
    if (refused === 0 && this.claimsWaiting > 0) {
      const late = Math.min(this.claimsWaiting, tokens);
      this.claimsWaiting -= late;
      tokens -= late;
      granted += late;
    }
    this.spentSinceSync += granted;
    if (tokens > 0) this.leases.push({ bucket: reply.bucket, tokens, expiresAt: nowMs + this.options.leaseMs });
    return granted === 0 && refused === 0 ? BudgetLease.NONE : { granted, refused };
  }

  /**
   * The sync in flight got no answer. A late answer usually means the store ran it, so
   * everything is settled on the side of fewer retries: its deposits are dropped (sending them
   * again would count them twice, and let the fleet retry more than its ratio), its credit is
   * kept for the next sync (withdrawn twice at worst), and tokens it was giving back are
   * dropped (not returned at worst). With `keepClaims`, the claims it carried wait again,
   * oldest first, for the next sync to ask (granted twice at worst, so withdrawn twice);
   * otherwise every claim is forgotten and the caller decides them locally (fail open to the
   * local budget). Returns how many claims were forgotten.
   */
  syncFailed(keepClaims = false): number {
    this.failedInRow++;
    let forgotten = 0;
    if (keepClaims) {
      this.claimsWaiting += this.claimsAsked;
    } else {
      forgotten = this.claimsAsked + this.claimsWaiting;
      this.claimsWaiting = 0;
    }
    this.claimsAsked = 0;
    const f = this.inFlight;
    if (f === undefined) return forgotten;
    this.inFlight = undefined;
    this.debt += f.debt;
    return forgotten;
  }

  /**
   * Whether the fleet refused this process's last claims and no reply since showed room. A
   * retry that finds no token is then refused at once rather than claimed: in an outage the
   * answer is known, and asking it of Redis for every retry made ~110 round trips a second
   * per process (10 processes at 100 calls/s; 35 without). The next periodic sync still asks
   * for a lease, and a reply with room ends this, so a process stays refused at most one sync
   * period after room appears.
   */
  get exhausted(): boolean {
    return this.exhaustedFleet;
  }

  /** Syncs in a row that got no answer (0 once one is answered). */
  get failedSyncs(): number {
    return this.failedInRow;
  }

  /**
   * Drops every lease, debt and claim (the store lost its state, or the process fell back to
   * its local budget): what the store knew of them is gone or will expire. Returns how many
   * claims were dropped (the caller decides them locally).
   */
  reset(): number {
    this.exhaustedFleet = false;
    this.failedInRow = 0;
    this.leases.length = 0;
    this.toReturn.length = 0;
    this.debt = 0;
    const claims = this.claimsAsked + this.claimsWaiting;
    this.claimsAsked = 0;
    this.claimsWaiting = 0;
    return claims;
  }

  private expire(nowMs: number): void {
    const leases = this.leases;
    while (leases.length > 0 && leases[0]!.expiresAt <= nowMs) {
      const lease = leases.shift() as Lease;
      if (lease.tokens > 0) this.toReturn.push(lease);
    }
    // Leftovers of leases that can no longer be given back in time are simply dropped.
    if (this.toReturn.length > 4) this.toReturn.splice(0, this.toReturn.length - 4);
  }
}
