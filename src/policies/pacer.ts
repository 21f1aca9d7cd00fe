import { OptionsValidator } from '../options/validate.js';
import { DeliveryRate } from './delivery-rate.js';

/** What one answer told the pacer: served, rejected for load (429/503), or timed out. */
export type PacerSignal = 'ok' | 'rejected' | 'timeout';

/**
 * What a throttling pacer's `rate()` estimates, for a fleet that combines its processes'
 * rates (`rateKind`): `'share'`, the part of the callee's capacity this pacer measured its own
 * requests get; `'whole'`, a guess at the callee's whole rate (start-up from a served probe or
 * from an adopted rate, before a cut measured anything); `'probe'`, the search's probing rate.
 */
export type PacerRateKind = 'share' | 'whole' | 'probe';

export interface PacerOptions {
  /**
   * β: the allowed rate falls to β × W when paced requests are still rejected, in (0, 1).
   * Gentler than CUBIC's 0.7 because a rejection is cheap, explicit feedback, not lost
   * data: the send rate stays within about (1 − β) of the callee's capacity. @default 0.85
   */
  decrease?: number;
  /**
   * The allowed rate never exceeds this × the peak measured delivery rate (≥ 1): probing
   * runs ahead of what the callee proved it serves by this much at most. Above BBR's 1.25
   * so that a low first estimate is outgrown quickly (×1.5 per estimator window); the cut
   * bounds the overshoot. @default 1.5
   */
  probeGain?: number;
  /**
   * K: time for the rate to climb back to W after a cut, in ms; it then keeps probing
   * upward, slowly at first. @default 1_000
   */
  recoveryMs?: number;
  /**
   * Throttling ends after this long without a rejection or timeout, once nobody is waiting
   * and any wait hint has passed. @default 2_000
   */
  quietMs?: number;
  /**
   * Window of the delivery-rate estimator (and of its peak filter), in ms: long enough to
   * hold several answers, short enough that the estimate follows a change within about
   * half of it. @default 500
   */
  windowMs?: number;
  /** Buckets the estimator's window is split into. @default 10 */
  buckets?: number;
  /**
   * Longest gap between two paced sends, in ms: while throttling, at least one request per
   * `maxSpacingMs` goes out, so a callee rejecting everything is still probed (a floor on
   * the learned rate, expressed as a time). @default 1_000
   */
  maxSpacingMs?: number;
  /** Whether the runtime paces first attempts too, not only retries. @default false */
  paceFirstAttempts?: boolean;
}

export const PACER_DEFAULTS = {
  decrease: 0.85,
  probeGain: 1.5,
  recoveryMs: 1_000,
  quietMs: 2_000,
  windowMs: 500,
  buckets: 10,
  maxSpacingMs: 1_000,
  paceFirstAttempts: false,
} as const satisfies PacerOptions;

const KEYS = [
  'decrease',
  'probeGain',
  'recoveryMs',
  'quietMs',
  'windowMs',
  'buckets',
  'maxSpacingMs',
  'paceFirstAttempts',
] as const;

/** RFC 6298's gain for the smoothed round-trip time, used only when `sentAtMs` is not given. */
const RTT_GAIN = 1 / 8;

/** Each paced success before the first cut raises the rate by this factor (doubling every 4). */
const STARTUP_GAIN = 2 ** (1 / 2);

/** Start-up grows by at most this many STARTUP_GAIN steps at once (×4). */
const STARTUP_MAX_STEPS = 4;

/** Rejections without any success for this many gaps at the new rate cut again. */
const STALL_GAPS = 16;

/** A cut with nothing measured on paced requests yet halves (TCP's multiplicative decrease). */
const BLIND_CUT = 0.5;

/** Flight successes in a row, each slower than every rejection, that make a slow flight. */
const FLIGHT_RUN = 3;

/** Successes between two reopenings that measure the callee's rate (within ±1 / this). */
const SATURATED_MIN = 4;

/** The queue is re-spaced when the allowed rate has moved this far from the one it was spaced at. */
const RESPACE_DRIFT = 0.1;

/** A count of at least this many served in a row reads a window (fewer: a bucket, or what other callers left). */
const WINDOW_MIN = 4;

/** The chunk's epoch gap: tickets behind the one due are held until an answer moves it on. */
const CHUNK_HOLD_MS = 1e9;

/** A rate measured from the search's probe holds if no send gap since exceeded 1 / it by more than this (real sends wander from their slots by a few ms). */
const SEED_GAP_SLACK = 2;

/** A wait that only yields: answers arriving at the same instant are read first. */
const RECHECK_MS = 0.001;

const SEARCH = 1;
const CRUISE = 2;

