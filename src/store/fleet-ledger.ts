import {
  BREAKER_CLOSED,
  BREAKER_HALF_OPEN,
  BREAKER_OPEN,
  type BreakerRecord,
  type BreakerSyncRequest,
  type BudgetSyncReply,
  type BudgetSyncRequest,
  type PaceBookReply,
  type PaceBookRequest,
  type PaceSyncReply,
  type PaceSyncRequest,
} from './fleet-store.js';

/**
 * The fleet's shared arithmetic, as pure functions of `(state, now, request)`. The Redis
 * scripts (`redis-scripts.ts`) are a line-by-line Lua copy of these; a test runs both on
 * the same random sequences and compares. Keep the two in step.
 */

/** Absorbs floating-point error in `ratio × requests` (see `RetryBudget`). */
const EPSILON = 1e-9;

/** A fleet retry budget: per store bucket, first attempts and retries granted. */
export interface BudgetLedger {
  buckets: Map<number, { requests: number; retries: number }>;
  /** owner → store ms of its last sync. */
  owners?: Map<string, number>;
}

/**
 * One budget sync. With R and T the fleet's first attempts and granted retries over the
 * window of `windowBuckets` buckets ending at the current one:
 *
 *     available = max(0, ⌊max(ratio × R, reserve) − T⌋)
 *     granted   = min(want, available)          (counted into T at once)
 *
 * Tokens are withdrawn when leased, not when used, so leasing alone never lets the fleet
 * exceed the budget; unused tokens are given back to the bucket they came from while it is
 * still in the window. Retries a process made on credit (`spent`, bounded by its `borrow`)
 * are withdrawn first, unconditionally: they are the only way T can pass the allowance.
 */
export function syncBudget(ledger: BudgetLedger, nowMs: number, r: BudgetSyncRequest): BudgetSyncReply {
  const bucket = Math.floor(nowMs / r.bucketMs);
  const oldest = bucket - r.windowBuckets + 1;
  for (const b of ledger.buckets.keys()) if (b < oldest) ledger.buckets.delete(b);
  let owners = ledger.owners;
  if (owners === undefined) ledger.owners = owners = new Map();
  for (const [o, seen] of owners) if (seen < nowMs - r.bucketMs * r.windowBuckets) owners.delete(o);
  owners.set(r.owner, nowMs);
  const cell = (b: number) => {
    let c = ledger.buckets.get(b);
    if (c === undefined) {
      c = { requests: 0, retries: 0 };
      ledger.buckets.set(b, c);
    }
    return c;
  };
  if (r.requests > 0) cell(bucket).requests += r.requests;
  if (r.spent > 0) cell(bucket).retries += r.spent;
  if (r.returned > 0 && r.returnBucket >= oldest && r.returnBucket <= bucket) {
    const c = cell(r.returnBucket);
    c.retries -= Math.min(r.returned, c.retries);
  }
  let requests = 0;
  let retries = 0;
  for (const c of ledger.buckets.values()) {
    requests += c.requests;
    retries += c.retries;
  }
  const left = Math.floor(Math.max(r.ratio * requests, r.reserve) - retries + EPSILON);
  const available = Math.max(left, 0);
  const granted = Math.min(r.want, available);
  if (granted > 0) cell(bucket).retries += granted;
  return {
    now: nowMs,
    bucket,
    granted,
    available: available - granted,
    requests,
    retries: retries + granted,
    owners: owners.size,
  };
}

/** A fleet breaker record before any sync. */
export function closedBreaker(): BreakerRecord {
  return { now: 0, state: BREAKER_CLOSED, generation: 0, openUntil: 0, opensInRow: 0, probeOwner: '', probeUntil: 0 };
}

/**
 * One breaker sync. Every change of state bumps the generation; a report is applied only
 * against the generation it was made in, so an answer that arrives after the fleet moved on
 * (a late failure after a close, a probe whose lease expired) cannot move the shared state:
 *
 * - 'open' from closed (any process that saw the current generation, or none yet), or from
 *   half-open by the probe lease's holder → open for
 *   `d(k) = min(max, min(max, breakMs × growth^(k−1)) × (1 + jitter × (2u − 1)))`;
 * - 'close' from half-open, by the probe lease's holder → closed, k = 0.
 *
 * Then, lazily: open past `openUntil` → half-open; a half-open breaker whose lease is free or
 * expired leases its probe to the first process that wants it (an expired lease bumps the
 * generation, so the old holder's late answer is ignored).
 */
