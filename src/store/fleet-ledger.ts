import { PACER_DEFAULTS, UNPACED_HOLD_GAPS } from '../policies/pacer.js';
import { RETRY_DEFAULTS } from '../policies/retry-decision.js';
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
  type PaceEpoch,
  type PaceSyncReply,
  type PaceSyncRequest,
  RATE_SHARE,
  RATE_WHOLE,
  type RateKindCode,
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
  // A bucket more than one ahead of now was dated by a wrong clock: it would never leave the window.
  for (const b of ledger.buckets.keys()) if (b < oldest || b > bucket + 1) ledger.buckets.delete(b);
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
  // No break lasts beyond this process's own maximum from now, nor a lease beyond its own.
  if (rec.openUntil > nowMs + r.maxBreakMs) rec.openUntil = nowMs + r.maxBreakMs;
  if (rec.probeUntil > nowMs + r.probeLeaseMs) rec.probeUntil = nowMs + r.probeLeaseMs;
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

/**
 * The fleet's pacer: its queue of tickets, throttling flag, hint and rate contributions.
 *
 * The queue is a numbered line, as in `Pacer`: ticket k leaves at
 *
 *     slot(k) = baseAt + (k − baseTicket) × gap       (k ≥ baseTicket; earlier tickets are due)
 *
 * so when the fleet's rate moves by more than `FLEET_RESPACE_DRIFT`, every waiting ticket moves
 * with it at once (a new epoch: baseTicket = the first ticket not yet due). A process holding
 * a ticket computes its slot from the latest epoch it heard of — from any reply — with no
 * round trip of its own: a fleet that booked its herd at a guess is re-spaced by the first cut.
 */
export interface PaceLedger {
  /** The next ticket to hand out. */
  ticket: number;
  baseTicket: number;
  baseAt: number;
  /** ms between slots in the current epoch. */
  gap: number;
  activeUntil: number;
  hintUntil: number;
  /**
   * Guesses at the whole rate count for at most this much (requests per ms) until
   * `guessCapUntil` — set when a process following the queue measured a cut (see `contribute`).
   */
  guessCap: number;
  guessCapUntil: number;
  /** owner → [rate per ms, store ms until which it counts, kind (`RATE_SHARE`…)]. */
  contributions: Map<string, [number, number, RateKindCode]>;
  /**
   * The fleet's paced answers as its processes report them: store bucket (store ms /
   * `FLEET_ANSWER_BUCKET_MS`) → [served, rejected], the last `FLEET_ANSWER_BUCKETS` kept.
   */
  answers: Map<number, [number, number]>;
  /** Store ms of the first report of the answers in the window (when it held none before). */
  answersFrom: number;
  /** Store ms since which every answer was served while tickets waited (0: not so). */
  growFrom: number;
  /**
   * The fleet's current spell of rejections (see `spellRate`): store ms of the report that
   * began it (−1: none; store time is never negative), the answers served since, and store ms
   * of the first answer served since the last rejection (−1: none).
   */
  spellFrom: number;
  spellServed: number;
  spellServedSince: number;
  /** Store ms of the latest report of first tries sent unpaced while the fleet paced (−1: none). */
  unpacedAt: number;
}

export function emptyPace(): PaceLedger {
  return {
    ticket: 1,
    baseTicket: 1,
    baseAt: 0,
    gap: 0,
    activeUntil: 0,
    hintUntil: 0,
    guessCap: 0,
    guessCapUntil: 0,
    contributions: new Map(),
    answers: new Map(),
    answersFrom: 0,
    growFrom: 0,
    spellFrom: -1,
    spellServed: 0,
    spellServedSince: -1,
    unpacedAt: -1,
  };
}

/**
 * A guess refuted by a cut counts for this much of the fleet's rate the cut was measured at:
 * the pacer's default multiplicative decrease (`PACER_DEFAULTS.decrease`).
 */
export const REFUTED_GUESS = PACER_DEFAULTS.decrease;