/**
 * Adaptive pacing: learns how fast the callee will serve us and, while it is
 * throttling us, releases requests at that rate instead of letting each sleep on its own.
 * No rate is configured or written anywhere: every rate below comes from measurement.
 *
 * Protocol (sans-IO, every method takes `nowMs`, monotonic ms):
 *
 *     let wait = pacer.reserve(now);          // before a retry (and a first attempt if paceFirstAttempts)
 *     const ticket = pacer.lastTicket;        // 0: not throttling, send now
 *     while (wait > 0) { sleep(wait); wait = pacer.holdFor(ticket, now); }
 *     … send at sentAt …                      // or pacer.release(ticket, now) when giving up
 *     pacer.onResult(now, 'ok' | 'rejected' | 'timeout', hintMs, sentAt);   // every answer
 *
 * Report every answer, successes included: they are what measures the callee. A booking is a
 * ticket in a queue whose slots move when the pacer learns more (a cut spaces the waiting
 * requests further apart; a better estimate brings them closer), so a caller asks again when
 * its wait ends: `holdFor` returns the wait until its slot or until the next check, whichever
 * comes first (a long wait is checked again half-way, so an earlier slot is noticed). A caller
 * that gives up hands its slot back with `release`; the next booking takes it.
 *
 * **Healthy** (not throttling): `reserve` returns 0 and books nothing; the only work per
 * answer is the delivery-rate estimator's O(1) update.
 *
 * **Search** — on the first rejection (429/503), timeout or wait hint. The answers so far
 * are usually one flight (a herd sent at once): its delivery rate D₀ (`DeliveryRate`) says how
 * many the callee served per round trip, which is its rate only when it needed the whole round
 * trip to serve them. A token bucket that lets a burst through and rejects the rest at once
 * makes D₀ burst / rtt — far above its rate. So the first retries go out as probes with
 * doubling gaps, at most one per `maxSpacingMs`:
 *
 *     probe k at  b + g₀ × (2^(k+1) − 1),   g₀ = 1 / D₀,   b = max(now, hintUntil)
 *
 * wasting about log₂(D₀ / rate) requests, whatever the latency. The first probe served ends the
 * search: probe sent at b + h, the latest rejected probe sent at b + l (l = 0 if none):
 *
 *     x₁ = 1 / l   (or 1 / h when no probe was rejected: D₀ held)
 *
 * — the callee restored capacity between l and h, so x₁ errs high by at most 2×, which the
 * first cut corrects with a measurement. That holds for a bucket, which restored one token; a
 * fixed window restored all of its N, and x₁ is N× low. So after a bracketed probe, a pacer
 * alone counts: the waiting requests go one per round trip while they are served (only when
 * the flight was served at least 4 and that many round trips fit within l — otherwise a
 * bucket's one token would cost a rejected request for nothing). S ≥ 4 served in a row is a
 * window: the level is S over the middle of (l, h], and the waiting requests probe for its
 * reopening from probe + l; the first served measures T, the rate is S / T. A probe sent after
 * probe + h and still rejected says it was no window (a bucket others share): start-up goes on
 * from x₁. Fewer than 4 served: start-up from x₁. A success to a request sent before the search that
 * took more than twice as long as the rejections (the callee spends time serving: a queue, a
 * slot), or the third such success in a row slower than every rejection, ends it too, at
 * x₁ = the flight's successes over the callee's share of their time — from the first send to
 * the last answer, less the flight's fastest rejection's round trip (the way there and back,
 * not serving) — the best of that read at any of the flight's answers, and
 * raised as the rest of the flight is answered (parked callers check again every quarter of a
 * service time meanwhile).
 *
 * **Cruise** — the allowed rate, with W the level and D̂ the peak delivery rate measured on
 * requests sent since the search ended (flows only, `DeliveryRate`):
 *
 *     startup (until a measured cut):  W = x₁, × 2^(1/2) per windowMs / buckets / 2 that
 *                 the rate held (proved by a paced success sent that much after the last
 *                 growth; at most 4 steps at once)
 *     then, CUBIC made scale-free (RFC 9438), β = `decrease`, K = `recoveryMs`:
 *     u(t)    = max(−1, (t − tₚ) / K)
 *     rate(t) = max(1 / maxSpacingMs, min(probeGain × D̂, W × (1 + (1 − β) × u³)))
 *
 * **Saturation** — a reopening is a paced success sent after a rejected request with nothing
 * served in between: the callee had just run out and has capacity again (a fixed window's
 * boundary, a bucket's next token). Between two reopenings it restored exactly what it served,
 * so S successes sent between them over the time between them (each taken half-way from the
 * last rejected send) is its rate, Dₛ — a fixed window's N per window, which no flow peak
 * measures (its bursts at a window's start inflate D̂).The probe that ended the search is a reopening too (the
 * flight's rejections, then capacity), from its send time — as long as no send since left a
 * gap longer than 2 / Dₛ: start-up from a low guess leaves gaps in which a window expires
 * half-used, and what was served then is not what the callee had.
 *
 * **Cutting** — when a request sent after the last cut is rejected or times out:
 *
 *     W = min(rate(now), Dₛ if measured within windowMs, else D̂)
 *         (rate(now) × 1/2 while neither is known)      tₚ = now + K  (now, when W = Dₛ:
 *         the callee's measured rate is sent at as it is, not β below it)
 *
 * A blind cut of a bracketed x₁ keeps start-up going (halving a guess within 2× may land
 * below the callee's rate), capped at probeGain × the peak paced requests deliver. So does a cut while starting up from a bracket: D̂ was measured on
 * the ramp, mostly below the callee's rate (a fixed window that served 2 of its 10 a window
 * says nothing of the 10); start-up goes on from β × W, below the rate that overshot and
 * probeGain × D̂, until Dₛ is measured, which then becomes W; likewise the first Dₛ after the cut that ended
 * any start-up replaces that cut's level (measured on the ramp too). Every waiting request is
 * re-spaced at the new rate at once: requests sent from now on leave at it, so only their
 * answers may cut again (once per round trip, as in TCP).
 *
 * **Pacing** — tickets in order; slot of the j-th waiting ticket = base + j / rate (or the
 * probe times above), base no earlier than the last slot due + 1 / rate and any wait hint.
 * Re-spacing is O(1): slots are computed from the ticket number, never stored.
 *
 * **Leaving** — after `quietMs` without rejection or timeout, once the queue has drained and
 * any hint has passed: back to zero cost.
 */
export class Pacer {
  readonly decrease: number;
  readonly recoveryMs: number;
  readonly quietMs: number;
  readonly windowMs: number;
  readonly buckets: number;
  readonly maxSpacingMs: number;
  readonly probeGain: number;
  /** Read by the runtime: pace first attempts too, not only retries. */
  readonly paceFirstAttempts: boolean;

  private readonly estimator: DeliveryRate;
  /**
   * The same measure over answers to requests sent since the search ended — made when a
   * cruise first starts: a lane that never throttles never needs it (its numbers are 560 B).
   */
  private pacedRate: DeliveryRate | undefined;
  /**
   * Answers counted into `pacedRate` so far: [served, rejected]. A fleet adds up its
   * processes' counts (see `FleetLink`): what the fleet as a whole got through.
   */
  readonly pacedAnswers: [served: number, rejected: number] = [0, 0];
  private readonly minRate: number;
  /** Start-up grows the rate at most this often: half a bucket of the estimator. */
  private readonly growthMs: number;
  private mode = 0;
  /** Cruise before its first cut: the rate grows with every paced success. */
  private startup = false;
  /** W: the level the cubic curve returns to, requests per ms. */
  private level = 0;
  /** probeGain × peak paced delivery rate. */
  private ceiling = Number.POSITIVE_INFINITY;
  /** tₚ: when the curve is back at W. */
  private plateauAt = 0;
  /** Rejections of requests sent before this were sent at an older rate and don't cut. */
  private cutGateAt = 0;
  private lastRejectAt = Number.NEGATIVE_INFINITY;
  private hintUntil = Number.NEGATIVE_INFINITY;
  private srtt: number | undefined;
  /** Smoothed latency of successes: how long the callee takes to serve one. */
  private okLatency: number | undefined;
  private cutCount = 0;
  private lastCutAt = Number.NEGATIVE_INFINITY;
  /** A request sent after the last cut was served. */
  private servedSinceCut = true;
  private pacedCount = 0;

  // Saturation points (cruise, paced requests, by send time): a reopening is a success sent
  // after a rejected request with nothing served between them — the callee had just run out
  // and has capacity again (a fixed window's boundary, a bucket's next token).
  /** Send time of the latest reopening (NaN: none yet in this cruise). */
  private reopenedAt = Number.NaN;
  /** Paced successes sent since `reopenedAt` (answered so far). */
  private servedSinceReopen = 0;
  /** The latest answer by send order was a rejection: the next success sent after it reopens. */
  private exhausted = false;
  private lastOkSent = Number.NEGATIVE_INFINITY;
  private lastRejectSent = Number.NEGATIVE_INFINITY;
  /** The rate measured between the last two reopenings (per ms; NaN: none), and when. */
  private saturatedRate = Number.NaN;
  private saturatedAt = Number.NEGATIVE_INFINITY;
  /** The latest reopening is the probe that ended the search. */
  private probeReopened = false;
  /** The longest gap between paced sends since that probe (answers in send order). */
  private seedGap = 0;

