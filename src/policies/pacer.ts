import { OptionsValidator } from '../options/validate.js';
import { DeliveryRate } from './delivery-rate.js';

/** What one answer told the pacer: served, rejected for load (429/503), or timed out. */
export type PacerSignal = 'ok' | 'rejected' | 'timeout';

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

/**
 * Adaptive pacing: learns how fast the callee will serve us and, while it is
 * throttling us, releases requests at that rate instead of letting each sleep on its own.
 * No rate is configured or written anywhere: every rate below comes from measurement.
 *
 * Protocol (sans-IO, every method takes `nowMs`, monotonic ms):
 *
 *     const wait = pacer.reserve(now);       // before a retry (and a first attempt if paceFirstAttempts)
 *     … sleep `wait`, send at sentAt …
 *     pacer.onResult(now, 'ok' | 'rejected' | 'timeout', hintMs, sentAt);   // every answer
 *
 * Report every answer, successes included: they are what measures the callee. When several
 * answers arrive together, report them all before any of them reserves (in a simulator, in
 * arrival order; in an event loop, reserve after yielding once): a reservation is fixed when
 * made, so it can only use what the pacer knew then.
 *
 * **Healthy** (not throttling): `reserve` returns 0 and books nothing; the only work per
 * answer is the delivery-rate estimator's O(1) update.
 *
 * **Entering** — on the first rejection (429/503), timeout or wait hint. D̂ is the peak
 * delivery rate over the estimator's window (see `DeliveryRate`; A its answer rate):
 *
 *     W = D̂        (A while nothing has succeeded; never below 1 / maxSpacingMs)
 *
 * No cut: the requests being rejected now were sent unpaced, and D̂ is what the callee
 * proved it serves. Until the first cut ("entry phase") W rises with D̂ — answers of the same
 * burst may still be arriving — and bookings made at the same instant are re-packed at W.
 *
 * **Allowed rate** — CUBIC's curve (RFC 9438) made scale-free, with β = `decrease`,
 * K = `recoveryMs` and tₚ the time the curve is back at W, under a ceiling that keeps it
 * within `probeGain` of what was delivered:
 *
 *     u(t)    = max(−1, (t − tₚ) / K)
 *     rate(t) = max(1 / maxSpacingMs, min(probeGain × D̂, W × (1 + (1 − β) × u³)))
 *
 * At entry tₚ = now: flat at W, then probing upward (+(1 − β) × W after K, faster later).
 *
 * **Cutting** — when a request sent after the last decision's backlog is rejected or times
 * out, the current rate is still too high:
 *
 *     W = min(rate(now), D̂)      tₚ = now + K      ⇒ rate(now) = β × W
 *
 * then a concave climb back to W over K and convex probing beyond it. Answers to requests
 * booked before the cut cannot be told the new rate and do not cut again (TCP's once per
 * round): the gate is the end of the queue at the time of the cut.
 *
 * **Pacing** — a virtual queue. `reserve(now)` books the next slot and returns the wait:
 *
 *     ready = max(now, hintUntil)
 *     slot  = max(ready, next)      next = slot + 1 / rate(ready)
 *
 * so N callers reserving at one instant get slots 1/rate apart, and after a wait hint none
 * is earlier than the hint.
 *
 * **Leaving** — after `quietMs` without rejection or timeout, once the queue has drained and
 * any hint has passed: back to zero cost.
 *
 * Limits: a reservation cannot be moved once returned, so a large burst booked on a low
 * first estimate (a token-bucket limiter that lets a burst through and answers late makes
 * D̂ small) drains at that rate; and with a deep queue the rate reacts only as fast as the
 * queue drains. Callers' deadlines bound both.
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
  private readonly minRate: number;
  private active = false;
  /** Before the first cut of a throttling episode, W follows the measured rate upward. */
  private entryPhase = false;
  /** W: the level the cubic curve returns to, requests per ms. */
  private level = 0;
  /** probeGain × peak delivery rate: the rate never runs further ahead of what was delivered. */
  private ceiling = Number.POSITIVE_INFINITY;
  /** tₚ: when the curve is back at W. */
  private plateauAt = 0;
  /** Rejections of requests sent before this were booked at an older rate and don't cut. */
  private cutGateAt = 0;
  private lastRejectAt = Number.NEGATIVE_INFINITY;
  private hintUntil = Number.NEGATIVE_INFINITY;
  /** The virtual queue: the next free slot. */
  private next = Number.NEGATIVE_INFINITY;
  /** Bookings made at one instant: when, the first one's slot, and how many. */
  private batchAt = Number.NaN;
  private batchStart = 0;
  private batchCount = 0;
  private srtt: number | undefined;
  private cutCount = 0;
  private pacedCount = 0;
  /** State before the latest booking, so that booking alone can be taken back. */
  private undoNext = Number.NEGATIVE_INFINITY;
  private undoBatchCount = 0;
  private undoPaced = false;
  private undoable = false;

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
    this.minRate = 1 / this.maxSpacingMs;
  }

  /**
   * Reports one answer. `hintMs` is the callee's wait hint, if any (on any signal: a
   * success saying "remaining 0, reset in 10 s" is a hint too). `sentAtMs` is when that
   * attempt was sent: pass it — it is what measures the delivery rate and tells answers to
   * old requests from answers to paced ones. Without it the pacer assumes
   * `now − smoothed latency` (latency learned from the answers that did carry it, else 0).
   */
  onResult(nowMs: number, signal: PacerSignal, hintMs?: number, sentAtMs?: number): void {
    let sent: number;
    if (sentAtMs === undefined) sent = nowMs - (this.srtt ?? 0);
    else {
      sent = sentAtMs;
      const latency = nowMs - sentAtMs;
      if (latency >= 0) this.srtt = this.srtt === undefined ? latency : this.srtt + RTT_GAIN * (latency - this.srtt);
    }
    const ok = signal === 'ok';
    this.estimator.record(nowMs, sent, ok);
    if (hintMs !== undefined && hintMs > 0) {
      const until = nowMs + hintMs;
      if (until > this.hintUntil) this.hintUntil = until;
      if (!this.active) this.enter(nowMs);
    }
    if (ok) {
      if (this.active) this.sample(nowMs);
      return;
    }
    this.lastRejectAt = nowMs;
    if (!this.active) this.enter(nowMs);
    else if (sent > this.cutGateAt) this.cut(nowMs);
    else if (this.entryPhase) this.sample(nowMs);
  }

  /**
   * Books a send slot: returns the ms to wait before sending (0 when not throttling). Call
   * it once per request that will be sent; the slot is taken whether or not it is used.
   */
  reserve(nowMs: number): number {
    if (!this.throttling(nowMs)) return 0;
    const ready = Math.max(nowMs, this.hintUntil);
    let slot = Math.max(this.next, ready);
    if (nowMs !== this.batchAt) {
      this.batchAt = nowMs;
      this.batchStart = slot;
      this.batchCount = 0;
    } else if (this.entryPhase) {
      // Answers of one burst arriving together: W may have risen since the first of them
      // booked, so pack the rest of this instant's bookings at W.
      const packed = this.batchStart + this.batchCount / this.level;
      if (packed < slot) slot = Math.max(packed, ready);
    }
    this.undoNext = this.next;
    this.undoBatchCount = this.batchCount;
    this.undoable = true;
    this.batchCount++;
    this.next = slot + 1 / this.allowed(ready);
    const wait = slot - nowMs;
    this.undoPaced = wait > 0;
    if (wait > 0) {
      this.pacedCount++;
      return wait;
    }
    return 0;
  }

  /**
   * Takes back the latest booking, if no other booking came after it: a caller that learns
   * from `reserve`'s answer that it cannot wait that long (its deadline) gives its slot back,
   * so the queue does not run ahead of real sends. Returns whether anything was taken back.
   */
  cancelLastReservation(): boolean {
    if (!this.undoable) return false;
    this.undoable = false;
    this.next = this.undoNext;
    this.batchCount = this.undoBatchCount;
    if (this.undoPaced) this.pacedCount--;
    return true;
  }

  /**
   * A slot for this pacer's request was booked in another queue (a fleet's shared queue,
   * `kindly-calls/redis`), which now ends at `nextMs`: this pacer's queue follows it, so
   * answers to requests booked before a cut do not cut again (the gate is the end of the
   * queue they were booked in), and a fall-back to local pacing books after them.
   */
  followQueue(nextMs: number): void {
    if (nextMs > this.next) this.next = nextMs;
  }

  /** Whether the pacer is holding requests back now (ends lazily after `quietMs`). */
  throttling(nowMs: number): boolean {
    if (this.active && nowMs - this.lastRejectAt >= this.quietMs && this.next <= nowMs && this.hintUntil <= nowMs) {
      this.active = false;
      this.entryPhase = false;
    }
    return this.active;
  }

  /**
   * The learned rate in requests per second: the allowed send rate while throttling,
   * otherwise the measured delivery rate; `undefined` before anything was measured.
   */
  rate(nowMs: number): number | undefined {
    if (this.throttling(nowMs)) return this.allowed(Math.max(nowMs, this.hintUntil)) * 1000;
    const measured = this.estimator.rate(nowMs);
    return measured === undefined ? undefined : measured * 1000;
  }

  /** Rate cuts since creation (paced requests still rejected). */
  get cuts(): number {
    return this.cutCount;
  }

  /** Reservations that had to wait, since creation. */
  get paced(): number {
    return this.pacedCount;
  }

  /** rate(t) of the doc comment, requests per ms. */
  private allowed(t: number): number {
    let u = (t - this.plateauAt) / this.recoveryMs;
    if (u < -1) u = -1;
    let r = this.level * (1 + (1 - this.decrease) * u * u * u);
    if (r > this.ceiling) r = this.ceiling;
    return Math.max(r, this.minRate);
  }

  private enter(nowMs: number): void {
    this.active = true;
    this.entryPhase = true;
    this.level = 0;
    this.ceiling = Number.POSITIVE_INFINITY;
    this.plateauAt = Math.max(nowMs, this.hintUntil);
    this.cutGateAt = nowMs;
    this.sample(nowMs);
  }

  /**
   * Takes a delivery-rate sample into the peak filter: the ceiling follows D̂, and in the
   * entry phase W rises to it (to A while nothing has succeeded).
   */
  private sample(nowMs: number): void {
    const peak = this.estimator.peak(nowMs);
    if (peak !== undefined) this.ceiling = this.probeGain * peak;
    if (!this.entryPhase) return;
    let measured = peak ?? this.estimator.answerRate(nowMs) ?? this.minRate;
    if (measured < this.minRate) measured = this.minRate;
    if (measured > this.level) this.level = measured;
  }

  private cut(nowMs: number): void {
    let level = this.allowed(nowMs);
    const peak = this.estimator.peak(nowMs);
    if (peak !== undefined) {
      if (peak < level) level = peak;
      this.ceiling = this.probeGain * peak;
    }
    this.level = Math.max(level, this.minRate);
    this.plateauAt = nowMs + this.recoveryMs;
    this.entryPhase = false;
    // Everything already booked goes out at the old spacing; only answers to requests sent
    // after that backlog tell us about the new rate.
    this.cutGateAt = Math.max(this.next, nowMs);
    this.cutCount++;
  }
}