/** The fleet's paced answers are counted in buckets of this many store ms… */
export const FLEET_ANSWER_BUCKET_MS = 50;
/** …over a window of this many buckets. */
export const FLEET_ANSWER_BUCKETS = 6;
/** A rejection in this many latest buckets holds the fleet's rate from rising. */
export const FLEET_FRESH_BUCKETS = 2;
/** The fleet's delivery rate is read once its answers span at least this long. */
export const FLEET_DELIVERY_MIN_SPAN_MS = 200;
/**
 * A fleet rejected while it got D through counts for at most this × D. Rejected throughout
 * the window, D is the callee's rate, and a pacer alone cut to its measured rate sends at
 * it as it is: 1.1 × D held real herds (4 × 25 callers, nginx 100 r/s) at 6–7 requests per
 * 50 ms for 5 served, and met both targets in 13 of 20 against 16 of 20 at 1 × D.
 */
export const FLEET_DELIVERY_GAIN = 1;

/**
 * A fleet served in full while its tickets wait grows from what it got through,
 * doubling every this many ms, until a rejection shows the callee's rate.
 */
export const FLEET_GROWTH_DOUBLING_MS = 400;

/**
 * A spell of rejections (`spellRate`) caps the fleet's rate once it has lasted this long: the
 * pacer's default `maxSpacingMs`, the longest gap its rate readings span.
 */
export const FLEET_SPELL_MIN_MS = PACER_DEFAULTS.maxSpacingMs;

/** A spell of rejections ends once the fleet has been served, and not rejected, for this long. */
export const FLEET_SPELL_END_MS = 5_000;

/** The answers window's length, ms. */
const FLEET_ANSWER_WINDOW_MS = FLEET_ANSWER_BUCKETS * FLEET_ANSWER_BUCKET_MS;

/**
 * A spell also ends when a fleet that was served reports answers after a whole answers window
 * with none, while its queue is spaced at least this many gaps to the window: at that pace a
 * fleet with callers waiting answers several times per window, so the silence was no demand
 * (see `spellRate`). Slower paces (a limit of 10 per 10 s, a search's probes) never end a
 * spell this way: their silences are the callee's.
 */
export const FLEET_IDLE_GAPS = 4;

/**
 * No shared end (wait hint, throttling, a contribution's life, an epoch's start) lasts beyond
 * this from now: the longest hint a caller accepts by default (`maxRetryAfterMs`). Ends are
 * only ever raised, so one written further out would hold the fleet for good.
 */
export const FLEET_MAX_HINT_MS = RETRY_DEFAULTS.maxRetryAfterMs;

/**
 * A contributed rate above this (requests per ms: a million a second) is no measurement: it is
 * dropped, as is the estimate a process would adopt from it.
 */
export const FLEET_MAX_RATE = 1_000;

/** The fleet's queue re-spaces when its rate moved this far from the one its epoch was spaced at. */
export const FLEET_RESPACE_DRIFT = 0.1;

/**
 * First tries push the fleet's waiting tickets at most this many gaps beyond now
 * (`unpacedSent`), as they push a pacer's own queue (`UNPACED_HOLD_GAPS`): a first try the
 * callee rejects took none of its capacity.
 */
export const FLEET_UNPACED_HOLD_GAPS = UNPACED_HOLD_GAPS;

/**
 * First tries reported within this long mean callers are still arriving (`arriving`): about
 * one sync period of each process (80 ms) and a round trip.
 */
export const FLEET_ARRIVALS_MS = 100;

/**
 * Whether first tries left unpaced were reported within `FLEET_ARRIVALS_MS` (a report time
 * ahead of now was not written by this ledger's clock: none).
 */
function arriving(p: PaceLedger, nowMs: number): boolean {
  return p.unpacedAt >= 0 && p.unpacedAt <= nowMs && nowMs - p.unpacedAt <= FLEET_ARRIVALS_MS;
}

/** The slot of ticket `k` under `epoch` (−∞: due before the epoch began). */
export function slotOf(epoch: PaceEpoch, k: number): number {
  return k < epoch.baseTicket ? Number.NEGATIVE_INFINITY : epoch.baseAt + (k - epoch.baseTicket) * epoch.gap;
}

/** The first ticket of the queue not yet due at `nowMs` (the next to book when none waits). */
function firstWaiting(p: PaceLedger, nowMs: number): number {
  let first = p.baseTicket;
  if (nowMs >= p.baseAt) first = p.gap > 0 ? first + Math.floor((nowMs - p.baseAt) / p.gap) + 1 : p.ticket;
  return Math.min(first, p.ticket);
}

