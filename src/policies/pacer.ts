import { MAX_WINDOW_BUCKETS, OptionsValidator } from '../options/validate.js';
import { DeliveryRate } from './delivery-rate.js';
import { forgetSend } from './nearest-send.js';
import { PacerThrottleState } from './pacer-throttle-state.js';
import { PoolWindow } from './pool-window.js';

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
   * upward, slowly at first. At least 20 gaps at the learned rate (below 20 a second, longer
   * than this). @default 1_000
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
   * the learned rate, expressed as a time). Three exceptions: a search for the callee's rate that
   * has found nothing served for longer than this spaces its probes a quarter of the time
   * waited apart, up to 30 × this (a limit metered per minute costs ~20 probes a minute, not
   * 60); a callee that serves, yet still rejects at the floor, is paced below it by each
   * cut, down to one request per 30 × this; and a fixed window found to hold S requests is paced
   * at S per window, however long the window. @default 1_000
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

/**
 * Start-up growth steps served at its cap (the rate that overshot before) with nothing
 * rejected, after which the cap goes (`grow`): two doublings' worth. 2 and 8 measured the same
 * in simulated sweeps.
 */
const STEPS_AT_CAP = 4;

/** Rejections without any success for this many gaps at the new rate cut again. */
const STALL_GAPS = 16;

/** A cut with nothing measured on paced requests yet halves (TCP's multiplicative decrease). */
const BLIND_CUT = 0.5;
/** Paced answers since the last cut before their served share may deepen a cut (`mostlyRejected`). */
const SHARE_MIN_ANSWERS = 8;
/** Below this share of paced answers served since the last cut, a cut halves (`mostlyRejected`). */
const MOSTLY_REJECTED_SHARE = 0.5;

/** Flight successes in a row, each slower than every rejection, that make a slow flight. */
const FLIGHT_RUN = 3;

/** A flight read after the search ends is a slow one only on this many successes and rejections (`slowFlightFoundLate`). */
const LATE_FLIGHT_SERVED = 5;
const LATE_FLIGHT_REJECTED = 8;

/**
 * With at least this many rejections of the flight in, a slow success waiting to be read
 * (`Pacer.slowFlightHeldAt`) is held against their `SLOW_REJECTION_QUANTILE`, not the slowest.
 */
const SLOW_REJECTIONS_MIN = 50;
const SLOW_REJECTION_QUANTILE = 0.95;

/**
 * "Slower than every rejection" means by this factor at least. One event loop reading a
 * backlog of answers returns some a hair after others: a cold process's first herd against a
 * real express-rate-limit read three successes sent after the window reopened mid-flight
 * 0.1–0.5 ms slower than the slowest of 90 rejections (~168 ms), took the window for a worker
 * pool, and sent 210–260 requests (bound 190). A pool's successes are slower by its service time.
 */
const SLOW_MARGIN = 1.1;

/**
 * Rejections back in this search before any success of the flight may read as served slowly:
 * the slowest of fewer says little about how slow rejections get (exponential latencies: at
 * the flight's first answers a success 5× slower than the one or two rejections back was
 * common, and ended searches at 1,000–13,000/s — fixed-window herds of 400–670 requests).
 */
const FLIGHT_REJECTS_MIN = 8;

/**
 * First tries sent within a span, per success it counted, from which its reading is taken as
 * rough (`Pacer.firstTriesCrowded`). At 6 or 4, simulated token buckets whose first tries
 * arrived over 200 ms with lognormal 20 ms latencies needed 1.061× the bound's requests on
 * average over 24 seeds (1.059× at 8 and before), and were served no sooner.
 */
const CROWDED_FIRST_TRIES = 8;

/** Successes a crowded span's count may be off by, one at each end (`Pacer.fromCrowdedReading`). */
const CROWDED_READING_ERROR = 2;

/** Successes between two reopenings that measure the callee's rate (within ±1 / this). */
const SATURATED_MIN = 4;

/**
 * How far ahead of now requests the pacer never held (first tries) may push its queue, in
 * gaps (`unpacedSent`): each takes one slot, but a first try the callee rejects took none of
 * its capacity, so the push never runs further ahead than this. Arriving at random at twice
 * the rate, first tries leave a gap of three slots about once in 400 (e^−6): a retry sent into
 * a callee they keep full is that rare. With one gap, one retry in seven went into such gaps
 * and was rejected (simulated token bucket, arrivals at 200/s for 2 s: 1.11× the bound's
 * requests against 1.02× with three); further ahead, the backlog waits longer once they stop.
 */
export const UNPACED_HOLD_GAPS = 3;

/**
 * Successes in the window before the rate a full callee serves first tries at may lift the
 * level (`othersServed`): within ±1 / this. One success read 1,000/s (a flight of 1 ms).
 */
const OTHERS_SERVED_MIN = 16;

/** Paced successes enough, by their number alone, for a cut to trust their peak (see `pacedPeakTrusted`). */
const PEAK_MIN = 8;

/**
 * The queue is re-spaced when the allowed rate has moved this far from the one it was spaced
 * at: the search's probes (a flight's later answers) and a pool's window, whose pace is a lead
 * over its places rather than the callee's rate.
 */
const RESPACE_DRIFT = 0.1;

/**
 * The same outside a pool, in cruise. CUBIC's probe grows the rate by a few per cent over
 * hundreds of ms: the queue kept the old spacing until the rate was 10 % above it, so the
 * probe reached the callee's rate late and then passed it by up to 10 % at once. Re-spaced at
 * 2 %, simulated single herds on buckets took 1.061 → 1.052× the bound's time on average over
 * eight latency shapes (fixed windows 1.298 → 1.297×), herds in a row on a slot server
 * 1.06 → 1.04×. Not in a pool's window: there it made the slowest of the herds in a row on a
 * simulated worker pool take 1.448× the bound's time instead of 1.433×.
 */
const CRUISE_RESPACE_DRIFT = 0.02;

/**
 * A flight's answers read within 1 / this of the fastest answer's latency since the search
 * began came back together: only this client's reading spreads them (`Pacer.probeSpan`).
 */
const READ_TOGETHER = 4;

/**
 * The search's probes double their gaps up to a this-th of `maxSpacingMs`, then go a this-th
 * of the time waited apart (but never closer than that): the reopening they find is at most
 * that share of the wait late, and a long wait costs a few probes, not one per `maxSpacingMs`.
 * Simulated, 60 a minute with 200 callers: 60 probes a minute at one a second before, 20
 * now; 100 a second with 300 callers, first tries together: the first reopening found 311 ms
 * late by doubling gaps (1.23× the bound's time), 48 ms now (1.05×).
 */
const PROBE_LATENESS = 4;

/**
 * CUBIC's K is at least this many gaps at the level: `recoveryMs` alone is a time, and against
 * a bucket refilling once a second it climbed back past the rate and was cut every second —
 * one request rejected per token (simulated, 10 per 10 s, 100 callers: 1.46× the bound's
 * requests; 1.15× with this). Above 20 a second `recoveryMs` is the longer, and nothing changes.
 */
const RECOVERY_GAPS = 20;

/**
 * …but never more than this many `maxSpacingMs` apart, as capped exponential backoffs are (the
 * AWS SDKs' 20 s, gRPC's 120 s): a callee that rejected everything for an hour is found within
 * 30 s of its return with the defaults, not 15 minutes.
 */
const PROBE_GAP_MAX = 30;
/** A rate within this fraction above the floor is at the floor (the floor's own float rounding). */
const FLOOR_EPSILON = 1e-9;

/**
 * Reprobes for a window's reopening go at most this many across its bracket: more apart than
 * the window's rate only when the bracket holds more than this many of its requests.
 */
const REPROBES = 16;

/** A count of at least this many served in a row reads a window (fewer: a bucket, or what other callers left). */
const WINDOW_MIN = 4;

/** The chunk's epoch gap: tickets behind the one due are held until an answer moves it on. */
const CHUNK_HOLD_MS = 1e9;
/** How long after a probe's send parked callers keep looking for its late answer, in smoothed round trips. */
const PROBE_OVERDUE_RTTS = 4;
/** …and no more often than this, ms (a path measured at ~0 ms would have them spin). */
const PROBE_OVERDUE_STEP_MS = 0.5;
/** A count in cruise tells a window from a bucket only sent at under this share of its run's gaps (`Pacer.endChunk`). */
const COUNT_PACE = 0.8;

/** A pipelined count closer than this would be a burst: not counted. */
const PIPE_MIN_SPACING_MS = 1;

/**
 * A count whose served probe came back too late to pipe it within l (`startChunk`) is made
 * from the answer instead, where l is at least this share of that probe's round trip. The
 * bracket was long and the path slow, not the bracket short (a bucket's: a few ms): l still
 * tells how long a window holds its places, and the window the probe found serves the count
 * until it ends (one that opens at the next request after it serves the rest), while a bucket
 * serves one or two and rejects, as it would have at the probe. Without it, one slow answer (a
 * fixed window behind normal 40 ms latencies drew 84 ms against l = 68 ms) left start-up from
 * 1 / l, 15/s, for ~400 ms. Simulated over 2,240 herds (seven models, eight latencies, five
 * arrival spreads, 8 seeds): fixed windows with spread latencies took 2–7 % less time (normal
 * 40 ms, first tries together: 1.288 → 1.197× the bound), buckets with first tries over
 * 100 ms 1–1.6 % less time for 0.6–0.7 % more requests. At 0.75 the fixed window with
 * exponential 20 ms latencies, first tries over 100 ms, lost its gain (1.256 → 1.281×).
 */
const LATE_COUNT_SHARE = 0.5;

/** A rate measured from the search's probe holds if no send gap since exceeded 1 / it by more than this (real sends wander from their slots by a few ms). */
const SEED_GAP_SLACK = 2;

/**
 * A rate measured between two later reopenings holds unless a send gap between them exceeded
 * 1 / it by more than this and `SPAN_GAP_RTTS` round trips: a pause in demand (a service's
 * herds come and go), in which the callee restored more than it served. (Gaps are read from
 * answers in send order; a slot server's answers, read in random order, show gaps of up to a
 * slot — 10 gaps, within one round trip — and 200 seeds of such herds needed a median of 212
 * requests (pinned: at most 209) when those counted.)
 */
const SPAN_GAP_SLACK = 4;
const SPAN_GAP_RTTS = 2;
/** Late first tries served slower than twice every rejection that make a slow flight (`Pacer.slowFlight`). */
const LATE_SLOW_MIN = 2;

/**
 * A cut when the pacer's queue has been empty for more than this many gaps: it was sending
 * what callers asked for, not what the callee allows.
 */
const IDLE_GAPS = 2;

/** A wait that only yields: answers arriving at the same instant are read first. */
const RECHECK_MS = 0.001;
/**
 * Paced by rate, a caller that asks more than this many gaps after it was told (or
 * `LATE_WAKE_SLACK_MS`, when longer: timers fire a ms late on their own) woke late; it goes only
 * while the next conforming send is at most as far ahead — two at once (`LateWakeQueue`).
 */
const LATE_WAKE_GAPS = 1;
const LATE_WAKE_SLACK_MS = 2;

/** A window's length is bracketed down to this, ms (or a hundredth of it). */
const WINDOW_RESOLUTION_MS = 1;

/** Openers rejected past the window's measured length before pacing by rate resumes. */
const WINDOW_MISSES = 3;

/** Less than any gap between two slots: `ticketFrom(t + ε)` is the first ticket due after t. */
const TICKET_EPSILON = 1e-9;

/**
 * In a worker pool's window the queue is spaced at this × the flight's rate: the window, not
 * the rate, holds the pool full, and the spacing only stops a window read too large from
 * sending at once. Simulated pool, mean of 24 herds at 1.2×, 1.5× and 3×: normal 10 ms
 * 1,296, 1,207 and 1,147 ms; constant 1 ms 1,069, 1,055 and 1,029 ms.
 */
const POOL_LEAD = 3;

/** A pool's window takes a place as lost after this many service times without an answer. */
const POOL_STALE_SERVICES = 4;
/**
 * …and not before this many service times, whatever `maxSpacingMs`: with service times of
 * seconds, a place taken as lost after `maxSpacingMs` (1 s) sent a request into a full pool every
 * second (simulated, 10 workers × 10 s, 100 callers: 1.77× the bound's requests; 1.12× with this).
 */
const POOL_STALE_MIN_SERVICES = 1.5;