export function syncBreaker(record: BreakerRecord, nowMs: number, r: BreakerSyncRequest): BreakerRecord {
  const rec = { ...record, now: nowMs };
  const current = r.generation === rec.generation || (r.generation === -1 && rec.state === BREAKER_CLOSED);
  if (r.report === 'open' && current) {
    const holder = rec.state === BREAKER_HALF_OPEN && rec.probeOwner === r.owner;
    if (rec.state === BREAKER_CLOSED || holder) {
      rec.opensInRow += 1;
      let ceiling = r.breakMs * r.breakGrowth ** (rec.opensInRow - 1);
      if (!(ceiling < r.maxBreakMs)) ceiling = r.maxBreakMs;
      const d = Math.min(r.maxBreakMs, ceiling * (1 + r.breakJitter * (2 * r.u - 1)));
      rec.state = BREAKER_OPEN;
      rec.openUntil = nowMs + d;
      rec.generation += 1;
      rec.probeOwner = '';
      rec.probeUntil = 0;
    }
  } else if (r.report === 'close' && current && rec.state === BREAKER_HALF_OPEN && rec.probeOwner === r.owner) {
    rec.state = BREAKER_CLOSED;
    rec.generation += 1;
    rec.opensInRow = 0;
    rec.probeOwner = '';
    rec.probeUntil = 0;
  }
  if (rec.state === BREAKER_OPEN && nowMs >= rec.openUntil) {
    rec.state = BREAKER_HALF_OPEN;
    rec.generation += 1;
  }
  if (rec.state === BREAKER_HALF_OPEN && r.wantProbe && (rec.probeOwner === '' || nowMs >= rec.probeUntil)) {
    if (rec.probeOwner !== '') rec.generation += 1;
    rec.probeOwner = r.owner;
    rec.probeUntil = nowMs + r.probeLeaseMs;
  }
  return rec;
}

/** The fleet's pacer: its virtual queue, throttling flag, hint and rate contributions. */
export interface PaceLedger {
  next: number;
  activeUntil: number;
  hintUntil: number;
  /** owner → [rate per ms, store ms until which it counts]. */
  contributions: Map<string, [number, number]>;
}

export function emptyPace(): PaceLedger {
  return { next: 0, activeUntil: 0, hintUntil: 0, contributions: new Map() };
}

/** Refreshes `owner`'s contribution (when it has one) and sums the live ones. */
function contribute(p: PaceLedger, nowMs: number, owner: string, rate: number, contributionMs: number): number {
  if (rate > 0) p.contributions.set(owner, [rate, nowMs + contributionMs]);
  let sum = 0;
  for (const [id, [r, until]] of p.contributions) {
    if (until <= nowMs) p.contributions.delete(id);
    else sum += r;
  }
  return sum;
}

/**
 * Books one slot in the fleet's virtual queue, spaced at the sum of the processes' learned
 * rates (each measures the share of the callee's capacity it gets, so the sum is the
 * callee's), never below `minRate`:
 *
 *     ready = max(now, hintUntil)    slot = max(ready, next)    next = slot + 1 / rate
 */
export function bookSlot(p: PaceLedger, nowMs: number, r: PaceBookRequest): PaceBookReply {
  let rate = contribute(p, nowMs, r.owner, r.rate, r.contributionMs);
  if (rate < r.minRate) rate = r.minRate;
  const ready = Math.max(nowMs, p.hintUntil);
  const slot = Math.max(ready, p.next);
  p.next = slot + 1 / rate;
  return { now: nowMs, slot, rate };
}

/** A pacer's periodic sync (see `PaceSyncRequest`). */
export function syncPace(p: PaceLedger, nowMs: number, r: PaceSyncRequest): PaceSyncReply {
  const rate = contribute(p, nowMs, r.owner, r.rate, r.contributionMs);
  if (r.active && nowMs + r.quietMs > p.activeUntil) p.activeUntil = nowMs + r.quietMs;
  if (r.hintMs > 0 && nowMs + r.hintMs > p.hintUntil) p.hintUntil = nowMs + r.hintMs;
  return { now: nowMs, activeUntil: p.activeUntil, hintUntil: p.hintUntil, rate };
}