/**
 * Re-spaces the queue at `rate` (requests per ms) when it drifted or a wait hint holds it,
 * no earlier than `ready` = max(now, hintUntil): tickets already due keep their turn, the
 * first waiting one leaves one new gap after the last due one (at once, when none of the
 * epoch's tickets is due yet) — while first tries keep arriving, no earlier than where they
 * pushed it (`unpacedSent`). An empty queue starts a new epoch the same way.
 */
function respace(p: PaceLedger, nowMs: number, rate: number): void {
  const gap = 1 / rate;
  const first = firstWaiting(p, nowMs);
  // An epoch starting beyond the longest hint was not spaced by this ledger: re-spaced now.
  if (p.baseAt > nowMs + FLEET_MAX_HINT_MS + gap) p.gap = 0;
  const drift = p.gap / gap - 1;
  const steady = drift <= FLEET_RESPACE_DRIFT && drift >= -FLEET_RESPACE_DRIFT;
  if (first < p.ticket && steady && p.baseAt >= p.hintUntil) return;
  const lastDue = first > p.baseTicket ? slotOf(p, first - 1) : nowMs - gap;
  // While first tries keep arriving, the head they pushed stays (up to the push's own cap):
  // re-spaced from the last due ticket, it went out into a callee they keep full.
  const held = arriving(p, nowMs) && p.gap > 0 ? Math.min(slotOf(p, first), nowMs + FLEET_UNPACED_HOLD_GAPS * gap) : nowMs;
  p.baseTicket = first;
  p.baseAt = Math.max(nowMs, p.hintUntil, lastDue + gap, held);
  p.gap = gap;
}

/**
 * Counts one report's paced answers into the window and returns the fleet's delivery rate,
 * served / span over the window (the span starting no earlier than the first report in it),
 * requests per ms, and whether the window holds a rejection — `undefined` while it holds no
 * answer or spans less than `FLEET_DELIVERY_MIN_SPAN_MS`.
 */
function fleetDelivery(
  p: PaceLedger,
  nowMs: number,
  served: number,
  rejected: number,
): { rate: number | undefined; rejected: boolean; fresh: boolean; quiet: boolean } | undefined {
  const bucket = Math.floor(nowMs / FLEET_ANSWER_BUCKET_MS);
  const oldest = bucket - FLEET_ANSWER_BUCKETS + 1;
  let servedSum = 0;
  let rejectedSum = 0;
  let fresh = rejected > 0;
  for (const [b, [s, r]] of p.answers) {
    if (b < oldest || b > bucket + 1) p.answers.delete(b);
    else {
      servedSum += s;
      rejectedSum += r;
      if (r > 0 && b >= bucket - FLEET_FRESH_BUCKETS + 1) fresh = true;
    }
  }
  const quiet = servedSum === 0 && rejectedSum === 0;
  if (served > 0 || rejected > 0) {
    if (quiet) p.answersFrom = nowMs;
    const cell = p.answers.get(bucket);
    if (cell === undefined) p.answers.set(bucket, [served, rejected]);
    else {
      cell[0] += served;
      cell[1] += rejected;
    }
    servedSum += served;
    rejectedSum += rejected;
  }
  if (servedSum + rejectedSum === 0) return undefined;
  const span = nowMs - Math.max(oldest * FLEET_ANSWER_BUCKET_MS, p.answersFrom);
  return { rate: span < FLEET_DELIVERY_MIN_SPAN_MS ? undefined : servedSum / span, rejected: rejectedSum > 0, fresh, quiet };
}