  // Search.
  private searchBase = 0;
  private rejectedProbeAt = Number.NEGATIVE_INFINITY;
  /** Latency of the slowest rejection in this search (+∞: none yet). */
  private rejectLatency = Number.POSITIVE_INFINITY;
  /** Latency of the fastest rejection of the flight: a round trip with no serving in it. */
  private pathLatency = Number.POSITIVE_INFINITY;
  /** The highest `flightRate` read at any success of this search (per ms; 0: none). */
  private flightPeak = 0;
  /** Answers to the flight served in a row in this search, each slower than every rejection. */
  private flightRun = 0;
  /** A flight answer broke that run (a rejection after it, or a success no slower than one). */
  private flightMixed = false;
  /** The slow flight that ended the search was a run (its answers: slower than every rejection). */
  private slowRun = false;
  /** When the latest rejection of the flight came back (-∞: none in this search). */
  private flightRejectAt = Number.NEGATIVE_INFINITY;
  private cruiseAt = 0;
  /** Startup: when the rate last grew (only answers to requests sent since then grow it again). */
  private grewAt = 0;
  /** The search ended on a slow flight's success: its later answers may raise the level. */
  private fromFlight = false;
  /** The level came from probes' bracket (within 2×), not from a measured rate. */
  private bracketed = false;
  /**
   * Start-up began from a guess — a probe bracket, or a first probe served, which only says
   * the callee had room then — not from a rate a flight measured: its first cut, measured on
   * the ramp, keeps start-up going (a real slot server's herd cut to a ramp's 50/s of 100/s
   * and climbed back for a second). Not after a wait hint: each overshoot then costs the hint.
   */
  private guessed = false;
  /** A wait hint came with this search's answers. */
  private searchHinted = false;
  /**
   * The level was set by the cut that ended start-up, on what the ramp delivered (mostly
   * below the callee's rate): the first rate measured between reopenings replaces it.
   */
  private rampLevel = false;
  /** The search ended on a probe served; g₀ of that search. */
  private startedFromProbe = false;
  /** The level came from a measurement of this pacer's own deliveries (`rateKind` 'share'). */
  private measuredShare = false;
  /** The level came from a cut to a measured delivery rate (since the search ended). */
  private cutMeasured = false;
  private probeGap = 1;
  /** When the flight that started the search was first sent (the callee's capacity was full). */
  private flightStart = 0;
  /**
   * Right after a bracketed probe was served: one request per round trip while they are
   * served, to count what the callee restored (a fixed window's N at once, a bucket's token).
   */
  private chunk = false;
  private chunkServed = 0;
  private chunkFrom = 0;
  private chunkUntil = 0;
  private chunkGap = 1;
  private chunkMax = 2;
  /** After a chunk: probing for the window's reopening (geometric gaps); the latest rejected. */
  private reprobe = false;
  private reprobeRejectedAt = Number.NEGATIVE_INFINITY;
  /** The bracket of the probe that ended the search, from the flight's first send: (low, high]. */
  private chunkLow = 0;
  private chunkHigh = 0;
  /** The level the bracket guessed (start-up's, had no chunk run). */
  private chunkGuess = 0;
  /** Start-up goes on after a blind cut: its ceiling follows what paced requests deliver. */
  private blindStartup = false;

  // The queue: tickets 1, 2, …; waiting ones are ≥ baseTicket, their slots follow the epoch.
  private nextTicket = 1;
  private baseTicket = 1;
  private baseAt = 0;
  /** Linear epoch: the gap between slots. Search epoch: g₀. */
  private gap = 1;
  private geometric = false;
  /** The slot of the ticket before baseTicket (the last one due when the queue was re-spaced). */
  private lastDueAt = Number.NEGATIVE_INFINITY;
  /** Tickets handed back while still ahead, ascending: the next bookings take them first. */
  private readonly released: number[] = [];
  private ticket = 0;
  /** The end of a queue this pacer's requests were booked in elsewhere (`followQueue`). */
  private followedUntil = Number.NEGATIVE_INFINITY;
  private respacedAt = Number.NaN;
  private generationCount = 0;

  constructor(options: PacerOptions = {}) {
    const v = new OptionsValidator('pacer');
    v.knownKeys(options, KEYS)
      .number('decrease', options?.decrease, 0, 1)
      .check(options?.decrease !== 0 && options?.decrease !== 1, `Expected \`decrease\` in (0, 1), got ${options?.decrease}`)
      .duration('recoveryMs', options?.recoveryMs, { min: 1 })
      .duration('quietMs', options?.quietMs)
      .duration('windowMs', options?.windowMs, { min: 1 })
      .integer('buckets', options?.buckets, 1)
      .duration('maxSpacingMs', options?.maxSpacingMs, { min: 1 })
      .number('probeGain', options?.probeGain, 1, 100)
      .boolean('paceFirstAttempts', options?.paceFirstAttempts);
    v.done();
    const d = PACER_DEFAULTS;
    this.decrease = options.decrease ?? d.decrease;
    this.recoveryMs = options.recoveryMs ?? d.recoveryMs;
    this.quietMs = options.quietMs ?? d.quietMs;
    this.windowMs = options.windowMs ?? d.windowMs;
    this.buckets = options.buckets ?? d.buckets;
    this.maxSpacingMs = options.maxSpacingMs ?? d.maxSpacingMs;
    this.probeGain = options.probeGain ?? d.probeGain;
    this.paceFirstAttempts = options.paceFirstAttempts ?? d.paceFirstAttempts;
    this.estimator = new DeliveryRate(this.windowMs, this.buckets);
    this.growthMs = this.windowMs / this.buckets / 2;
    this.minRate = 1 / this.maxSpacingMs;
  }

  /**
   * Reports one answer. `hintMs` is the callee's wait hint, if any (on any signal: a
   * success saying "remaining 0, reset in 10 s" is a hint too). `sentAtMs` is when that
   * attempt was sent: pass it — it is what measures the delivery rate and tells answers to
   * old requests from answers to paced ones. Without it the pacer assumes
   * `now − smoothed latency` (latency learned from the answers that did carry it, else 0).
   * `paced`: whether that attempt waited for this pacer's slot (`false` for a first try that
   * was never held): while searching, only paced attempts are probes. Unknown: judged by
   * its send time.
   */
  onResult(nowMs: number, signal: PacerSignal, hintMs?: number, sentAtMs?: number, paced?: boolean): void {
    let sent: number;
    let latency = Number.NaN;
    if (sentAtMs === undefined) sent = nowMs - (this.srtt ?? 0);
    else {
      sent = sentAtMs;
      latency = nowMs - sentAtMs;
      if (latency >= 0) this.srtt = this.srtt === undefined ? latency : this.srtt + RTT_GAIN * (latency - this.srtt);
    }
    const ok = signal === 'ok';
    if (ok && latency >= 0)
      this.okLatency = this.okLatency === undefined ? latency : this.okLatency + RTT_GAIN * (latency - this.okLatency);
    this.estimator.record(nowMs, sent, ok);
    if (this.mode === CRUISE && sent >= this.cruiseAt) {
      if (this.probeReopened && sent > this.lastOkSent && sent > this.lastRejectSent) {
        const g = sent - Math.max(this.lastOkSent, this.lastRejectSent);
        if (g > this.seedGap) this.seedGap = g;
      }
      this.pacedRate?.record(nowMs, sent, ok);
      this.pacedAnswers[ok ? 0 : 1]++;
      this.saturation(nowMs, sent, ok);
    }
    if (hintMs !== undefined && hintMs > 0) {
      const until = nowMs + hintMs;
      if (until > this.hintUntil) {
        this.hintUntil = until;
        if (this.mode !== 0 && this.baseAt < until) this.respace(nowMs, this.geometric, this.gap);
      }
      if (this.mode === 0) this.enter(nowMs);
      if (this.mode === SEARCH) this.searchHinted = true;
    }
    if (ok) {
      if (this.mode === SEARCH) {
        const f = this.estimator.flightRate(nowMs, this.pathLatency);
        if (f !== undefined && f > this.flightPeak) this.flightPeak = f;
        this.searchSuccess(nowMs, sent, latency, paced !== false);
      } else if (this.mode === CRUISE) this.cruiseSuccess(nowMs, sent, latency);
      return;
    }
    this.lastRejectAt = nowMs;
    if (this.mode === 0) {
      this.enter(nowMs);
      if (latency >= 0) this.rejectLatency = this.pathLatency = latency;
      return;
    }
    if (this.mode === SEARCH) {
      // The slowest rejection of the search: "served slowly" must be slower than rejections
      // ever are. Against the fastest one, latencies that merely vary (lognormal, σ 0.5) made
      // a success slower than twice it common, and ended searches on a false slow flight
      // (simulated token bucket, 100 callers: 224–253 requests over six seeds → 194–197).
      if (latency >= 0 && (latency > this.rejectLatency || this.rejectLatency === Number.POSITIVE_INFINITY))
        this.rejectLatency = latency;
      // The way there and back as the flight met it: a probe sent once the burst is through
      // comes back in a fraction of it (real express-queue: 1.4–2 ms against the flight's
      // 40–80 ms) and made the flight's serving time look that much longer (68/s for 100/s).
      if (latency >= 0 && latency < this.pathLatency && sent < this.searchBase) this.pathLatency = latency;
      if (paced !== false && sent >= this.searchBase && sent > this.rejectedProbeAt) this.rejectedProbeAt = sent;
      if (sent < this.searchBase) {
        if (this.flightRun > 0) this.flightMixed = true;
        this.flightRejectAt = nowMs;
      }
      return;
    }
    if (this.chunk) {
      if (sent >= this.cruiseAt) this.endChunk(nowMs);
      return;
    }
    if (this.reprobe) {
      if (sent >= this.cruiseAt && sent > this.reprobeRejectedAt) this.reprobeRejectedAt = sent;
      if (sent > this.chunkFrom + this.chunkHigh) this.refuteWindow(nowMs);
      return;
    }
    // One cut per episode: after a cut, only once a request sent since has been served (the
    // callee serves again: a fixed window reset, a bucket refilled) may a later rejection cut
    // again — or, if nothing is served at all, after a long stretch at the new rate.
    if (sent > this.cutGateAt && (this.servedSinceCut || sent - this.lastCutAt > STALL_GAPS / this.allowed(nowMs)))
      this.cut(nowMs);
  }