/** First tries of a search remembered (`PacerThrottleState.searchArrivals`); beyond it, the older half is dropped. */
const SEARCH_ARRIVALS_MAX = 1024;
/** First tries remembered for `Pacer.othersFillWindow`; beyond it, the older half is dropped. */
const OTHERS_RECENT_MAX = 256;
/** The allowed rate at this share of a run's level stands at it (`readingOutgrown`). */
const TOP_REACHED = 0.95;
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
 *     pacer.onSettled(now, sentAt);           // … or, for one that says nothing about load (a 500)
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
 * doubling gaps:
 *
 *     probe k at  b + g₀ × (2^(k+1) − 1),   g₀ = 1 / D₀,   b = max(now, hintUntil)
 *
 * up to a gap of `maxSpacingMs` / 4; then that gap until `maxSpacingMs` has passed, then each
 * a quarter of the time waited (`PROBE_LATENESS`), at most 30 `maxSpacingMs` (`PROBE_GAP_MAX`):
 * a reopening is found at most a quarter of the wait late, with a few probes per decade of it.
 *
 * wasting about log₂(D₀ / rate) requests, whatever the latency. The first probe served ends the
 * search: probe sent at b + h, the latest rejected probe sent at b + l (l = 0 if none; a probe
 * served after a later one was rejected ends it at that l too):
 *
 *     x₁ = 1 / l   (or 1 / h when no probe was rejected: D₀ held)
 *
 * — the callee restored capacity between l and h, so x₁ errs high by at most 2×, which the
 * first cut corrects with a measurement. That holds for a bucket, which restored one token; a
 * fixed window restored all of its N, and x₁ is N× low. So after a bracketed probe, a pacer
 * alone counts: the waiting requests go one per round trip while they are served (only when
 * the flight was served at least 4 and that many of the probe's round trips fit within l —
 * otherwise a bucket's one token would cost a rejected request for nothing). S ≥ 4 served
 * in a row is a window: the level is S over the middle of (l, h], and the waiting requests
 * probe for its reopening after probe + l (less how late the flight's first success may have
 * reached the callee, `flightOpenedBy`), 1 / that level apart but at most `REPROBES` across
 * (l, h]; the first served measures T,
 * the rate is S / T (a count cut short by the time l found a floor: start-up grows from it
 * then). A probe sent after
 * probe + h and still rejected says it was no window (a bucket others share): start-up goes on
 * from x₁. Fewer than 4 served: start-up from x₁ — or from S over l when the time l ran out
 * first (round trips too long to count more). A success to a request sent before the search that
 * took more than twice as long as the rejections (the callee spends time serving: a queue, a
 * slot), or the third such success in a row slower than every rejection by a tenth — once 8
 * rejections are back, and none for half of what it took beyond the slowest (a run read too
 * soon for that is confirmed by a later answer, `runConfirmed`) — ends it too, at
 * x₁ = the flight's successes over the callee's share of their time — from the first send to
 * the last answer, less the flight's fastest rejection's round trip (the way there and back,
 * not serving) — the best of that read at any of the flight's answers, and
 * raised as the rest of the flight is answered (parked callers check again every quarter of a
 * service time meanwhile). A success twice as slow read while rejections still came back (first
 * tries still arriving) ends it when a parked caller looks again once they have stopped for
 * that long (`slowFlightHeld`), and so does a probe served as slowly when the flight's medians
 * say the same (`slowFlightFoundLate`).
 *
 * **Cruise** — the allowed rate, with W the level and D̂ the peak delivery rate measured on
 * requests sent since the search ended (flows only, `DeliveryRate`):
 *
 *     startup (until a measured cut):  W = x₁, × 2^(1/2) per windowMs / buckets / 2 that
 *                 the rate held (proved by a paced success sent that much after the last
 *                 growth; at most 4 steps at once)
 *     then, CUBIC made scale-free (RFC 9438), β = `decrease`, K = max(`recoveryMs`, 20 / W):
 *     u(t)    = max(−1, (t − tₚ) / K)
 *     rate(t) = max(floor, min(probeGain × D̂, W × (1 + (1 − β) × u³)))
 *     floor   = 1 / maxSpacingMs, or W below it: a cut at the floor, served since the last
 *               cut, goes to β × the floor (never under 1 / (30 maxSpacingMs))
 *
 * **Saturation** — a reopening is a paced success sent after a rejected request with nothing
 * served in between: the callee had just run out and has capacity again (a fixed window's
 * boundary, a bucket's next token). Between two reopenings it restored exactly what it served,
 * so S successes sent between them over the time between them (each end taken half-way from
 * the last rejected send; a start after a pause in sending, as wide as the end) is its rate,
 * Dₛ — a fixed window's N per window, which no flow peak measures (its bursts at a window's
 * start inflate D̂); a success of that span answered after the reopening that ended it
 * (answers out of order) still counts. The probe that ended the search is a reopening too (the
 * flight's rejections, then capacity), from its send time — as long as no send since left a
 * gap longer than 2 / Dₛ: start-up from a low guess leaves gaps in which a window expires
 * half-used, and what was served then is not what the callee had.
 *
 * **Cutting** — when a request sent after the last cut is rejected or times out:
 *
 *     W = min(rate(now), Dₛ if measured within windowMs, else D̂)
 *         (rate(now) × 1/2 while neither is known)      tₚ = now + K  (now when
 *         W = D̂ < rate(now), a pacer alone: the callee served all it would)
 *     a cut to Dₛ over S successes sends at Dₛ as it is, not β below it, and climbs to the
 *     top of what that reading allows: W = min(Dₛ × (1 + 1/S), Dₛ / β),
 *         tₚ = now + K × ∛((1 − Dₛ / W) / (1 − β)), so that rate(now) = Dₛ;
 *     the reopening right after it, read over more successes, between that level and the
 *     rate that was rejected, replaces Dₛ there; a Dₛ read while first tries outnumbered
 *     its S successes `CROWDED_FIRST_TRIES` to one sets W = Dₛ × (1 + 2/S) at once, tₚ = now
 *
 * After a lull (the queue empty for more than `IDLE_GAPS` gaps, outside start-up and a pool's
 * window), D̂ is what callers asked for, not what the callee allows: W = min(rate(now), Dₛ if
 * measured within windowMs), tₚ = now. Likewise a Dₛ whose span holds a send gap wider than
 * `SPAN_GAP_SLACK` / Dₛ and `SPAN_GAP_RTTS` round trips (a pause in demand) is not taken.
 *
 * A blind cut of a bracketed x₁ keeps start-up going (halving a guess within 2× may land
 * below the callee's rate), capped at probeGain × the peak paced requests deliver. So does a cut while starting up from a bracket: D̂ was measured on
 * the ramp, mostly below the callee's rate (a fixed window that served 2 of its 10 a window
 * says nothing of the 10); start-up goes on from β × W, below the rate that overshot and
 * probeGain × D̂, until Dₛ is measured, which then sets the rate as a cut to Dₛ does; likewise the first Dₛ after the cut that ended
 * any start-up replaces that cut's level (measured on the ramp too). Every waiting request is
 * re-spaced at the new rate at once: requests sent from now on leave at it, so only their
 * answers may cut again (once per round trip, as in TCP).
 *
 * **A window** — a count that found S and a reprobe that found the reopening (the last rejected
 * at r, the served one at h, both from the probe that opened the window) confirm a window of S
 * per T, T in (r, h] (a pacer alone, no pool). Paced evenly at S / T, each window's S leave over
 * T − T / S and the last one's over 90 % of a window — a herd's last ten took 90 ms of a 0.9 s
 * bound. So from then on the window paces, not the rate: when a paced success sent at least r
 * after the window's opener comes back, it opened the next one, and the S − 1 waiting tickets
 * after it (less those already sent since) go at once; the next opener is due at the middle of
 * (r, h] after it, down to a bracket of 1 ms (or 1 %), then at h. A rejected opener raises r,
 * with no cut; one rejected past h (more than `WINDOW_MISSES` times) or any request let go into
 * the window and rejected (the window holds fewer than S: shared, or changed) ends it, at S / h.
 * A booking while the window has room and cannot have ended goes at once. What is already in a
 * window is counted by slots and by the sends logged (`SendLog`), whichever says more; an
 * earlier opener counted in it and then rejected leaves a place the next opener may take
 * (`windowLeftover`). A window the pacer did not open (a new herd's first tries after a pause,
 * never held) re-anchors the schedule: taken as opened at that send and full (`reanchorWindow`).
 *
 * **The count** — one request per round trip while they are served (`startChunk`); where that
 * many round trips do not fit in the bracket, pipelined over the first half of what is left of
 * it, taken as complete with none rejected when due (`startPipe`).
 *
 * **Pacing** — tickets in order; slot of the j-th waiting ticket = base + j / rate (or the
 * probe times above), base no earlier than the last slot due + 1 / rate and any wait hint.
 * Re-spacing is O(1): slots are computed from the ticket number, never stored.
 *
 * **A worker pool** — a search ended by a slow flight found a pool (workers, perhaps a short
 * queue): a pacer alone then also holds its requests to the places the flight proved, one more
 * per answer (`PoolWindow`), and a rejection takes a place back instead of cutting the rate; the
 * queue is spaced at 3× the flight's rate only so that a window read too large cannot send at
 * once. A rate cannot keep a pool whose service times spread full: it meets every worker busy
 * after a run of slow ones and leaves them idle after a run of fast ones. First tries (never
 * paced) that fill the pool hold the places the window counts as free until they are served —
 * those the search let go in its last service time too, and one served frees its place
 * whenever it left. Once the window's own requests are served about as fast as they are
 * rejected, it was no pool (a flight that met a loaded event loop reads slow too): pacing by
 * rate resumes.
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
  private lastRejectAt = Number.NEGATIVE_INFINITY;
  private hintUntil = Number.NEGATIVE_INFINITY;
  private srtt: number | undefined;
  /** Smoothed latency of successes: how long the callee takes to serve one. */
  private okLatency: number | undefined;
  private cutCount = 0;
  private pacedCount = 0;
  private ticket = 0;
  /** The end of a queue this pacer's requests were booked in elsewhere (`followQueue`). */
  private followedUntil = Number.NEGATIVE_INFINITY;
  private generationCount = 0;
  /** Made when the pacer first throttles (see `PacerThrottleState`): a healthy lane holds none. */
  private throttleState: PacerThrottleState | undefined;

  constructor(options: PacerOptions = {}) {
    const v = new OptionsValidator('pacer');
    v.knownKeys(options, KEYS)
      .number('decrease', options?.decrease, 0, 1)
      .check(options?.decrease !== 0 && options?.decrease !== 1, `Expected \`decrease\` in (0, 1), got ${options?.decrease}`)
      .duration('recoveryMs', options?.recoveryMs, { min: 1 })
      .duration('quietMs', options?.quietMs)
      .duration('windowMs', options?.windowMs, { min: 1 })
      .integer('buckets', options?.buckets, 1, { max: MAX_WINDOW_BUCKETS })
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

  /** The throttling state, made on first use: only paths that run once the pacer throttles read it. */
  private get state(): PacerThrottleState {
    if (this.throttleState === undefined) this.throttleState = new PacerThrottleState();
    return this.throttleState;
  }

  /**
   * Reports one answer. `hintMs` is the callee's wait hint, if any (on any signal: a
   * success saying "remaining 0, reset in 10 s" is a hint too). `sentAtMs` is when that
   * attempt was sent: pass it — it is what measures the delivery rate and tells answers to
   * old requests from answers to paced ones. Without it the pacer assumes
   * `now − smoothed latency` (latency learned from the answers that did carry it, else 0).
   * `paced`: whether that attempt took a slot in this pacer's queue, waited for or due at once
   * (`false` for a first try that was never booked): while searching, only paced attempts are
   * probes, and in a pool's window only they hold places. Unknown: judged by its send time.
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
    if (ok && this.mode !== 0 && this.ofFlight(sent)) {
      this.state.flightServed++;
      if (Number.isNaN(this.state.flightOpenedBy)) {
        this.state.flightServedAt = nowMs;
        this.state.flightOpenedBy = this.flightReachedBy(nowMs, nowMs);
      }
      this.state.flightLatencies.record(true, latency);
      this.state.pool?.flightServed(this.state.flightServed);
    }
    // A success of the window a run read, sent before cruise began: `saturation` only sees
    // the sends of cruise. (The mode first: a pacer that never throttled has no state to read.)
    if (ok && this.mode === CRUISE && sent < this.state.runLateTo && !(sent < this.state.reopenedAt)) this.lateInRun(nowMs, sent);
    if (this.mode === CRUISE && sent >= this.state.cruiseAt) {
      if (sent > this.state.lastOkSent && sent > this.state.lastRejectSent) {
        const g = sent - Math.max(this.state.lastOkSent, this.state.lastRejectSent);
        if (g > this.state.widestSendGap && this.state.windowCount === 0) this.state.widestSendGap = g;
      }
      this.pacedRate?.record(nowMs, sent, ok);
      this.pacedAnswers[ok ? 0 : 1]++;
      if (!ok) this.state.cruiseRejects++;
      this.saturation(nowMs, sent, ok);
      if (!ok && paced === false) this.state.othersRejectedAt = nowMs;
      const pool = this.state.pool;
      if (pool !== undefined && paced === false) {
        // A first try's answer says how many of the pool's places are held by requests this
        // pacer never let go (`PoolWindow.othersFilled`).
        pool.otherAnswered(sent);
        if (ok) pool.otherServed(nowMs);
        else pool.othersFilled(nowMs, this.serviceMs);
      } else if (pool !== undefined) {
        pool.answer(
          nowMs,
          ok ? 'ok' : this.othersHeldPool(sent, pool) ? 'other' : 'rejected',
          this.waiting(nowMs),
          latency,
          sent,
        );
        // Served as fast as rejected, far faster than the flight, or a lone request rejected
        // again and again: no pool after all (`PoolWindow.servesAsFastAsRejects`,
        // `servesFasterThanFlight`, `rejectsAlone`). The rate it spaced the queue at, without a
        // pool's lead, paces from here (or what the callee served, if lower: `dropPool`), and
        // this answer is read as any other.
        const noPool = ok ? pool.servesFasterThanFlight : pool.servesAsFastAsRejects || pool.rejectsAlone(nowMs);
        if (noPool) this.dropPool(nowMs, pool, ok);
      }
    } else if (
      this.mode === CRUISE &&
      (paced === false ? sent >= this.state.searchEnteredAt : paced === true && sent >= this.state.searchBase)
    ) {
      // A first try let go while searching, or one of the search's probes, answered after the
      // window was made: its place is free (`PoolWindow.arrivedBefore`), and served, one place
      // it saw held by first tries (`PoolWindow.othersFilled`) is free. (The flight's own
      // successes are places of the window already: `PoolWindow.flightServed`.)
      const pool = this.state.pool;
      if (pool !== undefined) {
        pool.otherAnswered(sent);
        if (ok) pool.otherServed(nowMs);
      }
    } else if (paced === false && this.mode === SEARCH && sent >= this.state.searchEnteredAt) {
      // A first try of the search answered while it searches holds no place any more. (Those
      // sent before the probes' base too: remembered from the search's start, they held places
      // of a pool's window made later until the stale time — simulated, lognormal 100 ms
      // services, 11 first tries sent in the 12 ms before the base held a window of 11 shut
      // from 254 to 556 ms, 1.30× the bound's time.)
      forgetSend(this.state.searchUnanswered, sent);
    } else if (paced === true && this.mode === SEARCH && sent >= this.state.searchBase) {
      // Nor does one of its probes. (Not a request paced before the search: none was logged.)
      forgetSend(this.state.probesUnanswered, sent);
    }
    if (hintMs !== undefined && hintMs > 0) {
      const until = nowMs + hintMs;
      if (until > this.hintUntil) {
        this.hintUntil = until;
        if (this.mode !== 0 && this.state.baseAt < until) this.respace(nowMs, this.state.geometric, this.state.gap);
      }
      if (this.mode === 0) this.enter(nowMs);
      if (this.mode === SEARCH) this.state.searchHinted = true;
    }
    if (ok) {
      if (this.mode === SEARCH && this.alone && this.runServed(nowMs, sent, paced)) return;
      if (this.mode === SEARCH) {
        const f = this.estimator.flightRate(nowMs, this.state.pathLatency);
        if (f !== undefined && f > this.state.flightPeak) this.state.flightPeak = f;
        this.searchSuccess(nowMs, sent, latency, paced !== false);
      } else if (this.mode === CRUISE) this.cruiseSuccess(nowMs, sent, latency, paced);
      return;
    }
    this.lastRejectAt = nowMs;
    if (this.mode === 0) {
      this.enter(nowMs);
      if (paced === false) this.state.flightRejectedSent = sent;
      if (latency >= 0) {
        this.state.rejectLatency = this.state.pathLatency = latency;
        this.state.flightLatencies.record(false, latency);
      }
      return;
    }
    if (this.mode === SEARCH && this.alone && this.runRejected(nowMs, sent, paced)) return;
    if (this.mode === SEARCH) {
      // The slowest rejection of the search: "served slowly" must be slower than rejections
      // ever are. Against the fastest one, latencies that merely vary (lognormal, σ 0.5) made
      // a success slower than twice it common, and ended searches on a false slow flight
      // (simulated token bucket, 100 callers: 224–253 requests over six seeds → 194–197).
      if (latency >= 0 && (latency > this.state.rejectLatency || this.state.rejectLatency === Number.POSITIVE_INFINITY))
        this.state.rejectLatency = latency;
      // The way there and back as the flight met it: a probe sent once the burst is through
      // comes back in a fraction of it (real express-queue: 1.4–2 ms against the flight's
      // 40–80 ms) and made the flight's serving time look that much longer (68/s for 100/s).
      if (latency >= 0 && latency < this.state.pathLatency && this.ofFlight(sent)) this.state.pathLatency = latency;
      if (paced !== false && sent >= this.state.searchBase && sent > this.state.rejectedProbeAt)
        this.state.rejectedProbeAt = sent;
      if (paced !== false && sent >= this.state.searchBase && latency >= 0 && latency < this.state.probeLatency)
        this.state.probeLatency = latency;
      // A first try that left after the search began (a herd reaching the callee over a few ms)
      // is still the flight: its rejection says rejections are still coming back, and breaks a
      // run of slow successes as the flight's own do.
      if (this.ofFlight(sent) || paced === false) {
        this.breakRun();
        this.state.flightRejectAt = nowMs;
        this.state.flightLatencies.record(false, latency);
      }
      this.state.flightRejects++;
      return;
    }
    if (this.state.chunk) {
      // (Not a request sent before a count in cruise's opener: the window before's.)
      if (sent >= this.state.cruiseAt && sent > this.state.chunkFrom) this.endChunk(nowMs, true);
      return;
    }
    if (this.state.reprobe) {
      if (sent < this.state.reprobeFrom) return;
      if (sent >= this.state.cruiseAt && sent > this.state.reprobeRejectedAt) this.state.reprobeRejectedAt = sent;
      if (sent > this.state.chunkFrom + this.state.chunkHigh) this.refuteWindow(nowMs);
      return;
    }
    // A pool's window took a place back (`PoolWindow.answer`): the rate only spaces the queue.
    if (this.state.pool !== undefined) return;
    if (this.state.windowCount > 0 && this.windowRejected(nowMs, sent, paced)) return;
    // While the pacer paces, a first try's rejection does not cut: the pacer never held it back.
    // A herd still arriving fills the callee with first tries whatever the pacer sends, and each
    // of their rejections cut the rate (simulated token bucket, first tries spread over 200 ms:
    // down to 6/s, the herd 6.6× the bound's time); its own requests say whether its rate is too
    // high. After a lull they do cut, to the rate that held (`cut`): a new herd meets a curve
    // that kept climbing while nothing was sent.
    if (paced === false && !this.queueIdle(nowMs)) return;
    if (paced !== false && sent > this.state.lastCutAt && sent >= this.state.cruiseAt) this.state.pacedRejectedSinceCut++;
    // One cut per episode: after a cut, only once a request sent since has been served (the
    // callee serves again: a fixed window reset, a bucket refilled) may a later rejection cut
    // again — or, if nothing is served at all, after a long stretch at the new rate.
    if (
      sent > this.state.cutGateAt &&
      (this.state.servedSinceCut || sent - this.state.lastCutAt > STALL_GAPS / this.allowed(nowMs))
    )
      this.cut(nowMs);
  }

  /**
   * An answer that says nothing about the callee's load (an error of another kind: a 500, a
   * reset), to a request sent at `sentAtMs`: in a worker pool's window its place is free again.
   * Nothing else is learned from it.
   */
  onSettled(nowMs: number, sentAtMs: number, paced?: boolean): void {
    const pool = this.throttleState?.pool;
    if (pool === undefined || this.mode !== CRUISE || sentAtMs < this.state.cruiseAt) return;
    if (paced === false) pool.otherAnswered(sentAtMs);
    else pool.answer(nowMs, 'other', false, Number.NaN, sentAtMs);
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
    if (this.intoWindow(nowMs)) return this.sendNow(nowMs, 0);
    let ticket = 0;
    while (this.state.released.size > 0) {
      const t = this.state.released.takeSmallest() as number;
      if (this.slotOf(t) > nowMs || this.gated(t, nowMs)) {
        ticket = t;
        break;
      }
    }
    if (ticket === 0) {
      // Nobody booked for a while: the schedule is behind, and a slot in the past would send
      // a burst. The queue starts again from now (probes keep their current gap).
      const next = this.slotOf(this.state.nextTicket);
      if (next < nowMs && !this.state.chunk) {
        const gap =
          this.state.geometric && this.state.nextTicket > this.state.baseTicket
            ? next - this.slotOf(this.state.nextTicket - 1)
            : this.state.gap;
        this.respace(nowMs, this.state.geometric, this.state.geometric ? Math.min(gap, this.maxSpacingMs) : this.state.gap);
        // Probing starts again from now: offsets are measured from here.
        if (this.state.geometric) this.state.searchBase = this.state.probeBase = this.state.baseAt;
      }
      ticket = this.state.nextTicket++;
    }
    const wait = this.slotOf(ticket) - nowMs;
    const late = wait <= 0 && ticket >= this.state.earlyTo ? this.lateWait(ticket, nowMs) : 0;
    if (((wait <= 0 && !this.gated(ticket, nowMs)) || ticket < this.state.earlyTo) && late === 0)
      return this.sendNow(nowMs, ticket);
    this.ticket = ticket;
    this.pacedCount++;
    const told = late > 0 ? late : wait <= 0 ? this.placeWait(ticket, nowMs) : this.checkAfter(wait, nowMs, ticket);
    if (told > 0) this.state.lateWakes.tell(ticket, nowMs + told);
    return told;
  }

  /**
   * A request this pacer never held (a first try, `paceFirstAttempts` off) leaves now while it
   * paces by rate: it takes the callee's capacity of one slot all the same, so the slot due
   * next is its own and every waiting ticket moves one gap later. Retries then fill what new
   * requests leave of the rate rather than adding to them: with new requests arriving at twice
   * a bucket's rate for seconds, retries sent at the full rate on top of them were nearly all
   * rejected, each rejection cut, and the rate the pacer ended on (a fifth of the callee's) held
   * the backlog for seconds once the arrivals stopped.
   * Only in cruise: a search's probes and a count of a window keep their own schedule, a wait
   * hint holds the queue whatever else is sent, and in a worker pool's window the first try
   * holds a place instead (`PoolWindow.otherSent`). A search only notes when it left: a pool's
   * window made at its end counts those of the last service time (`PoolWindow.arrivedBefore`).
   */
  unpacedSent(nowMs: number): void {
    if (this.mode !== 0) this.noteOtherSent(nowMs);
    if (this.mode === SEARCH) {
      // Remembered for a pool's window, should the search find one (`endSearchOnFlight`).
      if (!this.alone) return;
      pushBounded(this.state.searchArrivals, nowMs, SEARCH_ARRIVALS_MAX);
      pushBounded(this.state.searchUnanswered, { sentAt: nowMs }, SEARCH_ARRIVALS_MAX);
      return;
    }
    if (this.mode !== CRUISE || !this.alone || this.hintUntil > nowMs) return;
    const s = this.state;
    if (s.pool !== undefined) {
      // A worker pool's window: it holds a place until answered.
      s.pool.otherSent(nowMs, this.poolStaleMs, this.serviceMs);
      return;
    }
    if (s.windowCount > 0 && this.othersFillWindow(nowMs)) {
      s.othersRecent.length = 0;
      this.leaveWindowToOthers(nowMs);
    }
    if (s.geometric || s.chunk || s.reprobe || s.windowCount > 0) return;
    let first = s.baseTicket;
    while (first < s.nextTicket && this.slotOf(first) <= nowMs) first++;
    const head = this.slotOf(first);
    const next = Math.min(Math.max(head, nowMs) + s.gap, nowMs + UNPACED_HOLD_GAPS * s.gap);
    if (next <= head) return;
    s.baseTicket = first;
    s.lastDueAt = next - s.gap;
    s.baseAt = next;
    this.generationCount++;
  }

  /** The ticket of the latest `reserve` that has to wait (0 if it may send now). */
  get lastTicket(): number {
    return this.ticket;
  }

  /**
   * For a caller holding `ticket` whose wait ended: ms to wait before asking again, or 0 to
   * send now. Slots move as the pacer learns (a cut spaces them out, a better estimate brings
   * them in), so a long wait is split: the caller checks again half-way. Paced by rate, a
   * caller that asks long after it was told may wait for a place behind others that woke late
   * with it (`LateWakeQueue`).
   */
  holdFor(ticket: number, nowMs: number): number {
    if (ticket === 0) return 0;
    if (this.mode === 0) {
      this.throttleState?.lateWakes.forget(ticket);
      return 0;
    }
    const wait = this.holdTicket(ticket, nowMs);
    // Every way out of the queue forgets when the caller was told to come back (a chunk's due
    // ticket goes without `sendNow`), so nothing is kept for tickets that left.
    if (wait > 0) this.state.lateWakes.tell(ticket, nowMs + wait);
    else this.state.lateWakes.forget(ticket);
    return wait;
  }

  /** `holdFor` of a ticket while throttling. */
  private holdTicket(ticket: number, nowMs: number): number {
    if (ticket < this.state.earlyTo) return this.sendNow(nowMs, ticket);
    this.adjust(nowMs);
    if (this.state.chunk) {
      if (this.slotOf(ticket) <= nowMs && (!this.state.chunkPiped || ticket < this.state.chunkLast)) return 0;
      return Math.min(Math.max(this.chunkWait(ticket, nowMs), RECHECK_MS), Math.max(this.state.chunkUntil - nowMs, RECHECK_MS));
    }
    const wait = this.slotOf(ticket) - nowMs;
    if (wait > 0) return this.checkAfter(wait, nowMs, ticket);
    if (this.gated(ticket, nowMs)) return this.placeWait(ticket, nowMs);
    const late = this.lateWait(ticket, nowMs);
    return late > 0 ? late : this.sendNow(nowMs, ticket);
  }

  /** Whether cruise paces by rate alone: slots `gap` apart, nothing counted, probed or pooled. */
  private get pacedByRate(): boolean {
    const s = this.state;
    return this.mode === CRUISE && !s.geometric && !s.chunk && !s.reprobe && s.windowCount === 0 && s.pool === undefined;
  }

  /**
   * For a due `ticket`: 0 if it may go now, else how long it waits for a place behind others
   * that came due together (`LateWakeQueue`). Paced by rate only: a count of a window, a pool's
   * places and a search's probes let requests go together on purpose.
   */
  private lateWait(ticket: number, nowMs: number): number {
    if (!this.pacedByRate) {
      this.state.lateWakes.clear();
      return 0;
    }
    const gap = this.state.gap;
    const queued = this.state.lateWakes.size;
    const wait = this.state.lateWakes.holdDue(ticket, nowMs, gap, Math.max(LATE_WAKE_GAPS * gap, LATE_WAKE_SLACK_MS));
    if (this.state.lateWakes.size > queued) this.waitingAfterLateWakes(nowMs);
    return wait;
  }

  /**
   * Queued late wakers hold the rate's next places: the tickets still waiting for their slots
   * move behind them, as they do behind a first try that left (`unpacedSent`) — else the
   * schedule and the queue would each send at the rate.
   */
  private waitingAfterLateWakes(nowMs: number): void {
    const s = this.state;
    const end = s.lateWakes.end;
    let first = s.baseTicket;
    while (first < s.nextTicket && this.slotOf(first) <= nowMs) first++;
    if (this.slotOf(first) >= end) return;
    s.lastDueAt = first > s.baseTicket ? this.slotOf(first - 1) : s.lastDueAt;
    s.baseTicket = first;
    s.baseAt = end;
    this.generationCount++;
  }

  /**
   * A paced request leaves now (returns 0, "send now"). While reprobing or pacing by windows
   * its send is logged (`SendLog`), kept for three windows' time.
   */
  private sendNow(nowMs: number, ticket: number): number {
    const s = this.state;
    if (ticket > 0) s.lateWakes.forget(ticket);
    if (this.mode === SEARCH && ticket > 0) {
      s.probeSends.left(ticket, nowMs, this.slotOf(ticket));
      if (ticket > s.probeSentTicket) s.probeSentTicket = ticket;
      if (this.alone) pushBounded(s.probesUnanswered, { sentAt: nowMs }, SEARCH_ARRIVALS_MAX);
    }
    if (s.reprobe || s.windowCount > 0) s.sends.record(nowMs, nowMs - 3 * Math.max(s.windowHigh, s.chunkHigh, 1));
    if (s.pool !== undefined && this.mode === CRUISE) s.pool.sent(nowMs, ticket);
    if (ticket > 0 && this.pacedByRate) s.lateWakes.sent(nowMs, s.gap);
    return 0;
  }

  /**
   * No pool after all (`PoolWindow.servesAsFastAsRejects`, `servesFasterThanFlight`,
   * `rejectsAlone`): paced by rate from here. The tickets the window held back are re-spaced
   * from now; their slots, at the pool's lead over the flight's rate, had long passed, and
   * re-spaced as due they all went at once (real express-rate-limit, a cold process's first
   * herd: 45–70 requests, 255–280 in the herd). Dropped on a fast success, the level was the
   * flight's (its successes over the span they came back in), no rate: start-up goes on from
   * the rate the pool was taken for, its places per the flight's service time, until a
   * rejection.
   */
  private dropPool(nowMs: number, pool: PoolWindow, onSuccess: boolean): void {
    this.state.pool = undefined;
    if (onSuccess) {
      const asPool = pool.placesRate;
      this.state.level = Math.max(Number.isNaN(asPool) ? 0 : asPool, this.minRate);
      this.resumeStartup(nowMs);
    } else {
      // Dropped on rejections: the rate taken for the pool's came from its flight, which the
      // callee has since refuted. What it served over the estimator's window, counted from the
      // earliest of those successes' sends, is a rate it did keep up (a fixed window misread as
      // a pool: ~290/s of 100/s, against the flight's 10,800/s); start-up grows from there.
      const from = this.estimator.earliestServedSend(nowMs);
      const served = from === undefined || nowMs <= from ? Number.NaN : this.estimator.served(nowMs) / (nowMs - from);
      if (served < this.state.level) {
        this.state.level = Math.max(served, this.minRate);
        this.resumeStartup(nowMs);
      }
    }
    // The tickets from the gate on waited for places whatever their slots said, and the queue's
    // base may have moved past them meanwhile (their slots came due while the window held
    // them): re-spaced from there, they were all due at once. A simulated slot server taken
    // for a pool sent 364 held requests in 60 ms when the window went (1,881 requests for
    // 1,000 callers, bound 1,500).
    if (this.state.baseTicket > pool.gate) this.state.baseTicket = pool.gate;
    this.epochFromNow(nowMs, 1 / this.allowed(nowMs), pool.gate);
    if (this.state.baseAt < this.hintUntil) this.state.baseAt = this.hintUntil;
  }

  /** Whether `ticket` waits for a place in a worker pool's window (`PoolWindow`). */
  private gated(ticket: number, nowMs: number): boolean {
    const pool = this.throttleState?.pool;
    return pool !== undefined && this.mode === CRUISE && !pool.admits(ticket, nowMs);
  }

  /**
   * A due ticket waiting for a place in the pool's window: asks again when its place should
   * be free (places free up about `size` per service time), or when a place not freed for
   * `POOL_STALE_SERVICES` service times is taken as lost — then at once. Sooner when
   * `maxSpacingMs` is shorter, but never within `POOL_STALE_MIN_SERVICES` service times: every
   * place of a pool sent to together is busy for one.
   */
  private placeWait(ticket: number, nowMs: number): number {
    const pool = this.state.pool as PoolWindow;
    const service = this.serviceMs;
    if (pool.rescue(nowMs, this.poolStaleMs) && pool.admits(ticket, nowMs)) return this.sendNow(nowMs, ticket);
    return Math.max(RECHECK_MS, Math.min(pool.checkAfter(ticket, service), service));
  }

  /**
   * Whether a request sent at `sent` met a pool full of requests this pacer never held: first
   * tries were rejected within one service time before it left, so the served ones among them
   * still held their places. Its rejection then frees its place without taking one from the
   * window: a downstream still cruising when the next herd's first tries arrived (real
   * express-queue) had its window shrunk from 10 places to 2 by the retries sent into that
   * full pool, and the herd took 2.1–2.4 s instead of 1.05–1.25 s.
   */
  private othersHeldPool(sent: number, pool: PoolWindow): boolean {
    // Unless this pacer let first tries go just before it: the window counted their places
    // (`PoolWindow.otherSent`), so the pool was full of its own requests, and a rejection that
    // frees a place at once let the next retry go into it (simulated, 400 callers over 2 s:
    // up to 2× the bound's requests).
    return sent <= this.state.othersRejectedAt + this.serviceMs && !pool.othersLetGoBefore(sent, this.serviceMs);
  }

  /** How long a place in a pool's window may go unfreed before it is taken as lost (`placeWait`). */
  private get poolStaleMs(): number {
    const service = this.serviceMs;
    return Math.min(POOL_STALE_SERVICES * service, Math.max(this.maxSpacingMs, POOL_STALE_MIN_SERVICES * service));
  }

  /** One service time as measured: the successes' latency, else the round trip, else `maxSpacingMs`. */
  private get serviceMs(): number {
    return this.okLatency ?? this.srtt ?? this.maxSpacingMs;
  }

  /** Whether requests wait in the queue (a slot ahead, or a place in a pool's window). */
  private waiting(nowMs: number): boolean {
    const last = this.state.nextTicket - 1;
    return this.slotOf(last) > nowMs || this.gated(last, nowMs);
  }

  /**
   * The wait until `ticket`'s slot as booked now (not split) — or its place among callers that
   * woke late together — 0 when due: what a caller compares with its deadline. Searching, a slot is provisional (`searching`).
   */
  slotWait(ticket: number, nowMs: number): number {
    if (ticket === 0 || this.mode === 0 || ticket < this.state.earlyTo) return 0;
    if (this.state.chunk) return this.chunkWait(ticket, nowMs);
    const place = this.pacedByRate ? this.state.lateWakes.placeOf(ticket) : undefined;
    if (place !== undefined) return Math.max(0, place - nowMs);
    const wait = this.slotOf(ticket) - nowMs;
    if (wait > 0 || !this.gated(ticket, nowMs)) return Math.max(0, wait);
    return (this.state.pool as PoolWindow).expectedWait(ticket, this.serviceMs);
  }

  /** Until when the callee's last wait hint holds every slot back (−∞: no hint). */
  get hintedUntil(): number {
    return this.hintUntil;
  }

  /**
   * Changes whenever waiting slots may have moved (a cut, the search's end, a new rate). A
   * driver of its own may wake its waiting callers when it changes instead of polling with
   * `holdFor`'s split waits; kindly's two drivers poll (waking them at every change, the
   * simulated slot server's herd with first tries over 10 ms lost a window: 1.1 → 1.2× the
   * bound's time).
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
    // Its caller will not send it: no probe of a search will leave on it either.
    this.throttleState?.probeSends.forget(ticket);
    this.throttleState?.lateWakes.forget(ticket);
    if (ticket === 0 || this.mode === 0 || ticket < this.state.baseTicket || ticket >= this.state.nextTicket) return false;
    if ((this.slotOf(ticket) <= nowMs && !this.gated(ticket, nowMs)) || this.state.released.has(ticket)) return false;
    if (this.ticket === ticket) this.ticket = 0;
    this.pacedCount--;
    if (ticket === this.state.nextTicket - 1) {
      this.state.nextTicket--;
      return true;
    }
    this.state.released.add(ticket);
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
    return this.throttleState?.measuredShare === true ? 'share' : 'whole';
  }

  /**
   * What this pacer's paced requests delivered over the last window, requests per second —
   * the current rate, not the peak the cuts use — once a cut measured it (`undefined` before).
   */
  delivered(nowMs: number): number | undefined {
    if (this.mode !== CRUISE || !this.state.cutMeasured) return undefined;
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
    this.state.fromFlight = false;
    this.state.startedFromProbe = false;
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
      this.slotOf(this.state.nextTicket - 1) <= nowMs &&
      !this.gated(this.state.nextTicket - 1 - this.state.released.size, nowMs) &&
      this.hintUntil <= nowMs &&
      this.followedUntil <= nowMs
    ) {
      this.mode = 0;
      this.state.startup = false;
      this.state.released.clear();
      this.state.baseTicket = this.state.nextTicket;
      this.state.lastDueAt = Number.NEGATIVE_INFINITY;
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
      if (this.state.pool !== undefined) return Math.max(this.state.level, this.minRate) * 1000;
      // Paced by windows: S per the time between two openers.
      if (this.state.windowCount > 0) return (this.state.windowCount / this.windowNext()) * 1000;
      return this.allowed(Math.max(nowMs, this.hintUntil)) * 1000;
    }
    const measured = this.estimator.rate(nowMs);
    return measured === undefined ? undefined : measured * 1000;
  }

  /**
   * Searching: the gap between the probes around `t` (g₀, 2g₀, 4g₀, … up to a quarter of
   * maxSpacingMs, then a quarter of the time waited, counted from the search's start) — the
   * rate the search is sending at then, not D₀.
   */
  private probeGapAt(t: number): number {
    const cap = this.maxSpacingMs / PROBE_LATENESS;
    let at = this.state.searchBase;
    let g = this.state.gap;
    while (g < cap) {
      at += g;
      if (at > t) return g;
      g *= 2;
    }
    return Math.min(Math.max(cap, (t - this.state.searchBase) / PROBE_LATENESS), PROBE_GAP_MAX * this.maxSpacingMs);
  }

  /** Rate cuts since creation (paced requests still rejected). */
  get cuts(): number {
    return this.cutCount;
  }

  /** Reservations that had to wait, since creation. */
  get paced(): number {
    return this.pacedCount;
  }

  /** A searching caller holding `ticket` looks again `wait` ms from now (`ProbeSends`). */
  private toldToWait(ticket: number, nowMs: number, wait: number): number {
    if (this.mode === SEARCH && ticket > 0) this.state.probeSends.told(ticket, nowMs + wait);
    return wait;
  }

  /**
   * A long wait is checked again half-way (slots may move earlier); short ones are exact.
   * Searching, a parked caller checks again as often as probes leave: the search may end at
   * any answer and bring every slot in.
   */
  private checkAfter(wait: number, nowMs: number, ticket = 0): number {
    if (this.state.geometric) {
      let probe = this.state.baseTicket;
      while (probe < this.state.nextTicket && this.slotOf(probe) <= nowMs) probe++;
      // At the instant the probes were (re)spaced, more answers of that flight may follow and
      // respace them again: check again right after it.
      if (nowMs === this.state.respacedAt) return this.toldToWait(ticket, nowMs, Math.min(wait, RECHECK_MS));
      // The search ends when an answer arrives: a parked caller checks again at the next
      // probe, or half a round trip from now if sooner — but at least a quarter of the way to
      // that probe, so that polling costs a few checks per probe, not one per gap.
      const toProbe = this.slotOf(probe) - nowMs;
      let step = Math.max(Math.min(toProbe, (this.srtt ?? 0) / 2), toProbe / 4, RECHECK_MS);
      // The probe last sent comes back within the path's round trip: look again right then, as
      // its answer may end the search — after a rejected probe, a served one starts the count of
      // a window, which must start at once to finish in time. (Not before: a first probe served
      // starts up from a guess, and callers woken at once sent more at it before the first cut.)
      if (
        probe > this.state.baseTicket &&
        this.state.rejectedProbeAt >= this.state.searchBase &&
        this.alone &&
        Math.max(this.estimator.served(nowMs), this.flightServedAll()) > WINDOW_MIN
      ) {
        const rtt = Math.min(this.state.pathLatency, this.srtt ?? Number.POSITIVE_INFINITY);
        const back = this.slotOf(probe - 1) + rtt - nowMs;
        if (back > 0 && back < step) step = back + RECHECK_MS;
        else if (back <= 0 && nowMs < this.slotOf(probe - 1) + PROBE_OVERDUE_RTTS * (this.srtt ?? rtt))
          // Its answer is late (latencies that spread): look again every round trip of the
          // path until it is in, not a quarter of the way to the next probe — simulated,
          // lognormal 5 ms: the count's first request left 31 ms after the probe was served,
          // ran out of time at 6 of 10, and the herd started up from a floor.
          step = Math.min(step, Math.max(rtt, (this.srtt ?? rtt) / 4, PROBE_OVERDUE_STEP_MS));
      }
      // A slow flight waiting to be read (`slowFlightHeld`) ends the search at a time known now:
      // look again right then, when a pool's window may let this request go.
      const held = this.slowFlightHeldAt();
      if (held > nowMs && held - nowMs < step) step = held - nowMs;
      return this.toldToWait(ticket, nowMs, Math.min(wait, step));
    }
    if (this.state.chunk)
      return Math.min(
        Math.max(this.chunkWait(this.state.nextTicket - 1, nowMs), RECHECK_MS),
        Math.max(this.state.chunkUntil - nowMs, RECHECK_MS),
      );
    if (this.state.fromFlight) {
      // The search ended on the first answer of a slow flight, whose later answers raise the
      // level as they arrive — by 10× within one service time's spread (simulated: 10.9/s at
      // the first of ten answers spread over 17 ms by ±5 % service times, 92/s at the last):
      // a caller far back that slept half its wait computed at the first answer slept for
      // seconds (the herd took 4.2 s instead of 1.1 s). Until a paced request is answered,
      // parked callers check again every quarter of a service time.
      return Math.min(wait, Math.max(RECHECK_MS, Math.min(this.state.gap, (this.okLatency ?? this.state.gap) / 4)));
    }
    if ((this.state.startup || this.state.reprobe || this.levelOnTrial()) && this.alone) {
      // In start-up the rate may grow every growthMs, moving every waiting slot earlier: a
      // caller that slept longer would send late, and the send rate would lag the allowed one
      // (measured: a fixed window's start-up sent one request per first gap, 51 ms, while the
      // allowed rate grew 8×). Likewise while reprobes look for a window's reopening: the one
      // served sets the rate at S / T, or start-up from it. Callers parked half of a wait
      // booked at the reprobes' 42/s woke ~40 ms after their slots at 130/s, and the herd sent
      // at 84/s (simulated, normal 10 ms). Not while a fleet's shared queue releases this
      // pacer's sends (`alone`): its own tickets are then leftovers of the search, which must
      // not race it. And while a level that may be low is on trial (`readMaybeLow`): passed,
      // start-up goes on from it at once. Parked half their waits instead, callers booked at a
      // window count's 33/s slept 750–900 ms, woke long after their slots had moved up, and
      // sent at ~60/s of the 100–120/s allowed (simulated fixed window, normal 40 ms, first
      // tries over 200 ms, seed 24: 1.56× the bound's time, now 1.39×).
      return Math.min(wait, Math.max(this.state.gap, this.growthMs / 2));
    }
    if (this.state.windowCount > 0 && ticket > this.state.baseTicket) {
      // Window k from now opens with its first ticket; the others go as soon as its answer is
      // back: look again then, not at the ticket's own (later) slot.
      const q = this.state.windowCount;
      const p = ticket - this.state.baseTicket;
      if (p % q !== 0) {
        const rtt = this.srtt ?? 0;
        const until = this.state.baseAt + (p - (p % q)) * this.state.gap + rtt - nowMs;
        if (until <= 0) return Math.min(wait, Math.max(rtt / 4, RECHECK_MS));
        wait = Math.min(wait, until);
      }
    }
    return wait <= 2 * this.state.gap ? wait : Math.min(wait, Math.max(2 * this.state.gap, wait / 2));
  }

  /** K: `recoveryMs`, or `RECOVERY_GAPS` gaps at the level when that is longer. */
  private recovery(): number {
    // The level may sit below the floor (or at 0 before one is set): the floor's gaps then.
    return Math.max(RECOVERY_GAPS / Math.max(this.state.level, this.minRate), this.recoveryMs);
  }

  /** rate(t) of the doc comment, requests per ms (cruise). */
  private allowed(t: number): number {
    if (this.state.pool !== undefined) return Math.max(this.state.level * POOL_LEAD, this.minRate);
    let r: number;
    if (this.state.startup) r = this.state.level;
    else {
      let u = (t - this.state.plateauAt) / this.recovery();
      if (u < -1) u = -1;
      r = this.state.level * (1 + (1 - this.decrease) * u * u * u);
    }
    if (r > this.state.ceiling) r = this.state.ceiling;
    return Math.max(r, this.floor());
  }

  /**
   * The lowest rate cruise sends at: one request per `maxSpacingMs` — or the level, when a
   * cut at that floor took it lower for a callee that serves, but slower (see `cut`).
   */
  private floor(): number {
    const level = this.state.level;
    return level > 0 && level < this.minRate ? level : this.minRate;
  }

  /** The slot of `ticket` under the current epoch (−∞ for tickets due before it). */
  private slotOf(ticket: number): number {
    const j = ticket - this.state.baseTicket;
    if (j < 0) return ticket === this.state.baseTicket - 1 ? this.state.lastDueAt : Number.NEGATIVE_INFINITY;
    if (!this.state.geometric) return this.state.baseAt + j * this.state.gap;
    // Probes: gaps g₀, 2g₀, 4g₀, … up to a quarter of maxSpacingMs (`PROBE_LATENESS`), then a
    // quarter of the larger of maxSpacingMs and the time waited, at most 30 maxSpacingMs.
    const cap = this.maxSpacingMs / PROBE_LATENESS;
    const base = this.state.baseAt;
    let at = base;
    let g = this.state.gap;
    for (let k = 0; k <= j; k++) {
      if (g >= cap) return this.spacedProbe(base, at, j - k + 1, cap);
      at += g;
      g *= 2;
    }
    return at;
  }

  /**
   * The probe `m` after the one at `at` once gaps reached `cap`: `cap` apart while less than
   * `PROBE_LATENESS` × `cap` has passed since `base`, then each gap the time since `base` over
   * `PROBE_LATENESS` (a geometric series, so a slot is computed in O(1), not probe by probe)
   * until that reaches `PROBE_GAP_MAX` × maxSpacingMs.
   */
  private spacedProbe(base: number, at: number, m: number, cap: number): number {
    const linear = Math.max(0, Math.ceil((PROBE_LATENESS * cap - (at - base)) / cap));
    if (m <= linear) return at + m * cap;
    const from = at + linear * cap - base;
    // Growing by 1 + 1 / PROBE_LATENESS a probe until the gap would reach its top.
    const top = PROBE_GAP_MAX * this.maxSpacingMs;
    const ratio = 1 + 1 / PROBE_LATENESS;
    const growing = Math.max(0, Math.ceil(Math.log((PROBE_LATENESS * top) / from) / Math.log(ratio)));
    if (m - linear <= growing) return base + from * ratio ** (m - linear);
    return base + from * ratio ** growing + (m - linear - growing) * top;
  }

  /**
   * Starts a new epoch at `nowMs`: tickets already due keep their turn, every waiting one is
   * re-spaced (geometric probes from `gap`, or `gap` apart), no earlier than the last slot
   * due + gap and any wait hint.
   */
  private respace(nowMs: number, geometric: boolean, gap: number): void {
    this.state.respacedAt = nowMs;
    this.generationCount++;
    let first = this.state.baseTicket;
    while (first < this.state.nextTicket && this.slotOf(first) <= nowMs) first++;
    const lastDue = first > this.state.baseTicket ? this.slotOf(first - 1) : this.state.lastDueAt;
    this.state.lastDueAt = lastDue;
    this.state.baseTicket = first;
    this.state.geometric = geometric;
    this.state.gap = gap;
    // Geometric: the first probe is base + g₀, so the base is the last due slot itself.
    const after = geometric ? lastDue : lastDue + gap;
    this.state.baseAt = Math.max(geometric ? nowMs : nowMs, after, this.hintUntil - (geometric ? gap : 0));
    if (!geometric && this.state.baseAt < this.hintUntil) this.state.baseAt = this.hintUntil;
    // Requests booked in a followed queue leave until its end: local bookings come after them.
    if (this.state.baseAt < this.followedUntil) this.state.baseAt = this.followedUntil - (geometric ? gap : 0);
    this.respaceLateWakes(nowMs, geometric, gap);
  }

  /** The queue of late wakers follows a re-spaced schedule; probes and a count's hold empty it. */
  private respaceLateWakes(nowMs: number, geometric: boolean, gap: number): void {
    if (geometric || gap >= CHUNK_HOLD_MS) this.state.lateWakes.clear();
    else if (this.state.lateWakes.size > 0) {
      this.state.lateWakes.respace(nowMs, gap);
      this.waitingAfterLateWakes(nowMs);
    }
  }

  /** Cruise: re-spaces the queue when the allowed rate drifted from the one it was spaced at. */
  private adjust(nowMs: number): void {
    if (this.mode === SEARCH && this.slowFlightHeld(nowMs)) this.endSearchOnFlight(nowMs);
    if (this.mode !== CRUISE) return;
    if (this.state.chunk) {
      const s = this.state;
      if (s.chunkPiped && nowMs >= s.chunkDue && s.chunkServed >= WINDOW_MIN) {
        // Nothing rejected by the time the count was due to end: its requests sent and still
        // unanswered count as served (`startPipe`).
        let pastLast = s.chunkFirst;
        while (pastLast < s.chunkLast && pastLast < s.nextTicket && this.slotOf(pastLast) <= nowMs) pastLast++;
        s.chunkServed = Math.max(s.chunkServed, 1 + pastLast - s.chunkFirst);
        this.endChunk(nowMs, s.chunkServed >= s.chunkMax);
      } else if (nowMs > s.chunkUntil) this.endChunk(nowMs, false);
      return;
    }
    if (this.state.reprobe || this.state.windowCount > 0) return;
    const r = this.allowed(Math.max(nowMs, this.hintUntil));
    const drift = r * this.state.gap - 1;
    const limit = this.state.pool === undefined ? CRUISE_RESPACE_DRIFT : RESPACE_DRIFT;
    if (drift > limit || drift < -limit) this.respace(nowMs, false, 1 / r);
  }

  private enter(nowMs: number): void {
    this.state.searchEnteredAt = nowMs;
    this.state.flightRejectedSent = Number.NEGATIVE_INFINITY;
    this.dropRun();
    this.mode = SEARCH;
    this.state.sends.clear();
    this.state.probeSends.clear();
    this.state.windowRejectedSent = Number.NEGATIVE_INFINITY;
    if (this.state.chunkPiped) this.endPipe(nowMs);
    this.state.chunk = false;
    this.state.chunkInCruise = false;
    this.state.counted = false;
    this.state.pendingWindow = 0;
    this.state.reprobe = false;
    this.state.startup = false;
    this.state.rejectedProbeAt = Number.NEGATIVE_INFINITY;
    this.state.rejectLatency = Number.POSITIVE_INFINITY;
    this.state.flightLatencies.clear();
    this.state.pathLatency = Number.POSITIVE_INFINITY;
    this.state.probeLatency = Number.POSITIVE_INFINITY;
    this.state.flightPeak = 0;
    this.state.flightRun = 0;
    this.state.flightRunLatency = 0;
    this.state.flightRunHeld = 0;
    this.state.flightMixed = false;
    this.state.slowTooSoon = 0;
    this.state.lateSlow = 0;
    this.state.searchArrivals.length = 0;
    this.state.searchUnanswered.length = 0;
    this.state.probesUnanswered.length = 0;
    this.state.flightRejectAt = nowMs;
    this.state.flightRejects = 1;
    this.state.flightServed = 0;
    this.state.servedAtSearch = this.estimator.served(nowMs);
    this.state.pool = undefined;
    this.state.searchHinted = false;
    this.state.windowCount = 0;
    this.state.windowOpen = this.state.windowPrevOpen = Number.NaN;
    this.state.earlyTo = 0;
    this.state.flightStart = this.estimator.earliestSend(nowMs) ?? nowMs;
    this.state.flightServedAt = this.estimator.earliestServedAnswer(nowMs) ?? Number.NaN;
    this.state.flightOpenedBy = this.flightReachedBy(nowMs, this.estimator.earliestServedAnswer(nowMs));
    let d0 = this.estimator.peak(nowMs) ?? this.estimator.answerRate(nowMs) ?? this.minRate;
    if (d0 < this.minRate) d0 = this.minRate;
    this.state.baseTicket = this.state.nextTicket;
    this.state.probeSentTicket = this.state.baseTicket - 1;
    this.state.lastDueAt = Number.NEGATIVE_INFINITY;
    this.state.released.clear();
    this.respace(nowMs, true, 1 / d0);
    this.state.searchBase = this.state.probeBase = this.state.baseAt;
  }

  /**
   * How long the callee took to have room for a served probe: from the search's base to when
   * the probe was due (`ProbeSends.dueOf`: its send, unless its caller looked late) — or from
   * a later base, when the flight's answers came back together and were read
   * one by one. Reading more of its successes raises D₀ and re-spaces the probes from the
   * moment of reading; a real slot server's herd (100 answers released at once, read over
   * 25–40 ms) measured from the first read started up at 24–37/s instead of ~80–90/s: 1.26 s
   * against 1.20 s on average over 80 herds (`npm run demo`'s adaptive row).
   */
  private probeSpan(sent: number): number {
    return this.state.probeSends.dueOf(sent) - this.state.probeBase;
  }

  private searchSuccess(nowMs: number, sent: number, latency: number, probe: boolean): void {
    let x: number | undefined;
    let bracketed = false;
    this.state.fromFlight = false;
    this.state.startedFromProbe = false;
    const isProbe = sent >= this.state.searchBase && probe;
    if (this.runConfirmed(nowMs, isProbe)) {
      // A run of slow successes read too soon after the last rejections, and no rejection
      // since: this later answer (a probe's, most often) ends the search as a slow flight.
      this.state.slowRun = true;
      x = this.flightLevel(nowMs);
      this.state.fromFlight = true;
    } else if (
      isProbe &&
      (this.state.flightLatencies.slowerThanRejections(latency, 2) || this.slowFlightHeldAt() >= 0) &&
      this.slowFlightFoundLate()
    ) {
      // A probe served slowly itself, or while a slow success is held to be read once the
      // rejections stop (`slowFlightHeld`), the flight's medians already saying served slowly:
      // it found a worker free, not a rate. Read as a rate, it brackets the few per second the
      // probes' doubled gaps had come to while first tries kept the pool full, and start-up
      // climbed from there one service time at a time (simulated pool, lognormal 100 ms
      // services, first tries over 200 ms: probes served at 244 ms with the read due at 256 ms,
      // 1.42× the bound on the services the pool ran; now 1.08×). The held success needs no
      // reading after this: leaving search ends its use, and `enter` clears it.
      this.endSearchOnFlight(nowMs);
      return;
    } else if (isProbe) {
      // A probe was served: capacity came back between the last rejected probe and it. One
      // served after a later probe was rejected (its answer slower: it waited in a worker
      // pool's queue, or latencies spread) found capacity that was gone again by that later
      // send: the rejected probe bounds the guess all the same. Taken as "D₀ held" instead,
      // such a probe sent 1 ms into the search started a simulated pool's herd at 1,000/s
      // (normal 10 ms, first tries together: 339 requests, β's cuts bringing it down).
      const rejected = this.state.rejectedProbeAt - this.state.searchBase;
      const span = rejected > 0 ? rejected : this.probeSpan(sent);
      x = 1 / Math.max(span, this.state.gap);
      // Bracketed by probes, the rate is known within 2× only: start up from it. The first
      // probe served: D₀ held, and probing beyond it is CUBIC's business.
      bracketed = rejected > 0;
      this.state.startedFromProbe = true;
      this.state.probeGap = this.state.gap;
    } else if (latency >= 0 && this.slowFlight(nowMs, sent, latency, !probe)) {
      this.endSearchOnFlight(nowMs);
      return;
    } else if (this.ofFlight(sent)) {
      // More of the flight that started the search (answers read one by one): a higher D₀
      // brings the probes in.
      const d = this.estimator.peak(nowMs);
      if (d !== undefined && d * this.state.gap > 1 + RESPACE_DRIFT) {
        this.respace(nowMs, true, 1 / d);
        // The flight's answers came back together (`READ_TOGETHER`): what spreads them is this
        // client reading them one by one, not the callee, so probes are measured from here, not
        // from the first read. A bucket's flight never is: its rejections come back in ~1 ms.
        const fastest = this.estimator.fastestLatency(nowMs) ?? 0;
        if (READ_TOGETHER * (nowMs - this.state.searchBase) < Math.min(fastest, this.state.pathLatency))
          this.state.probeBase = this.state.baseAt;
      }
      return;
    }
    if (x === undefined) return;
    if (this.state.fromFlight) {
      this.endSearchOnFlight(nowMs, x);
      return;
    }
    // Start up (the rate grows each round trip until a paced request is rejected): a probe's
    // answer only bounds the rate.
    this.startCruise(nowMs, x, true, bracketed);
    // A probe served before a later one was rejected is no reopening (capacity was gone again
    // by that later send), nor a bracket to count after.
    if (this.state.startedFromProbe && this.alone && sent > this.state.rejectedProbeAt) {
      // The probe found the callee serving again after the flight's rejections: a reopening,
      // so the first reopening in cruise measures the callee's rate already (real
      // express-rate-limit herds overshot by 2× for two more windows, 16–25 paced requests
      // rejected, before the second one did).
      this.state.reopenedAt = sent;
      this.state.reopenSent = sent;
      this.state.servedSinceReopen = 1;
      this.state.probeReopened = true;
      this.state.widestSendGap = 0;
      this.state.lastOkSent = sent;
      // Not while first tries still arrive (one let go since the probe left), as in cruise
      // (`countInCruise`): a real fixed window across lognormal 10 + 10 ms, first tries over
      // 200 ms, had a count of 13 piped into the window they were filling, 11 rejected, and
      // start-up went on from half the guess (1.7× the bound's time).
      if (bracketed && latency >= 0 && !(this.state.othersSentAt > sent)) {
        const low = this.state.rejectedProbeAt - this.state.flightStart;
        const high = sent - this.state.flightStart;
        this.startChunk(nowMs, sent, latency, low, high, Math.max(2, this.estimator.served(nowMs) - 1, this.flightServedAll()));
      }
    }
  }

  /**
   * Served slowly, rejected fast: the callee spends time serving, and the flight measures it
   * (`flightLevel`, or `x` when the search already read it). A pacer alone holds the pool of
   * workers that shows full by a window (`PoolWindow`); not a fleet, whose other processes take
   * places this pacer cannot count.
   */
  private endSearchOnFlight(nowMs: number, x = this.flightLevel(nowMs)): void {
    if (x === undefined) return;
    this.state.fromFlight = true;
    this.state.startedFromProbe = false;
    this.startCruise(nowMs, x, false, false);
    if (this.alone) {
      this.state.pool = new PoolWindow(this.state.flightServed, this.state.baseTicket, nowMs, this.okLatency);
      this.state.pool.arrivedBefore(
        this.state.searchArrivals,
        this.placesHeldAtSearchEnd(),
        nowMs,
        this.serviceMs,
        this.poolStaleMs,
      );
      this.respace(nowMs, false, 1 / this.allowed(nowMs));
      // The window, not the spacing, holds the pool: its first slot is now, not one gap of the
      // flight's rate after the last slot due (unless a wait hint or a followed queue says later).
      const s = this.state;
      const earliest = Math.max(nowMs, this.hintUntil, this.followedUntil);
      if (s.baseAt > earliest) s.baseAt = Math.max(earliest, s.baseAt - s.gap);
    }
  }

  /**
   * When `slowFlightHeld` will read the slow flight it holds, unless another rejection comes
   * first (NaN: it holds none): once no rejection has come for half of what the slow success
   * took beyond the slowest rejection (or nearly the slowest: below), or once the rejections
   * have stopped for a reason this pacer saw (`rejectionsOverAt`), whichever is sooner. Parked
   * callers look again then (`checkAfter`): polling a quarter of the way to the next probe, they
   * let a pool's window made at that moment wait ~30 ms (simulated, 10 workers of 100 ms,
   * answers after 20 ms, first tries over 200 ms).
   */
  private slowFlightHeldAt(): number {
    const s = this.state;
    const slow = s.slowTooSoon;
    // Many rejections in, one from the far tail is not how slow they come: a simulated pool's
    // herd (lognormal 100 ms services, answers back across lognormal 20 ms, first tries over
    // 200 ms) had a slow success of 189 ms waiting to be read at 250 ms, against 75 rejections
    // of 19 ms at the median and 53 at the slowest; one more rejection came back after 194 ms,
    // 1 ms before the read, and the search went on at 4/s until 678 ms (1.49× the bound on
    // the services the pool ran). Not with fewer: a fixed window's 15 rejections across exponential 20 ms latencies
    // read as a pool's at 41 ms, and that herd took 1.86× instead of 1.12×.
    const f = s.flightLatencies;
    const rejected =
      f.rejectedCount >= SLOW_REJECTIONS_MIN
        ? Math.min(s.rejectLatency, f.rejectedQuantile(SLOW_REJECTION_QUANTILE))
        : s.rejectLatency;
    if (!(slow > 2 * rejected)) return Number.NaN;
    return Math.min(s.flightRejectAt + (slow - rejected) / 2, this.rejectionsOverAt());
  }

  /**
   * When every first try of the search has been out for as long as the slowest rejection took,
   * and not before the latest rejection came back (+∞: none left during the search, or a
   * fleet, whose other processes' first tries this pacer does not see): a first try still
   * unanswered by then is being served, and no rejection is on its way unless more are sent.
   * Waiting half of what the slow success took beyond the slowest rejection after the last one
   * instead left a worker pool empty: first tries over 200 ms, the last rejection back at
   * 219 ms, the search ended at 269 ms, while the last first try had left at ~200 ms and
   * rejections took 20 ms (simulated, 10 workers of 100 ms, answers after 20 ms). Not a
   * shorter share of that wait with no regard to the arrivals: a seventh of it read fixed
   * windows' latencies that spread (exponential, 20 ms) as a pool 35 ms into the herd, while
   * first tries still came, and took 1.12 → 1.87× the bound's time.
   */
  private rejectionsOverAt(): number {
    const s = this.state;
    const last = s.searchArrivals[s.searchArrivals.length - 1];
    if (last === undefined) return Number.POSITIVE_INFINITY;
    // Not before the latest rejection: its round trip may have been longer than any counted.
    return Math.max(last + s.rejectLatency, s.flightRejectAt);
  }

  /**
   * Whether a success slower than twice every rejection, read while the flight's rejections
   * still came back, shows a slow flight now that they have stopped (`slowFlightHeldAt`: the
   * rule `slowFlight` applies at an answer, or the first tries' end, applied when a parked
   * caller looks again). A herd whose first tries reach a worker pool over 200 ms keeps its
   * rejections coming until the last one arrives, and the pool's answers to the first tries
   * it served are all back a service time later: no answer then comes to read the slow flight
   * at, and a probe served 170 ms later ended the search at a guess of 8/s — simulated, 10
   * workers × 100 ms, 1.92× the bound's time.
   */
  private slowFlightHeld(nowMs: number): boolean {
    // NaN when none is held: the test fails.
    if (!(nowMs >= this.slowFlightHeldAt())) return false;
    const s = this.state;
    // Read once (the medians sort every answer of the flight): a success the medians do not
    // back was latencies that spread, and is forgotten.
    s.slowTooSoon = 0;
    return s.flightLatencies.servedSlowly(LATE_FLIGHT_SERVED, LATE_FLIGHT_REJECTED, 2);
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
   * others' leftovers, and the herd took 1.9 s instead of 1.43 s). One per round trip: the
   * fastest of the search's probes, not the smoothed one — a client reading a burst of answers
   * in a backlog inflates the smoothed one to 30–50 ms on loopback (real express-rate-limit herds
   * never counted, and started up from 1 / l ≈ 20/s for ~200 ms), while the probe, sent after
   * the burst, meets the path as the count will. Where that many of the served probe's own
   * round trips would not fit in l, the count is pipelined (`startPipe`): with 20 ms round trips
   * and no count, a simulated fixed window's herd started up from 16/s and took 1.46× the bound.
   * Not where its requests would go less than `PIPE_MIN_SPACING_MS` apart: a bucket's bracket is
   * a few ms long, and a bucket restored one token, so every request of the count but the first
   * is rejected (pipelined there, 118 of 1,152 simulated herds went over 1.1× the requests). A
   * count that runs out of time all the same (a round trip that varies) found a floor: see
   * `endChunk`. A probe served whose answer came back too late to pipe the count within l, on a
   * bracket long against its round trip, has the count made from its answer (`LATE_COUNT_SHARE`).
   */
  private startChunk(
    nowMs: number,
    sent: number,
    latency: number,
    low: number,
    high: number,
    max: number,
    pipe = true,
    countFrom = sent,
  ): boolean {
    const gap = Math.max(Math.min(latency, this.state.pathLatency, this.state.probeLatency), RECHECK_MS);
    // Tried, counted or not: a bracket too short to count in is a bucket's (see above), and a
    // count in cruise would only cost it a request (`countInCruise`).
    this.state.counted = true;
    if (max < WINDOW_MIN || !(low > 0)) return false;
    // Round trips too long to count one at a time within l: the count's requests go evenly
    // over the first half of what is left of l, without waiting for answers (`startPipe`), so
    // that their answers are in before the window can reopen.
    const spacing = (countFrom + low - nowMs) / (2 * max);
    const piped = max * Math.max(gap, latency) >= low;
    if (piped && !(pipe && spacing >= PIPE_MIN_SPACING_MS)) {
      if (!(pipe && countFrom < nowMs && low >= LATE_COUNT_SHARE * latency)) return false;
      // Counted from now (once: a count from now is not late): the window opened by the probe
      // holds the count while it is likely still open — it lasts T in (l, h], so until the
      // middle of that — and the probe is the count's first; after that, the count's first
      // request opens the next. (Taken as over once l had passed, a fixed window still open
      // after 64 ms of its 100 got the probe and ten more: simulated, normal 40 ms, 1.58× the
      // bound's time.)
      return this.startChunk(nowMs, nowMs < sent + (low + high) / 2 ? sent : nowMs, latency, low, high, max, true, nowMs);
    }
    this.state.chunk = true;
    this.state.chunkInCruise = false;
    this.state.chunkPiped = piped;
    this.state.chunkServed = 1;
    this.state.chunkFrom = sent;
    this.state.chunkUntil = countFrom + low + (piped ? 2 * latency : 0);
    this.state.chunkMax = max;
    this.state.chunkGuess = this.state.level;
    this.state.chunkLow = low;
    this.state.chunkHigh = high;
    this.state.chunkGap = gap;
    this.state.chunkMayPipe = pipe;
    if (piped) this.startPipe(nowMs, spacing);
    else this.chunkRespace(nowMs);
    return true;
  }

  /**
   * A count in cruise, where none was tried since the search began: a reopening found at `sent`
   * after the window before (opened at `prevOpener`) served `served` in a row, then rejected.
   * Paced by rate, a fixed window that opens at the first request after it expired serves
   * about S per T plus the wait for that request (real express-rate-limit: 88–92/s of 100/s),
   * and each reopening found late cuts. A process's first herd gets no count after the search:
   * its flight's answers come back after the window it met and the next have ended, and the
   * search ends on a slow read or an unbracketed probe. The window before brackets this
   * reopening as a rejected and a served probe do, and the count tells a window (S in a row
   * again) from a bucket (one token), as after the search. One at a time only: pipelined, a
   * count whose answers came back out of order took a request of the window before for the
   * opener and found fewer than S. S in a row: pace by windows (`windowFromCount`). Fewer, but
   * at least `WINDOW_MIN` and then a rejection: a window all the same, the run before having
   * crossed more than one, and the next reopening opens the next (`windowAtReopening`). Fewer
   * still: cruise goes on as it was (`endChunk`). Not where the search tried a count: the window
   * bisection after it costs rejected openers (simulated, lognormal 5 ms: a herd over 1.1× the
   * requests).
   */
  private countInCruise(
    nowMs: number,
    sent: number,
    prevOpener: number,
    served: number,
    lastServed: number,
    lastGap: number,
  ): void {
    const s = this.state;
    if (!this.alone || s.pool !== undefined || s.windowCount > 0 || s.chunk || s.reprobe) return;
    if (s.pendingWindow > 0) {
      this.windowAtReopening(nowMs, sent);
      return;
    }
    const low = s.lastRejectSent - prevOpener;
    if (s.counted || served < WINDOW_MIN || !(low > 0)) return;
    // Not while first tries still arrive: they fill the window whatever the pacer sends, and a
    // count sent into it at its opening only takes places they would have taken (each comes
    // back as a retry) or finds them taken (simulated fixed window, 100 callers over 500 ms: 7
    // of a count's requests served, pushing 7 first tries out, and 2 rejected; the herds'
    // requests 1.12× the bound's on average, 1.09× since). It may count at a reopening once they
    // stopped.
    if (nowMs - s.othersSentAt < sent - prevOpener) return;
    // Only where the count sends much faster than the run was sent: its round trip (the
    // opener's own, if less: a cold client reading a backlog of answers inflates the smoothed
    // one to 30–50 ms on loopback) under half the run's gaps (at its end, the pace it was
    // rejected at, or on average if less: a run sent in a burst). Otherwise it cannot tell a
    // window from a bucket, and one request per round trip of 20 ms, over the span of a run
    // that had crossed three windows, held a simulated herd for 330 ms (lognormal 20 ms).
    const endGap = Math.min(lastGap, s.gap);
    const runGap = Math.min((lastServed - prevOpener) / (served - 1), endGap);
    if (!(Math.min(this.srtt ?? Number.POSITIVE_INFINITY, nowMs - sent) <= runGap / 2)) return;
    s.counted = true;
    if (!this.startChunk(nowMs, sent, nowMs - sent, low, sent - prevOpener, served, false)) return;
    s.chunkInCruise = true;
    s.chunkRunGap = endGap;
    s.chunkLastOk = sent;
  }

  /**
   * A pipelined count: the first `chunkMax` − 1 waiting tickets are due `spacing` apart from
   * now, every later one waits for the count's end. Its answers come back in the order sent (one
   * round trip on), so the served ones before the first rejection still count what the window
   * restored; the rejections of the requests sent meanwhile are the price, on a bucket, of not
   * waiting (the sequential count pays one).
   */
  private startPipe(nowMs: number, spacing: number): void {
    // The probe was the count's first: chunkMax − 1 more. Those due since the probe left (a
    // probe sent before its answer came back, or due and not gone yet: its caller has not
    // looked) reach the window it opened too, as the count's next. Counted besides, a window's
    // count sent one more than it held (simulated fixed window, normal 40 ms: the eleventh was
    // rejected and answered before the others, the count read 2, and start-up went on from
    // 16/s — 1.58× the bound's time, now 1.20×).
    const s = this.state;
    let due = 0;
    for (let t = s.baseTicket; t < s.nextTicket && due < s.chunkMax - 1; t++) {
      const slot = this.slotOf(t);
      if (slot > nowMs) break;
      if (slot > s.lastOkSent) due++;
    }
    const first = this.epochFromNow(nowMs, spacing);
    this.state.chunkFirst = first - due;
    this.state.chunkLast = first - due + this.state.chunkMax - 1;
    // Its answers are due a round trip after the last send (the fastest one: `chunkGap`; two,
    // for the spread), and the window's reopening is to be probed for from the bracket's low
    // end: by then, with none rejected, the requests still unanswered are taken as served —
    // sent within l after the probe, they are in its window. Waiting for the slowest answer
    // instead (lognormal 20 ms: one came back after 35 ms) let the window reopen before the
    // first reprobe, which then bracketed nothing.
    this.state.chunkDue = Math.max(
      this.state.chunkFrom + this.state.chunkLow,
      nowMs + (this.state.chunkMax - 2) * spacing + 2 * this.state.chunkGap,
    );
  }

  /**
   * A count sent one at a time whose round trips came back slower than the probe's (`latency`,
   * this answer's): the rest of it would not fit in l. The rest goes pipelined, evenly over the
   * first half of what is left of l (`startPipe`), when the count was allowed to be. Returns
   * whether it does.
   */
  private pipeRest(nowMs: number, latency: number): boolean {
    const s = this.state;
    if (!s.chunkMayPipe || !(latency >= 0)) return false;
    const rest = s.chunkMax - s.chunkServed;
    const left = s.chunkFrom + s.chunkLow - nowMs;
    if (rest * Math.max(latency, s.chunkGap) < left) return false;
    const spacing = left / (2 * rest);
    if (!(spacing >= PIPE_MIN_SPACING_MS)) return false;
    s.chunkPiped = true;
    s.chunkUntil = s.chunkFrom + s.chunkLow + 2 * latency;
    const first = this.epochFromNow(nowMs, spacing);
    // Counted as if the pipe had started at the count's first: `adjust` reads what it let go.
    s.chunkFirst = first - s.chunkServed + 1;
    s.chunkLast = first + rest;
    s.chunkDue = Math.max(s.chunkFrom + s.chunkLow, nowMs + (rest - 1) * spacing + 2 * s.chunkGap);
    return true;
  }

  /**
   * A pipelined count's end: tickets it let go are due, the ones held behind it are not —
   * though their slots on the count's spacing have passed — so that `respace` spaces them.
   */
  private endPipe(nowMs: number): void {
    this.state.chunkPiped = false;
    this.epochFromNow(nowMs, this.state.gap, this.state.chunkLast);
    this.state.baseAt = Number.POSITIVE_INFINITY;
  }

  /**
   * The chunk's epoch: the first waiting ticket is due now, the others only once an answer
   * moves the epoch on (one request in flight; `chunkWait` tells them when to look again).
   */
  private chunkRespace(nowMs: number): void {
    this.epochFromNow(nowMs, CHUNK_HOLD_MS);
  }

  /**
   * A linear epoch from now, `gap` apart: the tickets already due (below `limit`) keep their
   * turn, the first waiting one is due now. Returns it.
   */
  private epochFromNow(nowMs: number, gap: number, limit = Number.POSITIVE_INFINITY): number {
    const s = this.state;
    s.respacedAt = nowMs;
    this.generationCount++;
    let first = s.baseTicket;
    while (first < s.nextTicket && first < limit && this.slotOf(first) <= nowMs) first++;
    s.lastDueAt = first > s.baseTicket ? this.slotOf(first - 1) : s.lastDueAt;
    s.baseTicket = first;
    s.geometric = false;
    s.gap = gap;
    s.baseAt = nowMs;
    this.respaceLateWakes(nowMs, false, gap);
    return first;
  }

  /** During the chunk: the wait of the ticket `j` places behind the one due (as predicted). */
  private chunkWait(ticket: number, nowMs: number): number {
    const j = ticket - this.state.baseTicket;
    if (j < 0) return 0;
    if (this.state.chunkPiped) {
      if (ticket < this.state.chunkLast) return Math.max(0, this.slotOf(ticket) - nowMs);
      // Held behind the count: look again when it is due to end, then every spacing.
      const toDue = this.state.chunkDue - nowMs;
      return Math.min(toDue > 0 ? toDue : this.state.gap, Math.max(this.state.chunkUntil - nowMs, RECHECK_MS));
    }
    return Math.max(0, this.state.baseAt - nowMs) + j * (this.state.chunkGap + RECHECK_MS);
  }

  /**
   * The count is over: `complete` when a rejection or the flight's number ended it, not the
   * time l (then what it counted is a floor of what the window holds).
   */
  private endChunk(nowMs: number, complete: boolean): void {
    this.state.chunk = false;
    if (this.state.chunkPiped) this.endPipe(nowMs);
    const s = this.state.chunkServed;
    this.state.chunkIncomplete = !complete;
    if (this.state.chunkInCruise) {
      this.state.chunkInCruise = false;
      // Its requests must have gone faster than the run was rejected at (callers that look late
      // send it at cruise's pace): a bucket refilling at that pace serves a count sent at it in
      // full, and runs out of tokens before S only if the count went faster. A fifth faster, for
      // what a bucket's burst may hold.
      const fast = this.state.chunkLastOk - this.state.chunkFrom <= (s - 1) * this.state.chunkRunGap * COUNT_PACE;
      if (s < this.state.chunkMax || !fast) {
        // Fewer in a row than the run before, sent too slowly, or out of time: no window found.
        // Cruise goes on at its level (the count changed none); its rejection cuts nothing.
        // At least WINDOW_MIN in a row and then a rejection: a window of S after all, and the run
        // before it spanned more than one (paced below their rate, windows expire half-used:
        // real express-rate-limit, a cold process's first herd, 15 served over 194 ms). The
        // next reopening opens the next (`windowAtReopening`).
        if (complete && s >= WINDOW_MIN && fast) {
          this.state.pendingWindow = s;
          this.state.pendingFrom = this.state.chunkFrom;
        }
        this.state.cutGateAt = nowMs;
        this.respace(nowMs, false, 1 / this.allowed(nowMs));
        // The count's requests went at once: the rate owes their time. Paced from its end, a
        // window the count filled rejected a request per gap until it reopened (real
        // express-rate-limit: eleven).
        const owed = this.state.chunkFrom + s / this.allowed(nowMs);
        if (this.state.baseAt < owed) this.state.baseAt = owed;
        return;
      }
      this.windowFromCount(nowMs);
      return;
    }
    if (s < WINDOW_MIN || !(this.state.chunkHigh > 0)) {
      // Fewer than WINDOW_MIN: a bucket's token (or nothing more to learn). Start-up goes on from 1 / l,
      // the chunk's request taking the next slot — or, when time ran out first (round trips too
      // long to count more within l), from S / l: the callee served that many without a
      // rejection. From 1 / l, simulated fixed windows with normal 10 ms and lognormal 20 ms
      // latencies took 1.22 s and 1.34 s on average to serve everyone, against 1.18 and 1.26 s.
      this.state.cutGateAt = nowMs;
      if (!complete && this.state.chunkLow > 0) this.state.level = Math.max(this.state.level, s / this.state.chunkLow);
      this.respace(nowMs, false, 1 / this.allowed(nowMs));
      const after = this.state.chunkFrom + 1 / this.allowed(nowMs);
      if (this.state.baseAt < after) this.state.baseAt = after;
      return;
    }
    // The callee restored S at once — a window, which reopens T after the probe that opened
    // it, T in (l, h] from the flight's first send. The waiting requests probe for that
    // reopening from probe + l, 1 / the bracket's middle rate apart: the first one served
    // measures T within that gap (`cruiseSuccess`), and the rate is S / T. Not with gaps
    // doubling, as the search's probes go: T − l is within one bracket, so a few probes cover
    // it, and doubling gaps measured T within 13–40 ms — real express-rate-limit herds read
    // 116–124 ms windows of 100 ms and cruised at 75–85/s; simulated herds (first tries
    // together, 1 ms) 1,072 → 1,021 ms.
    this.state.level = Math.max(this.state.level, (2 * s) / (this.state.chunkHigh + Math.max(this.state.chunkLow, 0)));
    this.state.startup = false;
    this.state.bracketed = false;
    this.state.guessed = false;
    this.state.rampLevel = true;
    this.raiseCeiling(this.state.level);
    this.state.reprobe = true;
    this.state.reprobeRejectedAt = Number.NEGATIVE_INFINITY;
    // The chunk's own rejection is no reopening's bracket.
    this.forgetReopening();
    this.state.exhausted = false;
    this.state.probeReopened = false;
    this.state.cutGateAt = nowMs;
    // At most `REPROBES` across the bracket: 1 / level apart, the wide bracket of a large
    // window (a second's 100, bracketed within (0.66, 1.31] s by the search's doubling probes)
    // cost 35 rejected reprobes before its reopening.
    const bracket = this.state.chunkHigh - Math.max(this.state.chunkLow, 0);
    this.respace(nowMs, false, Math.max(1 / this.state.level, bracket / REPROBES));
    // T > l: the first reprobe a gap after probe + l — or, when the count found the whole
    // window, one round trip of the probes after it: a window ending within that gap was
    // otherwise found only by a first reprobe served, which says T is shorter but not by how
    // much, and the pacer started up from a floor instead of pacing by windows (real
    // express-rate-limit: one to four herds of eight took 1.07–1.21 s instead of ~0.95 s).
    // And l is measured from the flight's first send, while its window opened when its first
    // success reached the callee: a cold client's first tries arrive tens of ms after they leave,
    // so T may exceed l by that much, and a first reprobe at probe + l came after the reopening
    // (real express-rate-limit, 2 s windows: 3 herds of 8, which then started up from a floor
    // and took 1.7× the bound's requests). How late is known only roughly — its answer less the
    // flight's fastest round trip read 40 ms where it was ~80 for a client under load reading its
    // answers in a backlog (first success sent at 1.5 ms, answered at 182, fastest 141), and 1
    // herd in 6 still went wrong — so once that says the first tries did not arrive together
    // (`flightOpenedBy` after the flight left), the reprobes start as if the window opened as
    // late as that success's answer.
    const late =
      this.state.flightOpenedBy > this.state.flightStart
        ? Math.min(this.state.flightServedAt - this.state.flightStart, Math.max(this.state.chunkLow, 0))
        : 0;
    const from =
      this.state.chunkFrom +
      Math.max(this.state.chunkLow, 0) -
      late +
      (complete ? Math.min(this.state.gap, this.state.probeLatency, 2) : this.state.gap);
    if (this.state.baseAt < from) this.state.baseAt = from;
    // Answers to the count's requests still on their way are no reprobe's.
    this.state.reprobeFrom = this.state.baseAt;
  }

  /**
   * A count in cruise found S in a row again: a window of S, which reopened between the window
   * before's last rejected request and the count's opener, (l, h] after that window's opener.
   * It is full now (the count filled it): pace by windows from here, the next opener at its
   * bracket's middle. No reprobes, unlike after the search's count: the window before
   * bracketed this reopening already, and reprobing cost a rejected request for nothing
   * (simulated, lognormal 5 ms: 211 requests where 209 were needed without the count).
   */
  private windowFromCount(nowMs: number): void {
    const s = this.state;
    this.pacedByWindows(nowMs, s.chunkServed, s.chunkLow, s.chunkHigh);
    s.windowPrevOpen = Number.NaN;
    this.reanchorWindow(nowMs, s.chunkFrom);
    s.windowForeign = false;
  }

  /**
   * Cruise found a window of `count` whose length is within (`low`, `high`] (a count in cruise):
   * paced by windows from here, its last rejected request the window's latest rejected opener.
   */
  private pacedByWindows(nowMs: number, count: number, low: number, high: number): void {
    const s = this.state;
    s.startup = false;
    s.bracketed = false;
    s.guessed = false;
    s.windowCount = count;
    s.windowLow = low;
    s.windowHigh = high;
    s.windowMisses = 0;
    s.level = Math.max(count / high, this.minRate);
    this.raiseCeiling(s.level);
    s.plateauAt = nowMs;
    s.cutGateAt = nowMs;
    s.windowRejectedSent = s.lastRejectSent;
  }

  /**
   * A count in cruise found a window of S (`pendingWindow`) opened at `pendingFrom`, though
   * not the run before it: the next reopening, at `sent`, opens the next window, and cruise's
   * requests rejected since bracket its length as rejected and served reprobes do. Pace by
   * windows from here: S − 1 more go into this one now.
   */
  private windowAtReopening(nowMs: number, sent: number): void {
    const s = this.state;
    const count = s.pendingWindow;
    s.pendingWindow = 0;
    const low = s.lastRejectSent - s.pendingFrom;
    if (!(low > 0) || !(sent > s.lastRejectSent)) return;
    this.pacedByWindows(nowMs, count, low, sent - s.pendingFrom);
    s.windowOpen = s.pendingFrom;
    this.openWindow(nowMs, sent);
  }

  /**
   * A window that restored S at once reopens at most h after the probe that opened it: a probe
   * sent later and still rejected says the S were no window's (a bucket shared with other
   * callers, whose tokens those took meanwhile — four processes pacing alone against one leaky
   * bucket probed on for 0.5 s and read 5/s, the herd took 3.2 s instead of 1.4 s). Start-up
   * goes on from the bracket's guess.
   */
  private refuteWindow(nowMs: number): void {
    this.state.reprobe = false;
    this.resumeStartup(nowMs);
    this.state.bracketed = true;
    this.state.level = Math.max(this.state.chunkGuess, this.minRate);
    this.state.cutGateAt = nowMs;
    this.respace(nowMs, false, 1 / this.state.level);
  }

  /** The first ticket whose slot is at `t` or later (linear epoch). */
  private ticketFrom(t: number): number {
    return this.state.baseTicket + Math.max(0, Math.ceil((t - this.state.baseAt) / this.state.gap));
  }

  /** The first ticket of the queue not yet due (nor let go into a window). */
  private firstWaiting(nowMs: number): number {
    let first = this.state.baseTicket;
    while (first < this.state.nextTicket && this.slotOf(first) <= nowMs) first++;
    return Math.max(first, this.state.earlyTo);
  }

  /**
   * The tickets due from `t` to `nowMs`, other than the opener sent at `sent`. An opener due
   * before the current epoch began (a rejected opener, answered after the next tickets left,
   * re-spaced the queue) is none of them: taking one off for it all the same, round trips of
   * 20 ms let its window take one request more than it holds.
   */
  private dueSince(t: number, nowMs: number, sent: number): number {
    const inEpoch = Math.max(0, this.ticketFrom(nowMs + TICKET_EPSILON) - this.ticketFrom(t));
    return Math.max(0, inEpoch - (sent >= this.state.baseAt - TICKET_EPSILON ? 1 : 0));
  }

  /** A paced success sent at `sent` opened a window: the next tickets go into it now. */
  private openWindow(nowMs: number, sent: number, since?: number): void {
    const s = this.state;
    const from = s.windowOpen + s.windowLow;
    s.windowPrevOpen = s.windowOpen;
    s.windowOpen = sent;
    s.windowLeftover = 0;
    s.windowForeign = false;
    // Tickets due since the last window may have ended, other than this one, are in this window
    // too (sent before its answer came back), or an earlier opener still on its way. Counted by
    // slots (`dueSince`; for the first window, `since`: the reprobes sent after its opener), which
    // include tickets due whose callers have not looked yet, and by the sends logged, which
    // re-spacing cannot hide: whichever says more. An opener rejected since was answered and
    // took no place.
    const loggedFrom = Math.max(Math.min(from, sent), s.windowRejectedSent + TICKET_EPSILON);
    const logged = Math.max(0, s.sends.countBetween(loggedFrom, nowMs) - 1);
    const due = Math.max(since ?? this.dueSince(from, nowMs, sent), logged);
    const first = this.firstWaiting(nowMs);
    const to = Math.min(s.nextTicket, first + Math.max(0, s.windowCount - 1 - due));
    s.windowUsed = 1 + due + Math.max(0, to - first);
    if (to > s.earlyTo) s.earlyTo = to;
    this.windowRespace(nowMs);
  }

  /** A booking while the current window has room and has surely not ended: it goes now. */
  private intoWindow(nowMs: number): boolean {
    const s = this.state;
    if (s.windowCount === 0 || !this.alone || s.windowUsed >= s.windowCount || nowMs >= s.windowOpen + s.windowLow) return false;
    if (this.firstWaiting(nowMs) < s.nextTicket) return false;
    s.windowUsed++;
    s.earlyTo = ++s.nextTicket;
    if (s.baseTicket < s.earlyTo) this.windowRespace(nowMs);
    return true;
  }

  /** The next window's opener is the first waiting ticket, due when the window should have ended. */
  private windowRespace(nowMs: number): void {
    const s = this.state;
    const first = this.firstWaiting(nowMs);
    s.respacedAt = nowMs;
    this.generationCount++;
    s.baseTicket = first;
    s.lastDueAt = s.windowOpen;
    s.geometric = false;
    s.gap = s.windowHigh / s.windowCount;
    s.baseAt = Math.max(nowMs, s.windowOpen + this.windowNext(), this.hintUntil);
  }

  /**
   * When to send the next window's opener, after the current one opened: the window's length
   * is known within (low, high]; halving that costs one rejected opener at most, until the
   * bracket is within a millisecond (or a hundredth of the window).
   */
  private windowNext(): number {
    const lo = this.state.windowLow;
    const hi = this.state.windowHigh;
    return hi - lo > Math.max(WINDOW_RESOLUTION_MS, hi / 100) ? (lo + hi) / 2 : hi;
  }

  /**
   * A paced request rejected in a window: one let go into it (before it could have ended) says
   * the window holds less than counted, and pacing by rate resumes; an opener sent too soon
   * raises the window's lower bound, and the next one goes a half-bracket later. Returns
   * whether it was handled (no cut).
   */
  private windowRejected(nowMs: number, sent: number, paced: boolean | undefined): boolean {
    const s = this.state;
    if (paced === false) return true;
    if (sent <= s.windowOpen) {
      // An earlier opener, on its way when this window opened, was counted in it: its place
      // there is free. And the window before ran longer than it had been sent after.
      if (sent >= s.windowPrevOpen + s.windowLow) {
        // Taken now by the first waiting ticket while the window surely holds it. Left free,
        // the next opener (sent at the bracket's middle) was served by it or by the next
        // window, which cannot be told apart: read as the former when it was the latter, the
        // window after was counted one short and took one too many (simulated, normal 10 ms).
        const first = this.firstWaiting(nowMs);
        if (first < s.nextTicket && nowMs < s.windowOpen + s.windowLow) s.earlyTo = first + 1;
        else s.windowLeftover++;
        const d = sent - s.windowPrevOpen;
        if (d > s.windowLow && d < s.windowHigh) {
          s.windowLow = d;
          this.windowRespace(nowMs);
        }
      }
      return true;
    }
    const d = sent - s.windowOpen;
    if (d >= 2 * s.windowHigh) {
      // Sent a whole window late or more (after a pause, a new herd's first tries opened the
      // window this one met full): it says nothing of the window's length — taken as a longer
      // window, it stretched the bracket to the pause, and pacing by rate resumed at S over it
      // (simulated herds in a row, normal 10 ms: the second herd 1.42–1.64× the bound). A
      // window is open at its send: the next opener goes when one opened then would end.
      this.reanchorWindow(nowMs, sent);
      return true;
    }
    if (d < s.windowLow) {
      // In a window others opened, nothing was let go: a request sent on the old schedule
      // before the pacer knew of it says nothing of what the window holds.
      if (s.windowForeign) return true;
      this.leaveWindow(nowMs);
      return false;
    }
    if (d > s.windowLow) s.windowLow = d;
    if (sent > s.windowRejectedSent) s.windowRejectedSent = sent;
    if (s.windowLow >= s.windowHigh) {
      s.windowHigh = s.windowLow + Math.max(WINDOW_RESOLUTION_MS, s.windowLow / 100);
      if (++s.windowMisses > WINDOW_MISSES) {
        this.leaveWindow(nowMs);
        return false;
      }
    }
    this.windowRespace(nowMs);
    return true;
  }

  /**
   * A window the pacer did not open was open at `sent` (first tries it never held, after a
   * pause): taken as opened then and full, so that the next opener goes when it should end.
   */
  private reanchorWindow(nowMs: number, sent: number): void {
    const s = this.state;
    s.windowPrevOpen = s.windowOpen;
    s.windowOpen = sent;
    s.windowUsed = s.windowCount;
    s.windowLeftover = 0;
    s.windowForeign = true;
    this.windowRespace(nowMs);
  }

  /**
   * Whether the first tries let go within the window's longest length are as many as the window
   * holds, and were within the length before it too: callers that keep arriving fill every
   * window by themselves, and what pacing by windows sends at each opening only pushes one of
   * them out (it comes back as a retry) or is rejected. Paced by rate instead, each first try
   * moves the waiting retries one gap later. (A herd arriving at once, after a pause, fills one
   * window: pacing by windows holds, its first window re-anchored — `reanchorWindow`.)
   * Simulated fixed window, 100 callers over 500 ms: a window opened at 219 ms let 11 go, 3 of
   * them rejected, the other 8 pushing first tries out (1.087 → 1.078× the bound's requests
   * on average over 24 seeds, worst 1.213 → 1.153× over 8).
   */
  private othersFillWindow(nowMs: number): boolean {
    const s = this.state;
    const recent = s.othersRecent;
    let i = recent.length;
    while (i > 0 && (recent[i - 1] as number) > nowMs - s.windowHigh) i--;
    if (recent.length - i < s.windowCount) return false;
    let j = i;
    while (j > 0 && (recent[j - 1] as number) > nowMs - 2 * s.windowHigh) j--;
    return i - j >= s.windowCount;
  }

  /** A first try left at `nowMs` (`othersSentAt`, `othersRecent`: the last `OTHERS_RECENT_MAX`). */
  private noteOtherSent(nowMs: number): void {
    const s = this.state;
    s.othersSentAt = nowMs;
    pushBounded(s.othersRecent, nowMs, OTHERS_RECENT_MAX);
  }

  /** Back to pacing by rate, at the window's: its count over its longest measured length. */
  private leaveWindow(nowMs: number): void {
    const s = this.state;
    s.level = Math.max(s.windowCount / s.windowHigh, this.minRate);
    s.windowCount = 0;
    s.startup = false;
    s.plateauAt = nowMs;
    this.respace(nowMs, false, 1 / this.allowed(nowMs));
  }

  /**
   * First tries fill the windows (`othersFillWindow`): back to pacing by rate, at the window's
   * count over its length — a count made while first tries took places too, so the level may
   * be low, and it is put to the test (`readMaybeLow`). Cruising there, nothing is rejected
   * below the callee's rate once the arrivals stop (simulated, normal 40 ms, first tries over
   * 200 ms: a count of 4 of a window's 10 paced the herd at 33/s of 100/s to its end, 2.3× the
   * bound's time).
   */
  private leaveWindowToOthers(nowMs: number): void {
    this.leaveWindow(nowMs);
    this.readMaybeLow(nowMs);
  }

  /** No span between reopenings measured or begun: the next two reopenings read the callee afresh. */
  private forgetSpan(): void {
    this.forgetReopening();
    this.state.exhausted = false;
    this.state.saturatedRate = Number.NaN;
    this.state.spanFrom = this.state.spanTo = Number.NaN;
  }

  /** No reopening in cruise to read the callee's rate from, or to count from, yet. */
  private forgetReopening(): void {
    this.state.reopenedAt = this.state.reopenSent = Number.NaN;
    this.state.servedSinceReopen = 0;
  }

  /** Start-up goes on from the level as it stands (a guess, or a floor): it grows until a rejection. */
  private resumeStartup(nowMs: number): void {
    this.state.windowCount = 0;
    this.state.startup = true;
    this.state.guessed = true;
    this.state.rampLevel = false;
    this.state.ceiling = Number.POSITIVE_INFINITY;
    this.state.grewAt = nowMs;
  }

  /**
   * What the flight that started the search was served, answered before its first rejection or
   * after: the estimator's window (500 ms by default) forgets it long before a window of a
   * minute reopens.
   */
  private flightServedAll(): number {
    return this.state.servedAtSearch + this.state.flightServed;
  }

  /**
   * When a flight's success answered at `answeredAt` reached the callee, at the latest but
   * for the way back (its answer less the flight's fastest round trip).
   */
  private flightReachedBy(nowMs: number, answeredAt: number | undefined): number {
    if (answeredAt === undefined) return Number.NaN;
    return answeredAt - (this.estimator.fastestLatency(nowMs) ?? 0);
  }

  /**
   * Whether a request sent at `sent` belongs to the flight that started the search: sent before
   * its first rejection came back, or at that very instant — a herd's requests that all left at
   * t = 0, its first rejection answered at once (simulated, normal latencies clipped at 0): read
   * as sent after the search began, the flight's successes were no slow flight, and a worker
   * pool's herd was paced by rate from a probe's guess (1.1–1.8 s; one herd 344 requests).
   */
  private ofFlight(sent: number): boolean {
    return sent <= this.state.searchBase;
  }

  /**
   * Whether a success to the flight that started the search says the callee spends time
   * serving (a queue, a slot): slower than twice the slowest rejection, or the third served in
   * a row, each slower than every rejection by a tenth (`SLOW_MARGIN`), with no rejection of
   * the flight in between. A
   * single success slower than every rejection is common when latencies merely vary
   * (lognormal: it ended searches on a false slow flight), a run of them is not — 10 of 100
   * answers in random order start with three in a row 0.7 % of the time. But one event loop
   * working through a burst slows its rejections as much as the callee's service: on a real
   * express-queue (10 × 100 ms) the rejections came back after 57–121 ms and the ten served
   * at 131–158 ms, so the rule of twice alone ended the search on the queued eleventh, 100 ms
   * later (1.2–1.6 s herds). Neither rule reads before `FLIGHT_REJECTS_MIN` rejections are
   * back, and twice the slowest counts only once no rejection of the flight has come back for
   * half of what the success took beyond the slowest (the run's own test, below): while they
   * still arrive, the slowest seen so far is not how slow they get (simulated, exponential
   * latencies of 2 ms, 12 seeds: fixed-window herds 440 → 202 requests, token buckets 267 →
   * 199). Not "for as long as the slowest took": a real express-queue herd's queued eleventh,
   * 63 ms after the last rejection of 92 ms, then missed its slow flight. A success back too
   * soon still joins the run, which a later answer may confirm (`runConfirmed`); each that held
   * on its own counts towards the three.
   * A first try sent after the search began is the flight too (a herd arriving over more than
   * a service time), but only by the rule of twice: a slot server answers those with the
   * rejections of their slot, and the run's rule read them as a pool (simulated, first tries
   * over 150 ms: the slot server 1.0 → 1.23× the bound's time). Before, a worker pool met by
   * such a herd was paced from a probe's guess, one request per service time at first:
   * simulated, 1.77× the bound's time; real express-queue, first tries over 200 ms,
   * 1.73–1.79 s → 1.17–1.18 s. Two such first tries, not one (`LATE_SLOW_MIN`): a fixed window's
   * first try sent 60 ms into the search came back in 62.7 ms across lognormal 10 + 10 ms, the
   * slowest of 60 rejections having taken 30.7 ms; read as a pool at 194/s, the window was paced
   * by places until a rejection as fast as the successes dropped the pool 800 ms later, and the
   * herd took 1.48× the bound's time (simulated, first tries over 500 ms, seed 2).
   */
  private slowFlight(nowMs: number, sent: number, latency: number, firstTry: boolean): boolean {
    const late = !this.ofFlight(sent);
    if (late && !firstTry) return false;
    if (this.state.flightRejects < FLIGHT_REJECTS_MIN) return false;
    const sinceReject = nowMs - this.state.flightRejectAt;
    if (latency > 2 * this.state.rejectLatency) {
      if (2 * sinceReject >= latency - this.state.rejectLatency) {
        if (late && ++this.state.lateSlow < LATE_SLOW_MIN) return false;
        this.state.slowRun = false;
        return true;
      }
      if (latency > this.state.slowTooSoon) this.state.slowTooSoon = latency;
    }
    if (late) return false;
    // Slower because it came back later, not because it left earlier: a callee that holds
    // every answer to the end of its slot returns the flight's first-sent requests (the ones
    // it served) in the same moment as its rejections, and their latency exceeds the
    // rejections' by no more than the time the flight took to leave (a real slot server, Retry-After
    // releasing the herd over 26 ms: three successes 26 ms slower than every rejection, read
    // within 1 ms of them, made a slow flight of 297/s against 100/s).
    if (this.state.flightMixed || !(latency > SLOW_MARGIN * this.state.rejectLatency)) {
      this.breakRun();
      return false;
    }
    this.state.flightRun++;
    if (latency > this.state.flightRunLatency) this.state.flightRunLatency = latency;
    if (2 * (nowMs - this.state.flightRejectAt) >= latency - this.state.rejectLatency) this.state.flightRunHeld++;
    if (this.state.flightRunHeld < FLIGHT_RUN && !this.runConfirmed(nowMs, false)) return false;
    this.state.slowRun = true;
    return true;
  }

  /**
   * A flight answer that is no slow success (a rejection, or a success no slower than one).
   * Once a success of the run held (no rejection came back for half of what it took beyond the
   * slowest), the flight is mixed for good. Successes read too soon to hold may only have come
   * back ahead of the rest of the rejections: they are dropped, not held against the flight
   * (held against it, a simulated pool with normal 40 ms latencies read one such success, then
   * a rejection, and never found its slow flight: 1.34 → 1.66× the bound's time).
   */
  private breakRun(): void {
    if (this.state.flightRunHeld > 0) this.state.flightMixed = true;
    this.state.flightRun = 0;
    this.state.flightRunLatency = 0;
  }

  /**
   * Whether a run of slow successes read too soon to hold one by one makes a slow flight now:
   * at least `FLIGHT_RUN` of them, no rejection of the flight after any, and none since for as
   * long as the slowest of them took beyond the slowest rejection — or half that, read at a
   * probe's answer. A cold process's first herd against a real express-queue read its ten
   * served in the backlog that ended with the rejections (230–280 ms against ~200 ms), the
   * queued eleventh 30–120 ms later, and started up from the probe's 6–9/s: 1.7–2.0 s herds,
   * bound 1.02 s. Half the wait at the flight's own successes read false slow flights in
   * simulated herds with exponential 20 ms latencies and first tries over 3 ms (buckets: up
   * to 1.45× the bound's requests); at a probe's answer it read none in the same sweeps, and
   * the cold herds need it there (their eleventh came too soon even for the full wait).
   */
  private runConfirmed(nowMs: number, atProbe: boolean): boolean {
    const s = this.state;
    const waited = (atProbe ? 2 : 1) * (nowMs - s.flightRejectAt);
    return s.flightRun >= FLIGHT_RUN && !s.flightMixed && waited >= s.flightRunLatency - s.rejectLatency;
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
    const served = this.estimator.flightRate(nowMs, this.state.pathLatency);
    if (raw === undefined || served === undefined) return raw;
    // The best the flight proved at any of its answers, as the delivery-rate peak filter does:
    // a straggler that waited in the callee's queue (express-queue's one waiting request,
    // answered a service time after the rest) must not pull it down — since the search waits
    // for a success slower than twice the slowest rejection, that straggler is often the one
    // that ends it (measured: 10 per 101 ms at the tenth answer, 11 per 196 ms at the 11th).
    return Math.max(raw, served, this.state.flightPeak);
  }

  /**
   * When the request sent at `sent`, answered now, reached the callee at the latest: its
   * answer took no less than the fastest one. A process's first herd sends its first tries
   * over tens of ms and they wait for connections, so their send times say little of when
   * the callee saw them (real express-rate-limit, cold: first tries sent over 55 ms, answered
   * 100–200 ms later, the window reopening among them 96 ms after the first opened).
   */
  private reachedAt(nowMs: number, sent: number): number {
    const fastest = this.estimator.fastestLatency(nowMs);
    return fastest === undefined ? sent : Math.max(sent, nowMs - fastest);
  }

  /**
   * Searching, a success. A first try served though first tries sent before it were rejected
   * is the callee restoring capacity while the herd is still arriving (first tries spread over
   * more than a window): a run starts, counting what is served from there. Returns true when
   * the success was the run's (a probe served within it is one more of the window, not a
   * reopening of its own) or ended it in cruise.
   */
  private runServed(nowMs: number, sent: number, paced: boolean | undefined): boolean {
    const state = this.state;
    if (Number.isNaN(state.runFrom)) {
      if (paced === false && sent > state.flightRejectedSent && Number.isFinite(state.flightRejectedSent))
        this.startRun(nowMs, sent);
      return false;
    }
    const closing = !Number.isNaN(state.runCutoff);
    // Sent after a request of the run's was rejected: not the window the run counts, and maybe
    // the start of the next run (the run waiting to close must not hold that up).
    if (closing && sent >= state.runCutoff) {
      this.dropRun();
      return this.runServed(nowMs, sent, paced);
    }
    if (sent < state.runFrom) {
      // A first try sent before the run's start, answered after it, is the window's all the
      // same; it counts if the run is cut short (`recountRun`), where without it the run would
      // learn nothing. A probe sent then is read as a probe.
      if (paced !== false || sent <= state.runFloor || this.ofFlight(sent)) return false;
      if (!closing) {
        state.runSent.push(sent);
        return false;
      }
    }
    // Reached the callee after the window the run counts: that window is over.
    if (this.reachedAt(nowMs, sent) >= state.runReachedAt + state.runWindow)
      return closing ? this.closeRun(nowMs) : this.endRun(nowMs, Number.NEGATIVE_INFINITY, false, state.runServed < state.runMax);
    state.runServed++;
    state.runSent.push(sent);
    if (sent > state.runLastSent) state.runLastSent = sent;
    // A probe served meanwhile is read as a probe as well: the run may not read at all.
    if (closing) return this.closeRun(nowMs);
    if (state.runServed >= state.runMax) return this.endRun(nowMs, Number.NEGATIVE_INFINITY);
    return paced !== false;
  }

  /** The run's successes sent before its cut-off, once an earlier send was rejected. */
  private recountRun(): void {
    const state = this.state;
    let served = 0;
    let last = Number.NEGATIVE_INFINITY;
    for (const sent of state.runSent) {
      if (!(sent < state.runCutoff)) continue;
      served++;
      if (sent > last) last = sent;
    }
    state.runServed = served;
    state.runLastSent = last;
  }

  /**
   * Whether a run that met a rejection (`runCutoff`) has heard from every first try sent
   * within it, or waited a window past the rejected send.
   */
  private runHeardOut(nowMs: number): boolean {
    const state = this.state;
    const cutoff = state.runCutoff;
    if (Number.isNaN(cutoff)) return false;
    if (nowMs - cutoff >= state.runWindow) return true;
    for (const u of state.searchUnanswered) if (u.sentAt > state.runFloor && u.sentAt < cutoff) return false;
    return true;
  }

  /**
   * The run starts at the first try sent at `sent`. The window it found reopened T after the
   * flight's first success reached the callee (both by `reachedAt`); the flight's successes so
   * far are what the first window served.
   */
  private startRun(nowMs: number, sent: number): void {
    const state = this.state;
    state.runLateTo = Number.NaN;
    const firstSent = this.estimator.earliestServedSend(nowMs);
    const firstAnswer = this.estimator.earliestServedAnswer(nowMs);
    if (firstSent === undefined || firstAnswer === undefined) return;
    const opened = Math.max(firstSent, firstAnswer - (this.estimator.fastestLatency(nowMs) ?? 0));
    const reached = this.reachedAt(nowMs, sent);
    if (!(reached > opened)) return;
    state.runFrom = sent;
    state.runFloor = state.flightRejectedSent;
    state.runCutoff = Number.NaN;
    state.runReachedAt = reached;
    state.runWindow = reached - opened;
    state.runServed = 1;
    state.runSent.length = 0;
    state.runSent.push(sent);
    state.runLastSent = sent;
    state.runMax = Math.max(WINDOW_MIN, this.estimator.served(nowMs) - 1);
  }

  /** Searching, a rejection of the request sent at `sent`: true when it ended a run in cruise. */
  private runRejected(nowMs: number, sent: number, paced: boolean | undefined): boolean {
    const state = this.state;
    if (paced === false && sent > state.flightRejectedSent) state.flightRejectedSent = sent;
    if (Number.isNaN(state.runFrom)) return false;
    if (!(sent > state.runFrom)) return !Number.isNaN(state.runCutoff) && this.closeRun(nowMs);
    // Enough counted by the first: the reading, maybe low (`endRun`).
    if (Number.isNaN(state.runCutoff) && state.runServed >= WINDOW_MIN) return this.endRun(nowMs, sent);
    // The earliest rejected send after the run's start bounds it: served and sent after it is
    // no longer the window the run counts.
    if (!(sent >= state.runCutoff)) {
      state.runCutoff = sent;
      this.recountRun();
    }
    return this.closeRun(nowMs);
  }

  /**
   * A run cut short below `WINDOW_MIN` waits for what was sent before its cut-off: latencies
   * that spread let a later send overtake an earlier one. A fixed window's reopening, 10 served
   * of first tries sent over 15 ms across lognormal 10 + 10 ms, came back interleaved with
   * rejections of first tries sent just after; the run ended at the first of those with 3
   * counted, too few to read, and the search went on with probes whose gaps had doubled:
   * cruise began at 5.9/s, 370 ms in (simulated, 1.47× the bound's time). It reads, on
   * trial, only once it counts the whole of the first window (`runMax`): a bucket's tokens
   * also come back as short runs, and four of them read as a window of 420 ms put a simulated
   * bucket's herd at 9.5/s (2.6× the bound's time). Everything answered (`runHeardOut`) short
   * of that: nothing learned, as before. True when the run ended in cruise.
   */
  private closeRun(nowMs: number): boolean {
    const state = this.state;
    if (state.runServed >= state.runMax) return this.endRun(nowMs, state.runCutoff, true);
    if (!this.runHeardOut(nowMs)) return false;
    this.dropRun();
    return false;
  }

  /** No run being counted (`runFrom`), none waiting to close (`runCutoff`). */
  private dropRun(): void {
    this.state.runFrom = Number.NaN;
    this.state.runCutoff = Number.NaN;
  }

  /**
   * The run is over (a request sent after its start rejected at `rejectedSent`, or one reaching
   * the callee after the window, or as many served as the first window held). At least
   * `WINDOW_MIN` served: the callee restored S at once, a window of S per T, and the pacer
   * cruises at that reading (`fromReading`), the window's reopening the span's end. Fewer (a
   * bucket's token): nothing learned, the search goes on. Simulated fixed windows whose first
   * tries spread over 120 / 200 ms took 1.35× the bound's time at the median (the probes,
   * doubling their gaps while the herd kept arriving, found the third window late); cruising
   * from the run, 1.15×. Real express-rate-limit, first tries over 200 ms: 1.23 → 1.03 s.
   * `floor`: the run's window ended before it counted `runMax`, with nothing rejected; start-up
   * grows from the reading.
   */
  private endRun(nowMs: number, rejectedSent: number, onTrial = false, floor = false): boolean {
    const state = this.state;
    this.dropRun();
    const served = state.runServed;
    if (served < WINDOW_MIN || !(state.runWindow > 0)) return false;
    const rate = served / state.runWindow;
    this.startCruise(nowMs, rate, false, false);
    state.saturatedRate = rate;
    state.saturatedAt = nowMs;
    state.spanFrom = state.runReachedAt - state.runWindow;
    state.spanTo = state.runReachedAt;
    state.spanServed = served;
    state.readingTop = Number.NaN;
    state.measuredShare = state.cutMeasured = true;
    this.fromReading(nowMs);
    // Cut short by a rejection before it counted what the flight was served: maybe low, and
    // what the rejection overtook may still come back (`lateInRun`). So is what a run counted
    // after one (`closeRun`).
    const cutShort = Number.isFinite(rejectedSent) && served < state.runMax;
    if (onTrial || cutShort) this.readMaybeLow(nowMs);
    this.raiseCeiling(state.level);
    // The next reopening in cruise reads the callee's rate again from this one.
    state.reopenedAt = state.runReachedAt;
    state.reopenSent = Number.NaN;
    state.servedSinceReopen = served;
    state.lastOkSent = state.runLastSent;
    state.lastRejectSent = rejectedSent;
    state.exhausted = rejectedSent > state.runLastSent;
    state.runLateTo = cutShort ? rejectedSent : Number.NaN;
    if (floor) {
      // Out of its window short of what the flight's first window held, nothing rejected: the
      // run counted what was sent, a floor. The last first tries of a herd met by a worker pool
      // (simulated, lognormal 100 ms services, first tries over 200 ms) read 4–5 served over
      // ~180 ms, and the herd cruised at that 22–31/s for 2–3 s (2.5–3.1× the bound's time;
      // start-up from it, 1.62–1.64×).
      state.readLevel = state.readingTop = state.topSince = Number.NaN;
      this.resumeStartup(nowMs);
      this.forgetSpan();
    }
    this.respace(nowMs, false, 1 / this.allowed(nowMs));
    return true;
  }

  /**
   * A success sent within the window a run cut short read (`endRun`), answered after the
   * reading: latencies spread, and the rejection that cut the run overtook it. The window served
   * it too, so it counts in the reading, as a late answer counts in a span (`lateInSpan`) — up
   * to what the flight's first window held, and only if it reached the callee within that
   * window (sent before the rejected one, it may still have arrived after the window ended, and
   * the next one served it). Simulated fixed window, first tries over 200 ms across lognormal
   * 20 ms latencies: a run read 5 of its window's 10 (47/s), the other five came back within
   * 30 ms, and the herd was paced at ~55/s for 300 ms (1.31× the bound's time).
   */
  private lateInRun(nowMs: number, sent: number): void {
    const state = this.state;
    if (state.spanServed >= state.runMax || state.level !== state.readingTop) {
      state.runLateTo = Number.NaN;
      return;
    }
    if (this.reachedAt(nowMs, sent) >= state.spanTo + state.runWindow) return;
    state.servedSinceReopen++;
    this.lateInSpan(nowMs);
  }

  /**
   * Whether the flight's answers — with its successes read since a served probe ended the
   * search — say it was a slow flight after all: its successes' median round trip over twice
   * its rejections' (`FlightLatencies`). The search reads a slow success against the slowest
   * rejection, and one rejection from the tail of lognormal 20 ms latencies (94 ms) outlasted
   * every success of a simulated pool's flight (10 workers, 100 ms services) but two. A probe
   * served meanwhile ended the search, paced by rate from its guess (25/s): 1.49× and 1.55× the
   * bound's time. Medians of at least `LATE_FLIGHT_SERVED` and `LATE_FLIGHT_REJECTED`: a flight
   * whose answers spread alike (a bucket, a cold client reading its answers in one backlog:
   * ~160–200 ms for both) reads no pool.
   */
  private slowFlightFoundLate(): boolean {
    const s = this.state;
    if (!this.alone || s.fromFlight || s.pool !== undefined || s.windowCount > 0 || s.chunk || s.reprobe) return false;
    return s.flightLatencies.servedSlowly(LATE_FLIGHT_SERVED, LATE_FLIGHT_REJECTED, 2);
  }

  /**
   * A pool found after the search (`slowFlightFoundLate`): held by a window from here, as if the
   * search had ended on the slow flight. The window counts from the first ticket of cruise, and
   * the paced answers read since, so that the requests already let go hold their places. Its
   * level is what the flight served (the served probe's own reading is none of the flight's).
   */
  private poolFoundLate(nowMs: number): void {
    const s = this.state;
    const raw = this.estimator.peak(nowMs);
    const served = this.estimator.flightRate(nowMs, s.pathLatency);
    if (raw !== undefined) s.level = Math.max(raw, served ?? 0, this.minRate);
    s.flightPeak = 0;
    s.fromFlight = true;
    s.startup = false;
    s.pool = new PoolWindow(s.flightServed, s.cruiseTicket, nowMs, this.okLatency);
    s.pool.countAnswered(this.pacedAnswers[0] + this.pacedAnswers[1] - s.cruiseAnswersBefore);
    s.pool.arrivedBefore(s.searchArrivals, this.placesHeldAtSearchEnd(), nowMs, this.serviceMs, this.poolStaleMs);
    this.respace(nowMs, false, 1 / this.allowed(nowMs));
  }

  /**
   * What a pool's window made now finds in its places: the search's first tries and probes not
   * answered yet, oldest first. Counting the first tries alone, a window made while one probe
   * was still in service sent its full size besides it (simulated pool, 10 workers of 100 ms,
   * answers after 20 ms, first tries over 200 ms): the eleventh was rejected, took a place back,
   * and the window held nine of ten workers busy for the next half second.
   */
  private placesHeldAtSearchEnd(): { sentAt: number }[] {
    const { searchUnanswered: tries, probesUnanswered: probes } = this.state;
    if (probes.length === 0) return tries;
    return [...tries, ...probes].sort((a, b) => a.sentAt - b.sentAt);
  }

  /** Ends the search at level `x` (requests per ms). */
  private startCruise(nowMs: number, x: number, startup: boolean, bracketed: boolean): void {
    this.mode = CRUISE;
    this.state.probeSends.searchOver();
    this.state.startup = startup;
    this.state.bracketed = bracketed;
    this.state.guessed = bracketed || (this.state.startedFromProbe && !this.state.searchHinted);
    this.state.measuredShare = !startup;
    this.state.cutMeasured = false;
    this.state.plateauAt = nowMs;
    this.state.level = Math.max(x, this.minRate);
    this.state.ceiling = Number.POSITIVE_INFINITY;
    this.state.cruiseAt = nowMs;
    this.state.pacedServedSinceCut = this.state.pacedRejectedSinceCut = 0;
    this.state.cruiseAnswersBefore = this.pacedAnswers[0] + this.pacedAnswers[1];
    this.state.grewAt = nowMs;
    this.state.cutGateAt = nowMs;
    // Read for its rate and peak only: no answers' extremes to keep.
    if (this.pacedRate === undefined) this.pacedRate = new DeliveryRate(this.windowMs, this.buckets, { answers: false });
    else this.pacedRate.reset();
    this.state.cruiseRejects = 0;
    this.forgetSpan();
    this.state.lastOkSent = Number.NEGATIVE_INFINITY;
    this.state.lastRejectSent = Number.NEGATIVE_INFINITY;
    this.state.probeReopened = false;
    this.state.rampLevel = false;
    this.state.followCap = 0;
    if (this.state.chunkPiped) this.endPipe(nowMs);
    this.state.chunk = false;
    this.state.reprobe = false;
    this.respace(nowMs, false, 1 / this.state.level);
    // The first ticket of cruise is the first no probe of the search took (a ticket due but
    // not yet gone leaves in cruise, and holds a place of a window as the rest do). The probes'
    // tickets hold none: a window never hears their answers (those sent before cruise), and
    // those still in flight hold places as the search's (`placesHeldAtSearchEnd`). A pool's
    // window found later (`poolFoundLate`) counted from the search's base, and the probes took
    // three of ten places for good (simulated, lognormal 20 ms, first tries over 200 ms, seed
    // 76: 1.41× the bound's time, now 1.18×).
    this.state.cruiseTicket = Math.min(this.state.baseTicket, this.state.probeSentTicket + 1);
  }

  private cruiseSuccess(nowMs: number, sent: number, latency: number, paced?: boolean): void {
    if (sent > this.state.lastCutAt) {
      this.state.servedSinceCut = true;
      if (paced !== false && sent >= this.state.cruiseAt) this.state.pacedServedSinceCut++;
    }
    if (sent < this.state.cruiseAt && !this.ofFlight(sent)) {
      // Another probe of the search, answered with the one that ended it (answers read in any
      // order): an earlier probe served, with none rejected before it, means a higher rate.
      if (!this.state.bracketed && this.state.rejectedProbeAt < this.state.searchBase && this.state.startedFromProbe) {
        const x = 1 / Math.max(this.probeSpan(sent), this.state.probeGap);
        if (x > this.state.level) {
          this.state.level = x;
          this.adjust(nowMs);
        }
      }
      return;
    }
    if (sent < this.state.cruiseAt) {
      // The rest of a slow flight that ended the search (answers arriving one by one): the
      // level follows what the flight measures, as long as nothing paced has been answered.
      if (
        this.state.fromFlight &&
        this.ofFlight(sent) &&
        latency > (this.state.slowRun ? SLOW_MARGIN : 2) * this.state.rejectLatency
      ) {
        const d = this.flightLevel(nowMs);
        if (d !== undefined && d > this.state.level) {
          this.state.level = d;
          this.adjust(nowMs);
        }
      } else if (this.ofFlight(sent) && this.slowFlightFoundLate()) this.poolFoundLate(nowMs);
      return;
    }
    this.state.fromFlight = false;
    if (this.state.reprobe) {
      // Answers to the count's requests still on their way are no reprobe's.
      if (sent < this.state.reprobeFrom) return;
      // The window reopened between the last rejected probe and this one: T measured.
      this.state.reprobe = false;
      const end = Number.isFinite(this.state.reprobeRejectedAt) ? (this.state.reprobeRejectedAt + sent) / 2 : sent;
      if (end > this.state.chunkFrom)
        this.state.level = Math.max(this.state.chunkServed / (end - this.state.chunkFrom), this.minRate);
      this.raiseCeiling(this.state.level);
      this.state.plateauAt = nowMs;
      this.state.reopenedAt = end;
      this.state.reopenSent = sent;
      this.state.servedSinceReopen = 1;
      this.state.lastOkSent = sent;
      this.state.lastRejectSent = this.state.reprobeRejectedAt;
      this.state.exhausted = false;
      // The count found the whole window and a rejected reprobe, then a served one, bracketed its
      // reopening: pace by windows (below). A first reprobe served says only that T is shorter:
      // that may be no window at all (token buckets whose herd arrived over 120 ms saved up
      // tokens, counted them as one, and paced by windows took up to 1.99× the bound's time).
      const window =
        !this.state.chunkIncomplete &&
        Number.isFinite(this.state.reprobeRejectedAt) &&
        this.alone &&
        this.state.pool === undefined;
      if (!window) {
        // The count ran out of time (the window holds at least what it counted), or the first
        // reprobe was served (the window reopened before it, T shorter than measured): S / T
        // is a floor, and start-up grows from it until a rejection. Cruising there, simulated
        // herds with 10 ms latencies paced at 50–70/s for good (1.43 s against 1.2 s), and real
        // express-rate-limit herds whose first window opened a few ms after the flight left
        // (l ≥ T) at 78–87/s (1.18–1.32 s).
        // Nor does a span of saturation start here: start-up from a floor sends below the
        // callee's rate, so windows expire half-used, and what is served until start-up
        // overshoots is not what the callee had (simulated, normal 10 ms: 19 served over 231 ms
        // read 82/s of 100/s, and the herd cruised there for 0.8 s). The first reopening after
        // start-up overshoots starts it.
        this.resumeStartup(nowMs);
        this.forgetReopening();
      }
      // Reprobes sent after this one, before its answer came back (round trips longer than
      // their gap), are in the window it opened.
      const since = window
        ? Math.max(0, this.ticketFrom(nowMs + TICKET_EPSILON) - this.ticketFrom(sent - TICKET_EPSILON) - 1)
        : 0;
      // Paced by windows, the reprobes' schedule stands until the window is opened (below).
      // Re-spaced first, a reprobe due but not yet sent became due now and was let go besides
      // the window's count (simulated, lognormal 20 ms: eleven into a window of ten, and pacing
      // by rate resumed with a cut).
      if (!window) this.respace(nowMs, false, 1 / this.allowed(nowMs));
      else {
        this.state.windowCount = this.state.chunkServed;
        this.state.windowLow = this.state.reprobeRejectedAt - this.state.chunkFrom;
        this.state.windowHigh = sent - this.state.chunkFrom;
        this.state.windowMisses = 0;
        // The window the count filled opened at its start, and the rejected reprobe is the
        // window's latest rejected opener: a reprobe sent between it and this one, not yet
        // answered, may have opened this window and is counted in it (below).
        this.state.windowOpen = this.state.chunkFrom;
        this.state.windowRejectedSent = this.state.reprobeRejectedAt;
        // First tries that fill the window by themselves: paced by rate behind them instead.
        if (this.othersFillWindow(nowMs)) this.leaveWindowToOthers(nowMs);
        else this.openWindow(nowMs, sent, since);
      }
      return;
    }
    if (this.state.chunk) {
      // The opener of a count in cruise is its first (`countInCruise`), answered before.
      if (sent <= this.state.chunkFrom) return;
      this.state.chunkServed++;
      if (sent > this.state.chunkLastOk) this.state.chunkLastOk = sent;
      if (nowMs > this.state.chunkUntil || this.state.chunkServed >= this.state.chunkMax)
        this.endChunk(nowMs, this.state.chunkServed >= this.state.chunkMax);
      else if (!this.state.chunkPiped && !this.pipeRest(nowMs, nowMs - sent)) this.chunkRespace(nowMs);
      return;
    }
    if (this.state.windowCount > 0 && !this.alone) this.leaveWindow(nowMs);
    if (this.state.windowCount > 0) {
      const s = this.state;
      if (paced === false) {
        // A first try (a new herd's, after a pause), served after the window surely ended: a
        // window opened for the first tries, which took an unknown number of its places. The
        // next opener goes when that one should end, nothing more into it. Read as an opener,
        // it let S − 1 go into a window the first tries had filled: all rejected, and pacing
        // by rate resumed with a cut (simulated herds in a row, normal 10 ms: the second herd
        // 1.42–1.64× the bound).
        if (sent >= s.windowOpen + s.windowHigh) this.reanchorWindow(nowMs, sent);
        return;
      }
      if (sent >= s.windowOpen + s.windowLow && s.windowLeftover > 0 && sent < s.windowOpen + s.windowHigh) {
        // Served by a place an earlier opener left free (`windowLeftover`), or by the window
        // reopening early: taken as the former, since read as the latter it narrows the window
        // and lets S − 1 go into a full one (simulated, normal 10 ms: nine rejected at once).
        s.windowLeftover--;
      } else if (sent >= s.windowOpen + s.windowLow) {
        const d = sent - s.windowOpen;
        if (d < s.windowHigh) s.windowHigh = d;
        this.openWindow(nowMs, sent);
      } else if (sent < s.windowOpen && sent >= s.windowPrevOpen + s.windowLow) {
        // The opener, answered after a request sent behind it: the window opened at its send,
        // and the next opener is due a bracket after that, not after the later request. Left
        // due where it was, it went 40 ms after the window had ended (simulated, normal 40 ms:
        // answers out of order took three later requests for the opener, one after the other).
        const d = sent - s.windowPrevOpen;
        if (d < s.windowHigh) s.windowHigh = d;
        s.windowOpen = sent;
        this.windowRespace(nowMs);
      }
      return;
    }
    if (paced === false) this.othersServed(nowMs);
    const peak = this.pacedRate?.peak(nowMs, true);
    if (this.state.startup) {
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
      const steps = Math.floor((sent - this.state.grewAt) / this.growthMs);
      const waiting = this.slotOf(this.state.nextTicket - 1) > nowMs || this.followedUntil > nowMs;
      if (steps >= 1 && nowMs - this.state.grewAt >= this.growthMs && waiting) {
        this.grow(Math.min(steps, STARTUP_MAX_STEPS));
        this.state.grewAt = nowMs;
      }
      // After a cut the ceiling follows what paced requests deliver, as cruise's does: fixed, it
      // held start-up there for good — nothing is rejected that slowly. After a blind cut
      // (probeGain × the halved guess) a real express-rate-limit herd paced at 18/s for 4.4 s;
      // after a ramp's cut (probeGain × what the ramp delivered, up to the rate that overshot)
      // a simulated fixed window with lognormal 20 ms latencies paced at 68/s of 100/s for 1.1 s.
      if (peak !== undefined) {
        const ceiling = Math.min(this.state.followCap, this.probeGain * peak);
        if (ceiling > this.state.ceiling) this.state.ceiling = ceiling;
      }
    } else {
      if (peak !== undefined) this.raiseCeiling(peak);
      if (paced !== false) this.readingOutgrown(nowMs, sent);
    }
    this.adjust(nowMs);
  }

  /**
   * A run of first tries (`endRun`) that a rejection cut short may have read the callee low:
   * with latencies that spread, a later first try's rejection comes back before the window's
   * other successes. Its level climbs to the top of what the reading allows, Dₛ × (1 + 1 / n),
   * over which the callee should reject. Paced requests sent there with others waiting, as many
   * served as the run counted (at least `WINDOW_MIN`) and none rejected: the reading was low,
   * and start-up goes on from the level. Simulated, lognormal 20 ms latencies: a fixed window
   * whose first tries arrived over 200 ms read 4 of its 10 (39/s of 100/s), a token bucket's
   * over 500 ms 29/s, and since nothing is rejected below the callee's rate, the herds crept
   * along there for a second and more (2.2× and 2.0× the bound's time).
   */
  private readingOutgrown(nowMs: number, sent: number): void {
    const s = this.state;
    if (!this.levelOnTrial() || !this.alone || s.pool !== undefined) return;
    if (this.slotOf(s.nextTicket - 1) <= nowMs) {
      // Nobody waits: the rate is not what is sent.
      s.topSince = Number.NaN;
      return;
    }
    if (Number.isNaN(s.topSince)) {
      if (this.allowed(nowMs) >= TOP_REACHED * s.readLevel) {
        s.topSince = nowMs;
        s.topServed = 0;
      }
      return;
    }
    if (sent < s.topSince) return;
    if (s.lastRejectSent >= s.topSince) {
      s.topSince = Number.NaN;
      return;
    }
    if (++s.topServed < Math.max(s.spanServed, WINDOW_MIN)) return;
    s.readLevel = s.readingTop = s.topSince = Number.NaN;
    this.resumeStartup(nowMs);
    // The span since the last reopening held the pacer's own slow sending: a reading from it
    // would measure the pacer (a fixed window sent at 50/s for 300 ms and then overshot read
    // 38 served over 560 ms, 68/s of its 100/s, and the herd cruised there to its end). The
    // next span between two reopenings, sent above the callee's rate, reads it.
    this.forgetSpan();
  }

  /**
   * The level just read (`fromReading`) may be low: it is put to the test (`readingOutgrown`),
   * and the pacer sends at the top of what it allows at once. The test waits for that top, and
   * CUBIC's concave climb to it from a reading ~15 % below took about a second (a fixed window
   * read at 47/s of its 100/s was still paced at 52/s 300 ms later).
   */
  private readMaybeLow(nowMs: number): void {
    this.state.readLevel = this.state.level;
    this.state.plateauAt = nowMs;
  }

  /** Whether the level is a reading on trial (`readMaybeLow`): passed, start-up goes on from it. */
  private levelOnTrial(): boolean {
    return this.state.level === this.state.readLevel;
  }

  /**
   * A first try served while first tries are also being rejected: the callee is full of
   * requests this pacer never held, and what it serves over the window is its rate. A level
   * below that comes from a search or cuts made while those requests took the capacity (a
   * search that ended on the few probes arrivals left room for read 20/s of 100/s), and once
   * the arrivals stop the backlog would leave at it. The level rises to it.
   */
  private othersServed(nowMs: number): void {
    if (nowMs - this.state.othersRejectedAt > this.windowMs) return;
    const rate = this.pacedRate;
    if (rate === undefined || rate.served(nowMs) < OTHERS_SERVED_MIN) return;
    const d = rate.rate(nowMs);
    if (d === undefined || d <= this.allowed(nowMs)) return;
    this.state.level = d;
    this.state.plateauAt = nowMs;
  }

  /**
   * Start-up's growth by `steps` steps. After a ramp's cut it sends at most the rate that
   * overshot (`followCap`) — which may have overshot only because the herd's own first tries,
   * still arriving, filled the callee. Served at that cap for `STEPS_AT_CAP` steps with nothing
   * rejected, the cap goes and start-up grows from it again. Held for good, a simulated fixed
   * window whose first tries spread over 120 ms was paced at 21/s for 3.9 s (4.35× the bound's
   * time) while the level, capped, grew to 10¹⁰/s.
   */
  private grow(steps: number): void {
    const state = this.state;
    const capped = state.followCap > 0 && Number.isFinite(state.followCap);
    if (capped && state.level >= state.ceiling && state.ceiling >= state.followCap) {
      state.stepsAtCap += steps;
      if (state.stepsAtCap < STEPS_AT_CAP) return;
      state.followCap = Number.POSITIVE_INFINITY;
      state.stepsAtCap = 0;
      state.level = state.ceiling * STARTUP_GAIN;
      return;
    }
    state.level *= STARTUP_GAIN ** steps;
  }

  /**
   * The ceiling follows what paced requests delivered, but never below W: a stretch with few
   * requests to send (app-limited) delivers little and must not pull the learned rate down.
   */
  private raiseCeiling(peak: number): void {
    this.state.ceiling = this.probeGain * Math.max(peak, this.state.level);
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
      if (sent > this.state.lastRejectSent) this.state.lastRejectSent = sent;
      if (sent > this.state.lastOkSent) this.state.exhausted = true;
      return;
    }
    const lastServed = this.state.lastOkSent;
    const lastGap = lastServed - this.state.prevOkSent;
    if (sent > this.state.lastOkSent) {
      this.state.prevOkSent = this.state.lastOkSent;
      this.state.lastOkSent = sent;
    }
    if (!(sent < this.state.reopenedAt)) this.state.servedSinceReopen++;
    else if (sent >= this.state.spanFrom && sent < this.state.spanTo) this.lateInSpan(nowMs);
    if (!this.state.exhausted || sent < this.state.lastRejectSent) return;
    this.state.exhausted = false;
    const from = this.state.reopenedAt;
    const served = this.state.servedSinceReopen - 1;
    if (!Number.isNaN(from) && served < SATURATED_MIN) return;
    // Capacity came back somewhere between the last rejected send and this one: the middle.
    const at = Number.isFinite(this.state.lastRejectSent) ? (this.state.lastRejectSent + sent) / 2 : sent;
    const prevOpener = this.state.reopenSent;
    this.state.reopenedAt = at;
    this.state.reopenSent = sent;
    this.state.servedSinceReopen = 1;
    if (!Number.isNaN(from) && Number.isFinite(prevOpener))
      this.countInCruise(nowMs, sent, prevOpener, served, lastServed, lastGap);
    const fromProbe = this.state.probeReopened;
    this.state.probeReopened = false;
    const widest = this.state.widestSendGap;
    this.state.widestSendGap = 0;
    if (Number.isNaN(from) || !(at > from)) return;
    // From the probe that ended the search, only if every send since came within about 1 / the
    // rate measured: start-up from a low guess leaves gaps in which a fixed window may expire
    // half-used, or a slot pass (nothing then says so), and what was served is not what it had.
    // Between later reopenings, only if no send left a much wider gap: a span across the pause
    // between two herds read a token bucket at 81/s of its 100/s, then 71, 65, 62, 60 over
    // the herds after it (simulated, one downstream meeting a herd 300 ms after the last).
    const widestInGaps = (served * widest) / (at - from);
    if (fromProbe ? widestInGaps > SEED_GAP_SLACK : widestInGaps > SPAN_GAP_SLACK && widest > SPAN_GAP_RTTS * (this.srtt ?? 0))
      return;
    const start = this.spanStart(from, prevOpener, sent, at, served);
    const rate = served / (at - start);
    const afterCut = this.replacesCutReading(rate, served);
    this.state.saturatedRate = rate;
    // A new reading: a level set from the one before no longer follows late answers (`lateInSpan`).
    this.state.readingTop = Number.NaN;
    this.state.saturatedAt = nowMs;
    this.state.spanFrom = start;
    this.state.spanTo = at;
    this.state.spanServed = served;
    // A level read maybe low (`readMaybeLow`) that this span outreads follows it, still to be
    // tested: its span may have begun before cruise, and the successes of first tries sent
    // earlier are not counted in it (a fixed window's span while first tries still arrived
    // counted 5 of its 10). Kept as it was, a token bucket read at 29/s by a run cut short
    // stayed there for 450 ms after spans read 96 and 102/s (1.37× the bound's time).
    const outread = this.levelOnTrial() && this.state.saturatedRate * (1 + 1 / served) > this.state.level;
    if (!this.state.startup && !this.state.rampLevel && !outread && !afterCut) return;
    this.state.startup = false;
    this.state.rampLevel = false;
    this.state.measuredShare = this.state.cutMeasured = true;
    this.fromReading(nowMs);
    if (outread) this.readMaybeLow(nowMs);
    else if (this.firstTriesCrowded(start, at, served)) this.fromCrowdedReading(nowMs);
    this.raiseCeiling(this.pacedRate?.peak(nowMs, true) ?? this.state.level);
    this.adjust(nowMs);
  }

  /**
   * Whether first tries (never paced) left within the span [`from`, `to`) at least
   * `CROWDED_FIRST_TRIES` times as often as the span counted successes: the callee's capacity
   * went to whichever request arrived as it came back, and the few successes the span counts
   * read its rate roughly (`fromCrowdedReading`).
   */
  private firstTriesCrowded(from: number, to: number, served: number): boolean {
    // Only the last `OTHERS_RECENT_MAX` first tries are kept (the older half dropped beyond it),
    // so a span of more than that over `CROWDED_FIRST_TRIES` successes (32) is never found
    // crowded: over that many, ±2 / n is within 7 %. Kept in time order: counted from the
    // newest back to the span's start, as `othersFillWindow` counts.
    const recent = this.state.othersRecent;
    let crowd = 0;
    for (let i = recent.length - 1; i >= 0 && (recent[i] as number) >= from; i--) if ((recent[i] as number) < to) crowd++;
    return crowd >= CROWDED_FIRST_TRIES * served;
  }

  /**
   * A reading made among a crowd of first tries (`firstTriesCrowded`) sets the level at the top
   * of its error at once. Each end of a span may be off by one success, so n successes read the
   * rate within about ±2 / n, and with n small that is wide; read low, nothing is rejected
   * below the callee's rate to say so, and CUBIC's climb from it takes a second. Simulated token
   * bucket (100/s), 20 ms latencies, first tries over 200 ms, seed 11: 4 successes over 57 ms
   * while 32 first tries left read 70/s, and the herd was paced at 70–83/s to its end (1.24×
   * the bound's time); sent at 105/s from there, the next span read 98/s and a rejection cut
   * to it (1.007×, one request more). Late answers to the span leave this level alone.
   */
  private fromCrowdedReading(atMs: number): void {
    const s = this.state;
    const d = Math.max(s.saturatedRate, this.minRate);
    s.level = Math.max(s.level, d * (1 + CROWDED_READING_ERROR / s.spanServed));
    s.readingTop = Number.NaN;
    s.plateauAt = atMs;
  }

  /**
   * Where the span that ends at this reopening (`at`, its opener sent at `sent`) begins. Each
   * end is taken half-way between its rejected send and the served one after it, which is
   * right within about one gap while the pacer sends evenly. A start whose rejected send came
   * long before its opener (`prevOpener`: a pause in sending — the search's widening probe
   * gaps, or a queue that ran dry) put half that pause into the span, and a window that opens
   * at the first request after it expired restored nothing in it: simulated, first tries over
   * 200 ms, 5 ms latencies, a window reopened 114 ms after the last rejected probe read 62/s of
   * its 100/s, and the herd was paced at 62–68/s to its end (1.63× the bound's time). So a
   * start wider than the end and than a pause in demand (`SPAN_GAP_SLACK` mean gaps and
   * `SPAN_GAP_RTTS` round trips) is as wide as the end, ending at its opener: a bucket that
   * saved tokens in that pause reads a little high, and its next rejection reads it again.
   * (Without the round trips, answers processed out of order at a slot's end made brackets
   * look wide that held no pause: the slot server's herd took 1 more request at the median.)
   */
  private spanStart(from: number, prevOpener: number, sent: number, at: number, served: number): number {
    const endWidth = sent - this.state.lastRejectSent;
    const startWidth = 2 * (prevOpener - from);
    const loose =
      startWidth > SPAN_GAP_SLACK * ((at - from) / served) &&
      startWidth > SPAN_GAP_RTTS * (this.srtt ?? 0) &&
      startWidth > endWidth;
    return loose ? prevOpener - endWidth / 2 : from;
  }

  /**
   * Whether the reading just made (`rate` over `served` successes) replaces the level of a cut
   * to the reading before, once (the cut's mark is spent here). The reopening right after such
   * a cut ends a span at the rejection that cut: a newer reading, and over more successes, a
   * closer one. Between the rate that was rejected and the level the cut left, it replaces
   * that level (simulated token bucket, 5 ms, first tries over 100 ms: a cut went to 78/s,
   * read over 4 successes 200 ms before while first tries still arrived; 13 ms later the
   * reopening read 102/s over 23, and the herd climbed from 78/s for the rest of its second,
   * 1.12× the bound's time, now 1.00×). Above the rate rejected it is no reading of the callee
   * (a slot server's span that began in a run of first tries counted them: 190/s of 100/s),
   * and below the level it only repeats the cut.
   */
  private replacesCutReading(rate: number, served: number): boolean {
    const s = this.state;
    const replaces =
      s.lastRejectSent === s.cutReadingRejectSent && served > s.spanServed && rate < s.cutReadingSending && rate > s.level;
    s.cutReadingRejectSent = Number.NaN;
    return replaces;
  }

  /**
   * Sends at Dₛ from `atMs`, and climbs from there as after any cut, back to the top of what
   * the reading allows. Each end of the span lies somewhere between a rejected send and the
   * served one after it, so n successes measure the callee's rate within about ±1 / n: W is
   * Dₛ × (1 + 1 / n), at most Dₛ / β, and CUBIC's concave curve reaches it in
   * K × ∛((1 − Dₛ / W) / (1 − β)), then probes beyond. With W = Dₛ the pacer sat on a reading
   * made low: 4 successes over 47.9 ms read a simulated token bucket at 83.5/s of 100/s
   * (constant 20 ms latencies), and the herd cruised there for the rest of its second, since
   * CUBIC's convex start moves a few per cent in 500 ms. A fixed window that opens at the first
   * request after it expired reads low the same way: each reopening counts the wait for that
   * request as part of the window (real express-rate-limit: 10 per 108.6 ms, then 92/s to the
   * end of the herd).
   */
  private fromReading(atMs: number): void {
    const d = Math.max(this.state.saturatedRate, this.minRate);
    const top = Math.min(d * (1 + 1 / this.state.spanServed), d / this.decrease);
    this.state.level = top;
    this.state.readingTop = top;
    this.state.readingAt = atMs;
    this.state.readLevel = this.state.topSince = Number.NaN;
    this.state.plateauAt = atMs + this.recovery() * Math.cbrt((1 - d / top) / (1 - this.decrease));
  }

  /**
   * A success sent within the span that measured Dₛ, answered after the reopening that ended
   * it: latencies spread, so answers come back out of order, and the span counted only those
   * back by then. It counts now, and a level that was that reading follows it.
   */
  private lateInSpan(nowMs: number): void {
    this.state.spanServed++;
    this.state.saturatedRate = this.state.spanServed / (this.state.spanTo - this.state.spanFrom);
    if (this.state.level !== this.state.readingTop) return;
    // A reading on trial stays on trial (`readMaybeLow`): the late answer raises it, it does not
    // prove it. Let go here, a real fixed window read at 58/s, raised to 73/s by a late answer,
    // was paced 62–70/s of its 100/s for a second (1.4× the bound's time).
    const onTrial = this.levelOnTrial();
    this.fromReading(this.state.readingAt);
    if (onTrial) this.readMaybeLow(nowMs);
    this.adjust(nowMs);
  }

  /**
   * Whether the peak of paced deliveries says what the callee serves. Few successes spread by
   * service times read far low: the first paced requests after a slow flight meet the workers
   * still busy with it (simulated worker pool, lognormal latencies: 3 successes read 23/s of
   * 100/s, and the herd crept back from there for 3 s). Under `PEAK_MIN` successes it counts
   * only when at least as many paced requests were rejected — the pacer then sends at least
   * twice what is served, and a rough reading beats β's slow steps down (a false slow flight at
   * 1,000/s took 300 ms of them) — and never under `SATURATED_MIN`: two or three successes are
   * one or two gaps, not a rate.
   */
  private pacedPeakTrusted(nowMs: number): boolean {
    const served = (this.pacedRate as DeliveryRate).served(nowMs);
    return served >= PEAK_MIN || (served >= SATURATED_MIN && this.state.cruiseRejects >= served);
  }

  /** Cruise, past start-up and with no pool: nothing was booked for IDLE_GAPS gaps (see `cut`). */
  private queueIdle(nowMs: number): boolean {
    return (
      !this.state.startup &&
      this.state.pool === undefined &&
      this.slotOf(this.state.nextTicket - 1) < nowMs - IDLE_GAPS * this.state.gap
    );
  }

  /** The share of paced requests sent since the last cut that were served (1 with too few answered to say). */
  private servedShareSinceCut(): number {
    const served = this.state.pacedServedSinceCut;
    const answered = served + this.state.pacedRejectedSinceCut;
    return answered < SHARE_MIN_ANSWERS ? 1 : served / answered;
  }

  private cut(nowMs: number): void {
    const sending = this.allowed(nowMs);
    let level = sending;
    let peak = this.pacedRate?.peak(nowMs, true);
    // The queue was empty for a while (the pacer sent what callers asked, less than the callee
    // allows; a new herd's first tries, never paced, are what it rejected): what paced
    // requests delivered then measures demand, not the callee, and the rate that held stays,
    // as a cut to Dₛ does (below). Cut from the peak of that lull and β below it, a downstream
    // meeting a herd 300 ms after the last lost ~7 % of its rate to each (simulated token
    // bucket: 0.94 s for the first herd, 1.03 → 1.52 s for the next six).
    const idle = this.queueIdle(nowMs);
    if (idle) peak = undefined;
    // Start-up's cut reads the ramp on purpose (below); a fleet's processes each see a share.
    if (peak !== undefined && this.alone && !this.state.startup && !this.pacedPeakTrusted(nowMs)) peak = undefined;
    // Measured between two reopenings within the estimator's window, the callee's rate is
    // known better than by the peak of any flow: bursts at a window's start inflate that.
    const saturated = this.alone && !Number.isNaN(this.state.saturatedRate) && nowMs - this.state.saturatedAt <= this.windowMs;
    if (saturated) peak = this.state.saturatedRate;
    if (peak !== undefined) {
      if (peak < level) level = peak;
    } else {
      // Nothing paced measured yet: a level measured on a flight stands (β below it), one
      // bracketed by probes may be 2× high — but after a lull, the rate that held stands.
      level *= this.state.bracketed && !idle ? BLIND_CUT : 1;
    }
    // Most paced requests since the last cut were rejected: the rate is twice the callee's or
    // more, whatever the peak says. A fixed window serves its 10 at once when it opens, and
    // answered within a few ms that burst reads as thousands a second; cut 15 % at a time from
    // there, each cut a dozen rejections after the last, a simulated herd (exponential 2 ms
    // latencies) sent 2.34× the bound's requests. Halved, as TCP halves on loss; start-up then
    // grows back no higher than the halved rate (below).
    const mostlyRejected = this.servedShareSinceCut() < MOSTLY_REJECTED_SHARE && !saturated && this.alone;
    if (mostlyRejected) level = Math.min(level, sending * BLIND_CUT);
    // Nothing served since the last cut (a stall): cut β below the level, not from wherever
    // CUBIC's climb got meanwhile — stall cuts come STALL_GAPS gaps apart, which may be past K,
    // and each then raised the level. A simulated fleet of four sharing its queue against 10 per
    // 10 s climbed from 5/s to 100/s while everything was rejected (31–104× the bound's requests).
    if (!this.state.servedSinceCut && this.cutCount > 0 && !this.state.startup)
      level = Math.min(level, this.state.level * this.decrease);
    // At the floor of one request per maxSpacingMs, and served since the last cut: the callee
    // is alive but serves no more than that — or less (a bucket of one token every 2 s), or
    // exactly that (one a second, the limit many APIs state: a request that leaves a few ms
    // early finds no token). The floor is there to keep probing a callee that serves nothing;
    // this one serves, so the cut goes β below the floor, down to the search's widest probe
    // gap. Held at the floor, a real bucket of one a second with 30 callers took 81–84 requests
    // and 45–48 s (bound 59 and 29 s), and one every 2 s rejected every other request.
    const belowFloor =
      sending <= this.minRate * (1 + FLOOR_EPSILON) && this.state.servedSinceCut && this.cutCount > 0 && !this.state.startup;
    if (belowFloor) level = Math.min(level, sending * this.decrease);
    // A blind cut of a bracketed guess (2× high at most) halves it, which may land below the
    // callee's rate: start-up goes on from there, until a cut that measured something.
    const blind = this.state.startup && peak === undefined && this.state.bracketed;
    // The first overshoot of start-up: what paced requests delivered so far was measured on
    // the ramp, mostly below the callee's rate (a fixed window that served 2 of its 10 per
    // window says nothing about the 10). Start-up goes on from β below it, until the callee
    // has been saturated between two reopenings (`saturation`), which measures its rate.
    const ramp = this.state.startup && !blind && peak !== undefined && this.state.guessed && this.alone;
    this.state.rampLevel = this.state.startup && !blind && !ramp;
    this.state.startup = blind || ramp;
    if (peak !== undefined) this.state.measuredShare = this.state.cutMeasured = true;
    this.state.bracketed = false;
    this.state.level = Math.max(ramp ? level * this.decrease : level, belowFloor ? this.minRate / PROBE_GAP_MAX : this.minRate);
    // Start-up goes on below the rate that just proved too high, and at most probeGain × what
    // the ramp delivered — the cap cruise keeps too (2× overshot more: fixed window 1.24× the
    // bound's time against 1.21×, and a simulated fleet with a pacer each 3 % more requests) —
    // a ceiling that rises with what paced requests deliver, up to the rate that overshot.
    // Where start-up may grow back to: the rate that overshot, or the halved one (above).
    const rampCap = mostlyRejected ? level : sending;
    if (ramp) this.state.ceiling = Math.min(rampCap, this.probeGain * (peak as number));
    else this.raiseCeiling(peak ?? this.state.level);
    this.state.followCap = blind ? Number.POSITIVE_INFINITY : ramp ? rampCap : 0;
    this.state.stepsAtCap = 0;
    // Cut to Dₛ, the callee's own rate, the pacer sends at it at once: β below it (CUBIC's
    // decrease from the rate that overshot) held real TokenBucket herds ~15 % under the
    // bucket's rate for a second. So does a cut to what paced requests delivered while the
    // pacer sent more than that, alone: the callee served all it would, and that is its rate
    // too. (Each herd through one downstream began that way — its rate, grown by CUBIC over
    // the last herd, overshot — and then sent at β × 98/s against express-rate-limit's 100/s,
    // 9 of each window's 10 served; simulated, the later herds' mean time on buckets 1.06 →
    // 1.03× the bound, slot server 1.10 → 1.06×.) Cut to anything else, CUBIC climbs back over K.
    const overSent = !saturated && peak !== undefined && sending > peak && this.alone;
    this.state.plateauAt = (saturated || idle || overSent) && !ramp ? nowMs : nowMs + this.recovery();
    // Cut to Dₛ, it climbs to the top of what that reading allows (`fromReading`).
    if (saturated && !ramp && (peak as number) < sending) {
      const maybeLow = this.state.readLevel;
      this.fromReading(nowMs);
      // Back to a reading that may be low: it still may be (a paced request rejected among
      // first tries still arriving says nothing of it), and the test goes on. Forgotten, a
      // fixed window read at 52/s was paced at 55–60/s of its 100/s to the end (1.74×).
      if (this.state.level === maybeLow) this.readMaybeLow(nowMs);
      this.raiseCeiling(this.state.level);
      // The reopening after this rejection reads a newer span (`saturation`).
      this.state.cutReadingRejectSent = this.state.lastRejectSent;
      this.state.cutReadingSending = sending;
    }
    // Requests sent within one service time of the cut may still meet the load from before
    // it (a server busy with earlier requests): only answers to later ones cut again.
    this.state.cutGateAt = nowMs + (this.okLatency ?? 0);
    this.state.lastCutAt = nowMs;
    this.state.servedSinceCut = false;
    this.state.pacedServedSinceCut = this.state.pacedRejectedSinceCut = 0;
    this.cutCount++;
    this.respace(nowMs, false, 1 / this.allowed(nowMs));
  }
}

/** Appends `item`; a list already holding `max` drops its older half first. */
function pushBounded<T>(list: T[], item: T, max: number): void {
  if (list.length >= max) list.splice(0, list.length >> 1);
  list.push(item);
}