/**
 * Counts one report's paced answers into the fleet's spell of rejections and returns what the
 * fleet got through over it, requests per ms — `undefined` outside a spell or while it is
 * younger than `FLEET_SPELL_MIN_MS`. A spell begins with a reported rejection and ends once
 * the fleet has been served, with no rejection, for `FLEET_SPELL_END_MS` (waiting with nothing
 * answered ends none: a window's wait holds no rejection either).
 *
 * The delivery window (`fleetDelivery`) is 300 ms long: against a limit metered over seconds
 * or minutes it reads the burst a reopened window serves (60 in a few ms, for 60 a minute),
 * and between reopenings it holds no answer at all — so the processes' own shares set the
 * fleet's rate (simulated, four processes against 60 a minute: 4–70/s summed, for a callee's
 * 1/s; 3.96× the bound's requests). Over the spell, served ÷ time is the callee's rate to this
 * fleet, whatever its meter: a reopened window's burst counts once, spread over the wait
 * before it. The price: a spell that began while the callee served nothing (an outage) counts
 * that time too, so a fleet whose callee comes back is held near `minRate` until it has been
 * served for `FLEET_SPELL_END_MS`, or grows sooner (everything served while tickets wait).
 *
 * Nor does a spell count a fleet's idle time: served, then silent for a whole answers window
 * (`quiet`: the window held no answer before this report) at a pace of at least
 * `FLEET_IDLE_GAPS` gaps per window, the fleet had nothing to send, and its next answers end
 * the spell. Counted, the pauses between herds of a service's traffic read as the callee's
 * rate: after three herds 1.5 s apart, a fleet of four whose next callers arrived over 2 s
 * left their backlog at ~60/s of 100/s (simulated, a token bucket: 1.25–1.31× the bound's
 * time; real processes on a real redis-server against a real token bucket, the same).
 */
function spellRate(p: PaceLedger, nowMs: number, served: number, rejected: number, quiet: boolean): number | undefined {
  if (p.spellFrom >= 0 && p.spellServedSince >= 0) {
    // Served, then nothing to ask for a whole window at a pace that answers several times in
    // one: the fleet had no demand, and a spell counting that time reads it as the callee's.
    const idle = quiet && served + rejected > 0 && p.gap > 0 && p.gap * FLEET_IDLE_GAPS <= FLEET_ANSWER_WINDOW_MS;
    if (idle || nowMs - p.spellServedSince >= FLEET_SPELL_END_MS) p.spellFrom = -1;
  }
  if (p.spellFrom < 0) {
    if (!(rejected > 0)) return undefined;
    p.spellFrom = nowMs;
    p.spellServed = 0;
  }
  p.spellServed += served;
  if (rejected > 0) p.spellServedSince = -1;
  else if (served > 0 && p.spellServedSince < 0) p.spellServedSince = nowMs;
  const span = nowMs - p.spellFrom;
  return span < FLEET_SPELL_MIN_MS ? undefined : p.spellServed / span;
}

/**
 * Refreshes `owner`'s contribution (when it has one) and combines the live ones, with S the
 * sum of the s measured shares, G the largest of the g guesses at the whole rate:
 *
 *     estimate = S                                    (no guess)
 *              = G                                    (no share yet)
 *              = max(S, min(G, S × (s + g) / s))      (both)
 *     rate     = max(estimate, fastest probing rate)
 *
 * Shares add up (each process measures the part of the callee it gets); guesses at the whole
 * rate do not (four processes that each probed the callee alone know one rate, not four), and
 * a guess counts only up to what the measured shares imply for the whole fleet — a process
 * whose own requests have not yet tested its guess would otherwise hold the fleet above the
 * callee's rate.
 *
 * A cut anywhere tests every guess. When a process's contribution turns from a guess (or a
 * probe) into a measured share, its requests — spaced in the fleet's queue — were rejected at
 * the fleet's current rate R: every guess then counts for at most β × R (`REFUTED_GUESS`),
 * for as long as measured shares keep coming in. Without it, the start-up guesses of the
 * processes not yet rejected held the whole fleet at twice the callee's rate after the first
 * process had cut (simulated herd, 4 × 25 callers: 211 → 207 requests).
 *
 * Over a spell of rejections the fleet counts for at most what it got through since the spell
 * began (`spellRate`: the 300 ms window below misreads limits metered over seconds or more).
 *
 * A fleet that is rejected counts for at most `FLEET_DELIVERY_GAIN` × what it got through
 * (`fleetDelivery`): each process's share is capped by its own delivery rate already, but a
 * peak read from a quarter of the answers runs high, and four such peaks summed to 1.4–1.6 ×
 * the callee's rate on real processes (nginx, 4 × 25 callers); the fleet's own count has all
 * the answers. Without a rejection in the window the estimate stands: the room to grow. And
 * while every answer is served and tickets wait, the queue holds the fleet back: the estimate
 * is at least what the fleet got through, doubling every `FLEET_GROWTH_DOUBLING_MS`
 * (shares alone grew by at most 10 % of their own delivery per window: real herds sat at
 * 40–60/s, every request served, for up to 800 ms).
 *
 * While first tries keep arriving (`arriving`) and the fleet is rejected, the estimate is
 * what it got through, no less: the callee is full, and of first tries the pacers never held
 * (served and rejected answers count them too). Cut below it — each process's share was
 * measured on the few retries let through beside them — the backlog left at a fifth of the
 * callee's rate once the arrivals stopped (simulated, four processes, 400 callers over 2 s
 * against a token bucket: 1.41× the bound's time).
 */