  /**
   * Books a send slot: returns the ms to wait before asking again (`holdFor` with
   * `lastTicket`), 0 to send now (always 0 when not throttling). Call it once per request
   * that will be sent; the slot is held until it is due or handed back (`release`).
   */
  reserve(nowMs: number): number {
    this.ticket = 0;
    if (!this.throttling(nowMs)) return 0;
    this.adjust(nowMs);
    let ticket = 0;
    while (this.released.length > 0) {
      const t = this.released.shift() as number;
      if (this.slotOf(t) > nowMs) {
        ticket = t;
        break;
      }
    }
    if (ticket === 0) {
      // Nobody booked for a while: the schedule is behind, and a slot in the past would send
      // a burst. The queue starts again from now (probes keep their current gap).
      const next = this.slotOf(this.nextTicket);
      if (next < nowMs && !this.chunk) {
        const gap = this.geometric && this.nextTicket > this.baseTicket ? next - this.slotOf(this.nextTicket - 1) : this.gap;
        this.respace(nowMs, this.geometric, this.geometric ? Math.min(gap, this.maxSpacingMs) : this.gap);
        // Probing starts again from now: offsets are measured from here.
        if (this.geometric) this.searchBase = this.baseAt;
      }
      ticket = this.nextTicket++;
    }
    const wait = this.slotOf(ticket) - nowMs;
    if (wait <= 0) return 0;
    this.ticket = ticket;
    this.pacedCount++;
    return this.checkAfter(wait, nowMs);
  }

  /** The ticket of the latest `reserve` that has to wait (0 if it may send now). */
  get lastTicket(): number {
    return this.ticket;
  }

  /**
   * For a caller holding `ticket` whose wait ended: ms to wait before asking again, or 0 to
   * send now. Slots move as the pacer learns (a cut spaces them out, a better estimate brings
   * them in), so a long wait is split: the caller checks again half-way.
   */
  holdFor(ticket: number, nowMs: number): number {
    if (ticket === 0 || this.mode === 0) return 0;
    this.adjust(nowMs);
    if (this.chunk) {
      if (this.slotOf(ticket) <= nowMs) return 0;
      return Math.min(Math.max(this.chunkWait(ticket, nowMs), RECHECK_MS), Math.max(this.chunkUntil - nowMs, RECHECK_MS));
    }
    const wait = this.slotOf(ticket) - nowMs;
    return wait <= 0 ? 0 : this.checkAfter(wait, nowMs);
  }

  /**
   * The wait until `ticket`'s slot as booked now (not split), 0 when due: what a caller
   * compares with its deadline. Searching, a slot is provisional (`searching`).
   */
  slotWait(ticket: number, nowMs: number): number {
    if (ticket === 0 || this.mode === 0) return 0;
    if (this.chunk) return this.chunkWait(ticket, nowMs);
    return Math.max(0, this.slotOf(ticket) - nowMs);
  }

  /**
   * Changes whenever waiting slots may have moved (a cut, the search's end, a new rate): a
   * runtime that can wake its waiting callers does so when it changes, instead of polling
   * with `holdFor`'s split waits.
   */
  get generation(): number {
    return this.generationCount;
  }

  /** Whether the pacer is still searching for the callee's rate (slots are provisional). */
  get searching(): boolean {
    return this.mode === SEARCH;
  }

  /**
   * Hands back the slot of `ticket` (a caller that gives up, or is aborted, before its slot):
   * the next booking takes it, so the queue does not run ahead of real sends. Returns whether
   * a slot still ahead was handed back.
   */
  release(ticket: number, nowMs: number): boolean {
    if (ticket === 0 || this.mode === 0 || ticket < this.baseTicket || ticket >= this.nextTicket) return false;
    if (this.slotOf(ticket) <= nowMs || this.released.includes(ticket)) return false;
    if (this.ticket === ticket) this.ticket = 0;
    this.pacedCount--;
    if (ticket === this.nextTicket - 1) {
      this.nextTicket--;
      return true;
    }
    const r = this.released;
    let i = r.length;
    r.push(ticket);
    while (i > 0 && r[i - 1]! > ticket) {
      r[i] = r[i - 1]!;
      i--;
    }
    r[i] = ticket;
    return true;
  }

  /**
   * Takes back the latest booking (a caller that learns from `reserve`'s answer that it cannot
   * wait that long gives its slot back). Returns whether anything was taken back.
   */
  cancelLastReservation(nowMs = Number.NEGATIVE_INFINITY): boolean {
    const t = this.ticket;
    if (t === 0) return false;
    this.ticket = 0;
    return this.release(t, nowMs);
  }

  /**
   * A slot for this pacer's request was booked in another queue (a fleet's shared queue,
   * `kindly-calls/redis`), which now ends at `nextMs`: this pacer's queue follows it — a
   * fall-back to local pacing books after those requests, start-up counts them as waiting,
   * and throttling lasts while that queue does. (Cuts are not gated by its end: that queue
   * re-spaces its waiting tickets when the fleet's rate moves, as this one does.)
   * `moved`: that queue was re-spaced and now ends at `nextMs`, earlier or later than before
   * (a fleet's queue booked at a first guess of 13/s ended 7 s out; kept, that end held a
   * process that fell back to local pacing 7 s after the fleet had re-spaced at 100/s).
   */
  followQueue(nextMs: number, moved = false): void {
    if (moved || nextMs > this.followedUntil) this.followedUntil = nextMs;
  }

  /**
   * What `rate()` estimates now (see `PacerRateKind`): a fleet sums its processes' measured
   * shares, but takes the largest of their guesses at the whole rate — four processes that
   * each probed the callee alone would otherwise book four times its rate.
   */
  rateKind(nowMs: number): PacerRateKind {
    if (this.throttling(nowMs) && this.mode === SEARCH) return 'probe';
    return this.measuredShare ? 'share' : 'whole';
  }

  /**
   * What this pacer's paced requests delivered over the last window, requests per second —
   * the current rate, not the peak the cuts use — once a cut measured it (`undefined` before).
   */
  delivered(nowMs: number): number | undefined {
    if (this.mode !== CRUISE || !this.cutMeasured) return undefined;
    const d = this.pacedRate?.rate(nowMs);
    return d === undefined ? undefined : d * 1000;
  }