function contribute(p: PaceLedger, nowMs: number, r: PaceBookRequest | PaceSyncRequest): { rate: number; estimate: number } {
  const { owner, rate, contributionMs } = r;
  const kind = r.kind ?? RATE_SHARE;
  const served = r.served ?? 0;
  const rejected = r.rejected ?? 0;
  const unpaced = r.unpaced ?? 0;
  if (unpaced > 0) p.unpacedAt = nowMs;
  // A cap written to last beyond the longest hint was not set by this ledger: none.
  if (p.guessCapUntil > nowMs + FLEET_MAX_HINT_MS) p.guessCapUntil = 0;
  if (rate > 0) {
    if (kind === RATE_SHARE) {
      const before = p.contributions.get(owner);
      // This process's first measured cut: its requests, spaced in the fleet's queue, were
      // rejected at the fleet's rate R, so no guess may count for more than β × R.
      if (before !== undefined && before[2] !== RATE_SHARE && before[1] > nowMs && p.gap > 0) {
        p.guessCap = REFUTED_GUESS / p.gap;
        p.guessCapUntil = nowMs + contributionMs;
      } else if (p.guessCapUntil > nowMs) p.guessCapUntil = nowMs + contributionMs;
    }
    // A life beyond the longest hint would read as a hostile entry and be dropped.
    p.contributions.set(owner, [rate, nowMs + Math.min(contributionMs, FLEET_MAX_HINT_MS), kind]);
  }
  const cap = p.guessCapUntil > nowMs ? p.guessCap : Number.POSITIVE_INFINITY;
  let shares = 0;
  let sharing = 0;
  let whole = 0;
  let guessing = 0;
  let probe = 0;
  for (const [id, [r, until, k]] of p.contributions) {
    if (until <= nowMs || until > nowMs + FLEET_MAX_HINT_MS || !(r >= 0 && r <= FLEET_MAX_RATE)) p.contributions.delete(id);
    else if (k === RATE_SHARE) {
      shares += r;
      sharing++;
    } else if (k === RATE_WHOLE) {
      const guess = Math.min(r, cap);
      if (guess > whole) whole = guess;
      guessing++;
    } else if (r > probe) probe = r;
  }
  let estimate = shares;
  if (guessing > 0) {
    estimate = whole;
    if (sharing > 0) {
      // A guess counts up to what the measured shares imply for the whole fleet.
      const implied = (shares * (sharing + guessing)) / sharing;
      if (implied < estimate) estimate = implied;
      if (shares > estimate) estimate = shares;
    }
  }
  const delivered = fleetDelivery(p, nowMs, served, rejected);
  // Over a spell of rejections the fleet counts for at most what it got through (the growth
  // below may still raise it: everything served with tickets waiting says the callee has room).
  const spell = spellRate(p, nowMs, served, rejected, delivered?.quiet === true);
  if (spell !== undefined && estimate > spell) estimate = spell;
  // Rejected just now: the fleet's rate may fall, not rise, whatever a process's start-up
  // guess says.
  if (delivered?.fresh && p.gap > 0 && estimate > 1 / p.gap) estimate = 1 / p.gap;
  if (delivered?.rate === undefined) p.growFrom = 0;
  else {
    const cap = FLEET_DELIVERY_GAIN * delivered.rate;
    if (delivered.rejected) {
      p.growFrom = 0;
      if (estimate > cap || arriving(p, nowMs)) estimate = cap;
    } else if (p.gap > 0 && slotOf(p, p.ticket - 1) > nowMs) {
      // Everything served and tickets waiting: the queue, not the callee, holds the fleet back.
      if (p.growFrom === 0) p.growFrom = nowMs;
      const floor = cap * 2 ** ((nowMs - p.growFrom) / FLEET_GROWTH_DOUBLING_MS);
      if (estimate < floor) estimate = floor;
    } else p.growFrom = 0;
  }
  return { rate: Math.max(estimate, probe), estimate };
}