  /**
   * Ends a search at a rate someone else learned (requests per second): another process of
   * the fleet already found the callee's rate, so this one starts up from it instead of
   * probing on its own. Like a probe's bracket, the rate is a guess within 2×: start-up goes
   * on from it until a cut measures this pacer's share. Returns whether the search ended.
   */
  adopt(ratePerSecond: number, nowMs: number): boolean {
    if (this.mode !== SEARCH || !(ratePerSecond > 0) || !this.throttling(nowMs)) return false;
    this.fromFlight = false;
    this.startedFromProbe = false;
    this.startCruise(nowMs, ratePerSecond / 1000, true, true);
    return true;
  }

  /**
   * No fleet's queue releases this pacer's requests (`followQueue`). In a fleet each pacer
   * answers for its share only: its reopenings are not the callee's (another process's request
   * may take the capacity between two of its own), so the saturation measure, the start-up
   * that waits for it and the start-up's fast checks are for a pacer alone; the fleet combines
   * its processes' measured shares instead (`rateKind`).
   */
  private get alone(): boolean {
    return this.followedUntil === Number.NEGATIVE_INFINITY;
  }

  /** Whether the pacer is holding requests back now (ends lazily after `quietMs`). */
  throttling(nowMs: number): boolean {
    if (
      this.mode !== 0 &&
      nowMs - this.lastRejectAt >= this.quietMs &&
      this.slotOf(this.nextTicket - 1) <= nowMs &&
      this.hintUntil <= nowMs &&
      this.followedUntil <= nowMs
    ) {
      this.mode = 0;
      this.startup = false;
      this.released.length = 0;
      this.baseTicket = this.nextTicket;
      this.lastDueAt = Number.NEGATIVE_INFINITY;
    }
    return this.mode !== 0;
  }

  /**
   * The learned rate in requests per second: the send rate while throttling, otherwise the
   * measured delivery rate; `undefined` before anything was measured.
   */
  rate(nowMs: number): number | undefined {
    if (this.throttling(nowMs)) {
      if (this.mode === SEARCH) return 1000 / this.probeGapAt(Math.max(nowMs, this.hintUntil));
      return this.allowed(Math.max(nowMs, this.hintUntil)) * 1000;
    }
    const measured = this.estimator.rate(nowMs);
    return measured === undefined ? undefined : measured * 1000;
  }

  /**
   * Searching: the gap between the probes around `t` (g₀, 2g₀, 4g₀, … up to maxSpacingMs,
   * counted from the search's start) — the rate the search is sending at then, not D₀.
   */
  private probeGapAt(t: number): number {
    const cap = this.maxSpacingMs;
    let at = this.searchBase;
    let g = this.gap;
    while (g < cap) {
      at += g;
      if (at > t) return g;
      g *= 2;
    }
    return cap;
  }

  /** Rate cuts since creation (paced requests still rejected). */
  get cuts(): number {
    return this.cutCount;
  }

  /** Reservations that had to wait, since creation. */
  get paced(): number {
    return this.pacedCount;
  }

  /**
   * A long wait is checked again half-way (slots may move earlier); short ones are exact.
   * Searching, a parked caller checks again as often as probes leave: the search may end at
   * any answer and bring every slot in.
   */
  private checkAfter(wait: number, nowMs: number): number {
    if (this.geometric) {
      let probe = this.baseTicket;
      while (probe < this.nextTicket && this.slotOf(probe) <= nowMs) probe++;
      // At the instant the probes were (re)spaced, more answers of that flight may follow and
      // respace them again: check again right after it.
      if (nowMs === this.respacedAt) return Math.min(wait, RECHECK_MS);
      // The search ends when an answer arrives: a parked caller checks again at the next
      // probe, or half a round trip from now if sooner — but at least a quarter of the way to
      // that probe, so that polling costs a few checks per probe, not one per gap.
      const toProbe = this.slotOf(probe) - nowMs;
      const step = Math.max(Math.min(toProbe, (this.srtt ?? 0) / 2), toProbe / 4, RECHECK_MS);
      return Math.min(wait, step);
    }
    if (this.chunk)
      return Math.min(
        Math.max(this.chunkWait(this.nextTicket - 1, nowMs), RECHECK_MS),
        Math.max(this.chunkUntil - nowMs, RECHECK_MS),
      );
    if (this.fromFlight) {
      // The search ended on the first answer of a slow flight, whose later answers raise the
      // level as they arrive — by 10× within one service time's spread (simulated: 10.9/s at
      // the first of ten answers spread over 17 ms by ±5 % service times, 92/s at the last):
      // a caller far back that slept half its wait computed at the first answer slept for
      // seconds (the herd took 4.2 s instead of 1.1 s). Until a paced request is answered,
      // parked callers check again every quarter of a service time.
      return Math.min(wait, Math.max(RECHECK_MS, Math.min(this.gap, (this.okLatency ?? this.gap) / 4)));
    }
    if (this.startup && this.alone) {
      // In start-up the rate may grow every growthMs, moving every waiting slot earlier: a
      // caller that slept longer would send late, and the send rate would lag the allowed one
      // (measured: a fixed window's start-up sent one request per first gap, 51 ms, while the
      // allowed rate grew 8×). Not while a fleet's shared queue releases this pacer's sends
      // (`alone`): its own tickets are then leftovers of the search, which must not race it.
      return Math.min(wait, Math.max(this.gap, this.growthMs / 2));
    }
    return wait <= 2 * this.gap ? wait : Math.min(wait, Math.max(2 * this.gap, wait / 2));
  }

  /** rate(t) of the doc comment, requests per ms (cruise). */
  private allowed(t: number): number {
    let r: number;
    if (this.startup) r = this.level;
    else {
      let u = (t - this.plateauAt) / this.recoveryMs;
      if (u < -1) u = -1;
      r = this.level * (1 + (1 - this.decrease) * u * u * u);
    }
    if (r > this.ceiling) r = this.ceiling;
    return Math.max(r, this.minRate);
  }

  /** The slot of `ticket` under the current epoch (−∞ for tickets due before it). */
  private slotOf(ticket: number): number {
    const j = ticket - this.baseTicket;
    if (j < 0) return ticket === this.baseTicket - 1 ? this.lastDueAt : Number.NEGATIVE_INFINITY;
    if (!this.geometric) return this.baseAt + j * this.gap;
    // Probes: gaps g₀, 2g₀, 4g₀, … up to maxSpacingMs, then maxSpacingMs each.
    const cap = this.maxSpacingMs;
    let at = this.baseAt;
    let g = this.gap;
    for (let k = 0; k <= j; k++) {
      if (g >= cap) return at + (j - k + 1) * cap;
      at += g;
      g *= 2;
    }
    return at;
  }

  /**
   * Starts a new epoch at `nowMs`: tickets already due keep their turn, every waiting one is
   * re-spaced (geometric probes from `gap`, or `gap` apart), no earlier than the last slot
   * due + gap and any wait hint.
   */
  private respace(nowMs: number, geometric: boolean, gap: number): void {
    this.respacedAt = nowMs;
    this.generationCount++;
    let first = this.baseTicket;
    while (first < this.nextTicket && this.slotOf(first) <= nowMs) first++;
    const lastDue = first > this.baseTicket ? this.slotOf(first - 1) : this.lastDueAt;
    this.lastDueAt = lastDue;
    this.baseTicket = first;
    this.geometric = geometric;
    this.gap = gap;
    // Geometric: the first probe is base + g₀, so the base is the last due slot itself.
    const after = geometric ? lastDue : lastDue + gap;
    this.baseAt = Math.max(geometric ? nowMs : nowMs, after, this.hintUntil - (geometric ? gap : 0));
    if (!geometric && this.baseAt < this.hintUntil) this.baseAt = this.hintUntil;
    // Requests booked in a followed queue leave until its end: local bookings come after them.
    if (this.baseAt < this.followedUntil) this.baseAt = this.followedUntil - (geometric ? gap : 0);
  }

  /** Cruise: re-spaces the queue when the allowed rate drifted from the one it was spaced at. */
  private adjust(nowMs: number): void {
    if (this.mode !== CRUISE) return;
    if (this.chunk) {
      if (nowMs > this.chunkUntil) this.endChunk(nowMs);
      return;
    }
    if (this.reprobe) return;
    const r = this.allowed(Math.max(nowMs, this.hintUntil));
    const drift = r * this.gap - 1;
    if (drift > RESPACE_DRIFT || drift < -RESPACE_DRIFT) this.respace(nowMs, false, 1 / r);
  }

  private enter(nowMs: number): void {
    this.mode = SEARCH;
    this.chunk = false;
    this.reprobe = false;
    this.startup = false;
    this.rejectedProbeAt = Number.NEGATIVE_INFINITY;
    this.rejectLatency = Number.POSITIVE_INFINITY;
    this.pathLatency = Number.POSITIVE_INFINITY;
    this.flightPeak = 0;
    this.flightRun = 0;
    this.flightMixed = false;
    this.flightRejectAt = nowMs;
    this.searchHinted = false;
    this.flightStart = this.estimator.earliestSend(nowMs) ?? nowMs;
    let d0 = this.estimator.peak(nowMs) ?? this.estimator.answerRate(nowMs) ?? this.minRate;
    if (d0 < this.minRate) d0 = this.minRate;
    this.baseTicket = this.nextTicket;
    this.lastDueAt = Number.NEGATIVE_INFINITY;
    this.released.length = 0;
    this.respace(nowMs, true, 1 / d0);
    this.searchBase = this.baseAt;
  }

  private searchSuccess(nowMs: number, sent: number, latency: number, probe: boolean): void {
    let x: number | undefined;
    let bracketed = false;
    this.fromFlight = false;
    this.startedFromProbe = false;
    if (sent >= this.searchBase && probe) {
      // A probe was served: capacity came back between the last rejected probe and it.
      const rejected = this.rejectedProbeAt < sent ? this.rejectedProbeAt - this.searchBase : 0;
      const span = rejected > 0 ? rejected : sent - this.searchBase;
      x = 1 / Math.max(span, this.gap);
      // Bracketed by probes, the rate is known within 2× only: start up from it. The first
      // probe served: D₀ held, and probing beyond it is CUBIC's business.
      bracketed = rejected > 0;
      this.startedFromProbe = true;
      this.probeGap = this.gap;
    } else if (latency >= 0 && this.slowFlight(nowMs, sent, latency)) {
      // Served slowly, rejected fast: the callee spends time serving, and the flight measures it.
      x = this.flightLevel(nowMs);
      this.fromFlight = true;
    } else if (sent < this.searchBase) {
      // More of the flight that started the search (answers read one by one): a higher D₀
      // brings the probes in.
      const d = this.estimator.peak(nowMs);
      if (d !== undefined && d * this.gap > 1 + RESPACE_DRIFT) this.respace(nowMs, true, 1 / d);
      return;
    }
    if (x === undefined) return;
    // Start up (the rate grows each round trip until a paced request is rejected) unless a
    // flight measured the rate: a probe's answer only bounds it.
    this.startCruise(nowMs, x, !this.fromFlight, bracketed);
    if (this.startedFromProbe && this.alone) {
      // The probe found the callee serving again after the flight's rejections: a reopening,
      // so the first reopening in cruise measures the callee's rate already (real
      // express-rate-limit herds overshot by 2× for two more windows, 16–25 paced requests
      // rejected, before the second one did).
      this.reopenedAt = sent;
      this.servedSinceReopen = 1;
      this.probeReopened = true;
      this.seedGap = 0;
      this.lastOkSent = sent;
      if (bracketed && latency >= 0) this.startChunk(nowMs, sent, latency);
    }
  }

  /**
   * After a probe bracketed the callee's return to capacity (rejected at l, served at h): a
   * token bucket restored one token, a fixed window its whole N — the same bracket, rates 10×
   * apart, and start-up from 1 / l left a fixed window's first window after the search 3 of 10
   * used (the simulated herd took 1.21× the bound). So the waiting requests go one per round
   * trip while they are served: S served in a row is what the callee restored. The first
   * rejection ends it (no cut: it was expected), or S reaching what the flight found (the
   * callee's capacity from idle), or the time l (beyond it a window may have reopened). Fewer
   * than `WINDOW_MIN` (a bucket's token): start-up from 1 / l as before. More: `endChunk`.
   * (Only a pacer alone: in a fleet, other processes take the callee's capacity meanwhile.)
   * Not at all when the flight was served fewer than `WINDOW_MIN` + 1 (four processes pacing
   * alone against one leaky bucket, each served 4 of its 25: their counts read 1–2 of the
   * others' leftovers, and the herd took 1.9 s instead of 1.43 s), nor when counting what it
   * found would take longer than l at one per round trip (the smoothed one: a loaded server's
   * slow flight counts): it could not finish, and on a bucket, which restored one token, the
   * count's second request is rejected — one more request on every simulated bucket herd.
   */
  private startChunk(nowMs: number, sent: number, latency: number): void {
    const max = Math.max(2, this.estimator.served(nowMs) - 1);
    const gap = Math.max(Math.min(latency, this.pathLatency), RECHECK_MS);
    const low = this.rejectedProbeAt - this.flightStart;
    if (max < WINDOW_MIN || max * Math.max(gap, this.srtt ?? 0) >= low) return;
    this.chunk = true;
    this.chunkServed = 1;
    this.chunkFrom = sent;
    this.chunkUntil = sent + Math.max(low, 0);
    this.chunkMax = max;
    this.chunkGuess = this.level;
    this.chunkLow = low;
    this.chunkHigh = sent - this.flightStart;
    this.chunkGap = gap;
    this.chunkRespace(nowMs);
  }

  /**
   * The chunk's epoch: the first waiting ticket is due now, the others only once an answer
   * moves the epoch on (one request in flight; `chunkWait` tells them when to look again).
   */
  private chunkRespace(nowMs: number): void {
    this.respacedAt = nowMs;
    this.generationCount++;
    let first = this.baseTicket;
    while (first < this.nextTicket && this.slotOf(first) <= nowMs) first++;
    this.lastDueAt = first > this.baseTicket ? this.slotOf(first - 1) : this.lastDueAt;
    this.baseTicket = first;
    this.geometric = false;
    this.gap = CHUNK_HOLD_MS;
    this.baseAt = nowMs;
  }

  /** During the chunk: the wait of the ticket `j` places behind the one due (as predicted). */
  private chunkWait(ticket: number, nowMs: number): number {
    const j = ticket - this.baseTicket;
    if (j < 0) return 0;
    return Math.max(0, this.baseAt - nowMs) + j * (this.chunkGap + RECHECK_MS);
  }