/**
 * The rate the fleet's queue is spaced at: the fleet's (`contribute`), never below `minRate` —
 * unless the fleet only searches (no estimate, a probing rate): a search spaces its probes by
 * the time it has waited, beyond `maxSpacingMs` (see `Pacer`), and the floor held a fleet's
 * search at one probe per `maxSpacingMs` (simulated, four processes against 60 a minute: 71
 * requests between the first burst and the reopening, now 24; a pacer alone sends 23).
 */
function queueRate(fleet: { rate: number; estimate: number }, minRate: number): number {
  return fleet.estimate === 0 && fleet.rate > 0 ? fleet.rate : Math.max(fleet.rate, minRate);
}

/**
 * First tries sent unpaced while the fleet paced (`n`, reported by one process): each took the
 * slot due next, so the waiting tickets move a gap later per first try, the head never beyond
 * `FLEET_UNPACED_HOLD_GAPS` gaps from now. Not while the fleet only searches (no estimate:
 * its probes are spaced by what they learn) nor under a wait hint. Without it, retries left at
 * the fleet's whole rate into a callee the arrivals already filled (simulated, four
 * processes, 400 callers over 2 s at twice the callee's rate: 1.18–1.21× the bound's requests).
 */
function unpacedSent(p: PaceLedger, nowMs: number, n: number, estimate: number): void {
  if (!(n > 0) || !(p.gap > 0) || !(estimate > 0) || p.hintUntil > nowMs) return;
  const first = firstWaiting(p, nowMs);
  const head = slotOf(p, first);
  const next = Math.min(Math.max(head, nowMs) + n * p.gap, nowMs + FLEET_UNPACED_HOLD_GAPS * p.gap);
  if (!(next > head)) return;
  p.baseTicket = first;
  p.baseAt = next;
}

/**
 * Books one ticket in the fleet's queue (re-spaced first if the fleet's rate drifted, see
 * `PaceLedger`), spaced at the fleet's rate (`queueRate`).
 */
export function bookSlot(p: PaceLedger, nowMs: number, r: PaceBookRequest): PaceBookReply {
  const fleet = contribute(p, nowMs, r);
  if (p.hintUntil > nowMs + FLEET_MAX_HINT_MS) p.hintUntil = nowMs + FLEET_MAX_HINT_MS;
  respace(p, nowMs, queueRate(fleet, r.minRate));
  unpacedSent(p, nowMs, r.unpaced ?? 0, fleet.estimate);
  // A slot after the caller's deadline is not booked (see `PaceBookRequest.latest`).
  const ticket = r.latest !== undefined && slotOf(p, p.ticket) > r.latest ? 0 : p.ticket++;
  return { now: nowMs, ticket, baseTicket: p.baseTicket, baseAt: p.baseAt, gap: p.gap, estimate: fleet.estimate };
}

/** A pacer's periodic sync (see `PaceSyncRequest`): also re-spaces the queue when its rate drifted. */
export function syncPace(p: PaceLedger, nowMs: number, r: PaceSyncRequest): PaceSyncReply {
  const fleet = contribute(p, nowMs, r);
  if (r.active && nowMs + r.quietMs > p.activeUntil) p.activeUntil = nowMs + r.quietMs;
  if (r.hintMs > 0 && nowMs + r.hintMs > p.hintUntil) p.hintUntil = nowMs + r.hintMs;
  // Ends are only ever raised: none lasts beyond the longest hint from now.
  if (p.activeUntil > nowMs + FLEET_MAX_HINT_MS) p.activeUntil = nowMs + FLEET_MAX_HINT_MS;
  if (p.hintUntil > nowMs + FLEET_MAX_HINT_MS) p.hintUntil = nowMs + FLEET_MAX_HINT_MS;
  if (slotOf(p, p.ticket - 1) > nowMs) respace(p, nowMs, queueRate(fleet, r.minRate));
  unpacedSent(p, nowMs, r.unpaced ?? 0, fleet.estimate);
  return {
    now: nowMs,
    activeUntil: p.activeUntil,
    hintUntil: p.hintUntil,
    baseTicket: p.baseTicket,
    baseAt: p.baseAt,
    gap: p.gap,
    estimate: fleet.estimate,
  };
}