  private endChunk(nowMs: number): void {
    this.chunk = false;
    const s = this.chunkServed;
    if (s < WINDOW_MIN || !(this.chunkHigh > 0)) {
      // Fewer than WINDOW_MIN: a bucket's token (or nothing more to learn). Start-up goes on from 1 / l,
      // the chunk's request taking the next slot.
      this.cutGateAt = nowMs;
      this.respace(nowMs, false, 1 / this.allowed(nowMs));
      const after = this.chunkFrom + 1 / this.allowed(nowMs);
      if (this.baseAt < after) this.baseAt = after;
      return;
    }
    // The callee restored S at once — a window, which reopens T after the probe that opened
    // it, T in (l, h] from the flight's first send. The waiting requests probe for that
    // reopening from probe + l, gaps doubling from the bracket's middle rate: the first one
    // served measures T within a gap (`cruiseSuccess`), and the rate is S / T.
    this.level = Math.max(this.level, (2 * s) / (this.chunkHigh + Math.max(this.chunkLow, 0)));
    this.startup = false;
    this.bracketed = false;
    this.guessed = false;
    this.rampLevel = true;
    this.raiseCeiling(this.level);
    this.reprobe = true;
    this.reprobeRejectedAt = Number.NEGATIVE_INFINITY;
    // The chunk's own rejection is no reopening's bracket.
    this.reopenedAt = Number.NaN;
    this.servedSinceReopen = 0;
    this.exhausted = false;
    this.probeReopened = false;
    this.cutGateAt = nowMs;
    this.respace(nowMs, true, 1 / this.level);
    const from = this.chunkFrom + Math.max(this.chunkLow, 0);
    if (this.baseAt < from) this.baseAt = from;
  }

  /**
   * A window that restored S at once reopens at most h after the probe that opened it: a probe
   * sent later and still rejected says the S were no window's (a bucket shared with other
   * callers, whose tokens those took meanwhile — four processes pacing alone against one leaky
   * bucket probed on for 0.5 s and read 5/s, the herd took 3.2 s instead of 1.4 s). Start-up
   * goes on from the bracket's guess.
   */
  private refuteWindow(nowMs: number): void {
    this.reprobe = false;
    this.startup = true;
    this.bracketed = true;
    this.guessed = true;
    this.rampLevel = false;
    this.level = Math.max(this.chunkGuess, this.minRate);
    this.ceiling = Number.POSITIVE_INFINITY;
    this.grewAt = nowMs;
    this.cutGateAt = nowMs;
    this.respace(nowMs, false, 1 / this.level);
  }

  /**
   * Whether a success to the flight that started the search says the callee spends time
   * serving (a queue, a slot): slower than twice the slowest rejection, or the third served in
   * a row, each slower than every rejection, with no rejection of the flight in between. A
   * single success slower than every rejection is common when latencies merely vary
   * (lognormal: it ended searches on a false slow flight), a run of them is not — 10 of 100
   * answers in random order start with three in a row 0.7 % of the time. But one event loop
   * working through a burst slows its rejections as much as the callee's service: on a real
   * express-queue (10 × 100 ms) the rejections came back after 57–121 ms and the ten served
   * at 131–158 ms, so the rule of twice alone ended the search on the queued eleventh, 100 ms
   * later (1.2–1.6 s herds).
   */
  private slowFlight(nowMs: number, sent: number, latency: number): boolean {
    if (sent >= this.searchBase) return false;
    if (latency > 2 * this.rejectLatency) {
      this.slowRun = false;
      return true;
    }
    // Slower because it came back later, not because it left earlier: a callee that holds
    // every answer to the end of its slot returns the flight's first-sent requests (the ones
    // it served) in the same moment as its rejections, and their latency exceeds the
    // rejections' by no more than the time the flight took to leave (a real slot server, Retry-After
    // releasing the herd over 26 ms: three successes 26 ms slower than every rejection, read
    // within 1 ms of them, made a slow flight of 297/s against 100/s).
    if (this.flightMixed || !(latency > this.rejectLatency) || 2 * (nowMs - this.flightRejectAt) < latency - this.rejectLatency) {
      this.flightMixed = this.flightRun > 0 || this.flightMixed;
      return false;
    }
    if (++this.flightRun < FLIGHT_RUN) return false;
    this.slowRun = true;
    return true;
  }

  /**
   * What a slow flight measured: its delivery rate, but the time its requests spent on the
   * way (as long as the fastest rejection's round trip) was not the callee's serving time.
   * Measured against express-queue (10 workers × 100 ms, client and server on one loaded
   * event loop) the flight read 78/s — 10 answers at 128 ms, rejections from 44 ms — and the
   * herd then crept up from there by CUBIC's convex start: 1.3–1.9 s instead of ~1.1 s.
   */
  private flightLevel(nowMs: number): number | undefined {
    const raw = this.estimator.peak(nowMs);
    const served = this.estimator.flightRate(nowMs, this.pathLatency);
    if (raw === undefined || served === undefined) return raw;
    // The best the flight proved at any of its answers, as the delivery-rate peak filter does:
    // a straggler that waited in the callee's queue (express-queue's one waiting request,
    // answered a service time after the rest) must not pull it down — since the search waits
    // for a success slower than twice the slowest rejection, that straggler is often the one
    // that ends it (measured: 10 per 101 ms at the tenth answer, 11 per 196 ms at the 11th).
    return Math.max(raw, served, this.flightPeak);
  }

  /** Ends the search at level `x` (requests per ms). */
  private startCruise(nowMs: number, x: number, startup: boolean, bracketed: boolean): void {
    this.mode = CRUISE;
    this.startup = startup;
    this.bracketed = bracketed;
    this.guessed = bracketed || (this.startedFromProbe && !this.searchHinted);
    this.measuredShare = !startup;
    this.cutMeasured = false;
    this.plateauAt = nowMs;
    this.level = Math.max(x, this.minRate);
    this.ceiling = Number.POSITIVE_INFINITY;
    this.cruiseAt = nowMs;
    this.grewAt = nowMs;
    this.cutGateAt = nowMs;
    // Read for its rate and peak only: no answers' extremes to keep.
    if (this.pacedRate === undefined) this.pacedRate = new DeliveryRate(this.windowMs, this.buckets, { answers: false });
    else this.pacedRate.reset();
    this.reopenedAt = Number.NaN;
    this.servedSinceReopen = 0;
    this.exhausted = false;
    this.lastOkSent = Number.NEGATIVE_INFINITY;
    this.lastRejectSent = Number.NEGATIVE_INFINITY;
    this.saturatedRate = Number.NaN;
    this.probeReopened = false;
    this.rampLevel = false;
    this.blindStartup = false;
    this.chunk = false;
    this.reprobe = false;
    this.respace(nowMs, false, 1 / this.level);
  }

  private cruiseSuccess(nowMs: number, sent: number, latency: number): void {
    if (sent > this.lastCutAt) this.servedSinceCut = true;
    if (sent < this.cruiseAt && sent >= this.searchBase) {
      // Another probe of the search, answered with the one that ended it (answers read in any
      // order): an earlier probe served, with none rejected before it, means a higher rate.
      if (!this.bracketed && this.rejectedProbeAt < this.searchBase && this.startedFromProbe) {
        const x = 1 / Math.max(sent - this.searchBase, this.probeGap);
        if (x > this.level) {
          this.level = x;
          this.adjust(nowMs);
        }
      }
      return;
    }
    if (sent < this.cruiseAt) {
      // The rest of a slow flight that ended the search (answers arriving one by one): the
      // level follows what the flight measures, as long as nothing paced has been answered.
      if (this.fromFlight && sent < this.searchBase && latency > (this.slowRun ? 1 : 2) * this.rejectLatency) {
        const d = this.flightLevel(nowMs);
        if (d !== undefined && d > this.level) {
          this.level = d;
          this.adjust(nowMs);
        }
      }
      return;
    }
    this.fromFlight = false;
    if (this.reprobe) {
      // The window reopened between the last rejected probe and this one: T measured.
      this.reprobe = false;
      const end = Number.isFinite(this.reprobeRejectedAt) ? (this.reprobeRejectedAt + sent) / 2 : sent;
      if (end > this.chunkFrom) this.level = Math.max(this.chunkServed / (end - this.chunkFrom), this.minRate);
      this.raiseCeiling(this.level);
      this.plateauAt = nowMs;
      this.reopenedAt = end;
      this.servedSinceReopen = 1;
      this.lastOkSent = sent;
      this.lastRejectSent = this.reprobeRejectedAt;
      this.exhausted = false;
      this.respace(nowMs, false, 1 / this.allowed(nowMs));
      return;
    }
    if (this.chunk) {
      this.chunkServed++;
      if (nowMs > this.chunkUntil || this.chunkServed >= this.chunkMax) this.endChunk(nowMs);
      else this.chunkRespace(nowMs);
      return;
    }
    const peak = this.pacedRate?.peak(nowMs, true);
    if (this.startup) {
      // At most once per round trip: answers that arrive together were sent at one rate.
      // Only while requests wait: sending all there is says nothing about a higher rate.
      // And at most once per half a bucket of the estimator: on a fast path (loopback, ~1 ms)
      // a growth per round trip compounds within tens of ms — before the answers show a token
      // bucket's burst running out — and overshot real limiters by 10× and more.
      // The rate grows ×√2 per growthMs that it held, not per success: at a low rate (a
      // bracket's low guess, a request per 100 ms) a step per success would take a second to
      // grow 10×. A success sent at `sent` proves the rate held from the last growth until
      // then (not until its answer: a slow answer proves nothing more); up to 4 steps at once.
      // (Requests wait here, or in a followed queue: a fleet's, where this process books.)
      const steps = Math.floor((sent - this.grewAt) / this.growthMs);
      const waiting = this.slotOf(this.nextTicket - 1) > nowMs || this.followedUntil > nowMs;
      if (steps >= 1 && nowMs - this.grewAt >= this.growthMs && waiting) {
        this.level *= STARTUP_GAIN ** Math.min(steps, STARTUP_MAX_STEPS);
        this.grewAt = nowMs;
      }
      // After a blind cut the ceiling (probeGain × the halved guess) follows what paced requests
      // deliver, as cruise's does: fixed, it held start-up there for good — nothing is rejected
      // that slowly (a real express-rate-limit herd paced at 18/s for 4.4 s after a blind cut
      // to 12/s).
      if (this.blindStartup && peak !== undefined && this.probeGain * peak > this.ceiling) this.ceiling = this.probeGain * peak;
    } else if (peak !== undefined) this.raiseCeiling(peak);
    this.adjust(nowMs);
  }

  /**
   * The ceiling follows what paced requests delivered, but never below W: a stretch with few
   * requests to send (app-limited) delivers little and must not pull the learned rate down.
   */
  private raiseCeiling(peak: number): void {
    this.ceiling = this.probeGain * Math.max(peak, this.level);
  }

  /**
   * Follows saturation points. Between two reopenings the callee went from just out of
   * capacity to just out of capacity again, so what it served in between is exactly what it
   * restored: successes sent in [previous reopening, this one) over that time is its rate —
   * a fixed window's N per window (boundary to boundary), a bucket's refill (within a token).
   * While start-up runs, or right after the cut that ended it (its level measured on the
   * ramp), a measurement over at least `SATURATED_MIN` successes becomes the level (a
   * GCRA's start settled in 1.5 s instead of at once when the ramp's 160/s of 200/s stood).
   */
  private saturation(nowMs: number, sent: number, ok: boolean): void {
    if (!this.alone) return;
    if (!ok) {
      if (sent > this.lastRejectSent) this.lastRejectSent = sent;
      if (sent > this.lastOkSent) this.exhausted = true;
      return;
    }
    if (sent > this.lastOkSent) this.lastOkSent = sent;
    if (!(sent < this.reopenedAt)) this.servedSinceReopen++;
    if (!this.exhausted || sent < this.lastRejectSent) return;
    this.exhausted = false;
    const from = this.reopenedAt;
    const served = this.servedSinceReopen - 1;
    if (!Number.isNaN(from) && served < SATURATED_MIN) return;
    // Capacity came back somewhere between the last rejected send and this one: the middle.
    const at = Number.isFinite(this.lastRejectSent) ? (this.lastRejectSent + sent) / 2 : sent;
    this.reopenedAt = at;
    this.servedSinceReopen = 1;
    const fromProbe = this.probeReopened;
    this.probeReopened = false;
    if (Number.isNaN(from) || !(at > from)) return;
    // From the probe that ended the search, only if every send since came within about 1 / the
    // rate measured: start-up from a low guess leaves gaps in which a fixed window may expire
    // half-used, or a slot pass (nothing then says so), and what was served is not what it had.
    if (fromProbe && (served * this.seedGap) / (at - from) > SEED_GAP_SLACK) return;
    this.saturatedRate = served / (at - from);
    this.saturatedAt = nowMs;
    if (!this.startup && !this.rampLevel) return;
    this.startup = false;
    this.rampLevel = false;
    this.measuredShare = this.cutMeasured = true;
    this.level = Math.max(this.saturatedRate, this.minRate);
    this.raiseCeiling(this.pacedRate?.peak(nowMs, true) ?? this.level);
    this.plateauAt = nowMs;
    this.adjust(nowMs);
  }

  private cut(nowMs: number): void {
    const sending = this.allowed(nowMs);
    let level = sending;
    let peak = this.pacedRate?.peak(nowMs, true);
    // Measured between two reopenings within the estimator's window, the callee's rate is
    // known better than by the peak of any flow: bursts at a window's start inflate that.
    const saturated = this.alone && !Number.isNaN(this.saturatedRate) && nowMs - this.saturatedAt <= this.windowMs;
    if (saturated) peak = this.saturatedRate;
    if (peak !== undefined) {
      if (peak < level) level = peak;
    } else {
      // Nothing paced measured yet: a level measured on a flight stands (β below it), one
      // bracketed by probes may be 2× high.
      level *= this.bracketed ? BLIND_CUT : 1;
    }
    // A blind cut of a bracketed guess (2× high at most) halves it, which may land below the
    // callee's rate: start-up goes on from there, until a cut that measured something.
    const blind = this.startup && peak === undefined && this.bracketed;
    // The first overshoot of start-up: what paced requests delivered so far was measured on
    // the ramp, mostly below the callee's rate (a fixed window that served 2 of its 10 per
    // window says nothing about the 10). Start-up goes on from β below it, until the callee
    // has been saturated between two reopenings (`saturation`), which measures its rate.
    const ramp = this.startup && !blind && peak !== undefined && this.guessed && this.alone;
    this.rampLevel = this.startup && !blind && !ramp;
    this.startup = blind || ramp;
    if (peak !== undefined) this.measuredShare = this.cutMeasured = true;
    this.bracketed = false;
    this.level = Math.max(ramp ? level * this.decrease : level, this.minRate);
    // Start-up goes on below the rate that just proved too high, and at most probeGain × what
    // the ramp delivered — the cap cruise keeps too (2× overshot more: fixed window 1.24× the
    // bound's time against 1.21×, and a simulated fleet with a pacer each 3 % more requests).
    if (ramp) this.ceiling = Math.min(sending, this.probeGain * (peak as number));
    else this.raiseCeiling(peak ?? this.level);
    this.blindStartup = blind;
    // Cut to Dₛ, the callee's own rate, the pacer sends at it at once: β below it (CUBIC's
    // decrease from the rate that overshot) held real TokenBucket herds ~15 % under the
    // bucket's rate for a second. Cut to anything else, CUBIC climbs back over K.
    this.plateauAt = saturated && !ramp ? nowMs : nowMs + this.recoveryMs;
    // Requests sent within one service time of the cut may still meet the load from before
    // it (a server busy with earlier requests): only answers to later ones cut again.
    this.cutGateAt = nowMs + (this.okLatency ?? 0);
    this.lastCutAt = nowMs;
    this.servedSinceCut = false;
    this.cutCount++;
    this.respace(nowMs, false, 1 / this.allowed(nowMs));
  }
}
