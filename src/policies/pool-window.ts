import { nearestSend } from './nearest-send.js';

/**
 * Once a rejection showed where the pool is full, the window grows by one place per this many
 * windows of successes in a row (a pool that grew, or capacity others freed). Per window, as
 * TCP's congestion avoidance grows, the limiter misread as a pool (see `PoolWindow`, successes
 * after 50 ms) took ~10 more requests per herd of 100 (218–227 against 207–211; paced by rate,
 * 194–204); never, a window shrunk by a passing burst of rejections would stay small for good.
 */
const GROW_AFTER = 4;

/**
 * The window's own answers, served and rejected, counted before they may say the callee is no
 * pool after all (`servesAsFastAsRejects`).
 */
const LATENCY_ANSWERS_MIN = 8;

/**
 * Service times of the flight over which rejections in a row at one place say the callee is
 * no pool (`rejectsAlone`): a pool frees a worker at least once per service time, and first
 * tries this pacer did not see leave (a herd still arriving) may hold them all for a while —
 * simulated, 10 workers, first tries over 100 ms: eight rejections at one place within 1.2
 * service times, from a real pool.
 */
const LONE_REJECTS_SERVICES = 4;

/**
 * The window's own successes, smoothed, this many times faster than the flight's that made it
 * a pool: the flight was slow for another reason (`servesFasterThanFlight`).
 */
const FASTER_THAN_FLIGHT = 4;

/**
 * Successes counted before they may say so. Fewer than `LATENCY_ANSWERS_MIN`: at a quarter of
 * the flight's, four service times of a pool are not that fast by chance, and against a fixed
 * window misread as a pool, its successes come one per place freed (eight took 400 ms).
 */
const FASTER_ANSWERS_MIN = 4;

/**
 * Smoothing of the window's served and rejected latencies, as a round-trip estimate's; the
 * first answers are averaged alike, so the first does not stand for all of them.
 */
const LATENCY_GAIN = 1 / 8;

/**
 * The way back as a share of the wait before a request goes ahead of an answer (one service
 * time, the successes' round trip less the rejections', times `aheadMargin`) from which it
 * goes (`aheadOfAnswer`). Below it a worker idles too little between an answer and the next
 * request to pay for the rejections of sending early: simulated pools (10 workers of 100 ms,
 * queue 1) answering after a constant 1 or 5 ms needed 1.074× and 1.058× the bound's requests
 * without it (1.042× and 1.032× with it) and were served no sooner.
 */
const AHEAD_MIN_RETURN_SHARE = 0.15;

/**
 * The most the successes' round trips may spread (their smoothed deviation from the mean, as a
 * share of one service time) for the window to send ahead of an answer: a worker's service
 * must be foreseeable. Service times spread lognormally or normally (σ 0.5) were foreseen too
 * poorly to gain (simulated, lognormal 20 ms latencies, 24 seeds: mean 1.223 → 1.231× the
 * bound's time), and with no limit on what one request in flight stands for, herds in a row
 * were rejected more (one herd 1.063× the bound's requests) without being served sooner.
 */
const AHEAD_MAX_SPREAD = 0.2;

/**
 * First tries that arrive as fast as the pool frees places hold every place that frees
 * (`othersRecent`) while they keep arriving. Once none has for this many of their mean gaps,
 * they have stopped: those still in service hold their places as answers tell
 * (`othersBefore`, `othersInFlight`), the rest none.
 */
const ARRIVALS_STOPPED_GAPS = 16;
/** Arrivals seen within a service time before their gaps say they stopped. */
const ARRIVALS_SEEN_MIN = 4;

/** Successes the window has timed before it estimates a service time from them. */
const AHEAD_ANSWERS_MIN = 4;

/**
 * How the margin on the estimated service time (`aheadMargin`) moves: up by this factor when
 * a request sent ahead was rejected, down by `AHEAD_MARGIN_DOWN` when one was served. With
 * these two it settles where about one in twenty sent ahead is rejected (each costs the callee
 * a request; each served saves a worker its idle way back).
 */
const AHEAD_MARGIN_UP = 1.1;
const AHEAD_MARGIN_DOWN = 0.995;
/** Bounds of that margin: ahead by at most half a service time; never later than four. */
const AHEAD_MARGIN_MIN = 0.5;
const AHEAD_MARGIN_MAX = 4;

/**
 * A worker pool's window: how many of a pacer's requests may be in flight at once, once the
 * callee turned out to be a pool — a fixed number of workers, perhaps a short queue, and a
 * rejection when both are full (its flight was served slowly, rejected fast).
 *
 * A rate cannot keep such a callee busy. Its service times spread, so requests sent at its
 * average rate find every worker busy after a run of slow ones (a rejection) and idle ones
 * after a run of fast ones (time lost). Sent as places free up — one new request per answer,
 * as TCP's acknowledgements clock out its segments — the pool stays exactly full. In the
 * simulator (10 workers, 100 ms service times and latencies spread four ways, queue 1, 100
 * callers, 24 seeds) the herd's median took 1.09–1.25× its lower bound this way, against
 * 1.38–1.49× at the learned rate and 1.16–1.25× at the pool's true rate known in advance.
 *
 * Tickets (the pacer's queue numbers) go in order: ticket t may be sent once
 * t < from + size + answered. The size starts at what the flight had served and follows the
 * rest of that flight as it is answered (each served one was a place in the pool). A rejection
 * takes a place back. Successes while requests wait grow it as TCP starts up — one place per
 * window of successes, then two, four, … — until the first rejection shows where the pool is
 * full; after that, one place per `GROW_AFTER` windows.
 *
 * Why start up at all: a rate limiter in front of a slow backend also serves its burst slowly
 * and rejects the rest fast, so it reads as a pool, and a window of its burst holds it at
 * burst / latency. Simulated (token bucket, 100/s, burst 10, rejections after 5 ms, successes
 * after a lognormal 200 or 300 ms, seeds 1–6), growing one place per two windows left
 * those herds 8 and 13 % slower than pacing by rate; starting up, 8 and 4.5 % faster. With
 * successes after 50 ms a window of the burst sends at twice the limiter's rate, and each
 * rejection takes back one place only: more requests than pacing by rate (see `GROW_AFTER`).
 */
export class PoolWindow {
  /** Requests allowed in flight. */
  size: number;
  /** What the flight served (its answers read so far). */
  private flightSize: number;
  /** Answers to requests this window let go (and places given up as lost). */
  private answered = 0;
  /** Successes in a row, counted towards the next growth. */
  private okRun = 0;
  /**
   * Places the next growth adds while the window starts up (doubling with each growth); 0 once
   * a rejection showed where the pool is full (then one place per `GROW_AFTER` windows).
   */
  private step = 1;
  /** When a place was last freed (or the pool was last seen full of others: `othersFilled`). */
  private freedAt: number;
  /**
   * Places held by requests this window never let go — the next herd's first tries, which no
   * pacer holds back — as far as their answers tell (`othersFilled`). The window's places less
   * these may go.
   */
  private othersHeld = 0;
  /**
   * First tries this process let go while the window paces (`otherSent`), not yet answered,
   * oldest first: each takes a place as surely as a request the window let go. Counted only
   * from their answers (`othersFilled`), a pool that new callers kept full read as free between
   * those answers, and retries went into it: simulated, 400 callers over 2 s, 1.8–2.1× the
   * bound's requests; real express-queue 1,083–1,118 requests against a bound of 604.
   */
  private readonly othersInFlight: { sentAt: number }[] = [];
  /**
   * First tries and probes of the search not answered when the window was made, oldest first:
   * each holds a place until answered, or until it left `beforeStaleMs` ago (`arrivedBefore`).
   * They lend no places (`lentToOthers`): counted from the start, the window sends none into
   * theirs.
   */
  private readonly othersBefore: { sentAt: number }[] = [];
  private beforeStaleMs = 0;
  /**
   * How long a first try holds its place at most (the stale time of the latest `otherSent` or
   * `arrivedBefore`; ∞ before either): `othersHeld` lasts no longer after the last one left.
   */
  private othersStaleMs = Number.POSITIVE_INFINITY;
  /** When the latest of them left (−∞: none yet). */
  private lastOtherSentAt = Number.NEGATIVE_INFINITY;
  /**
   * When first tries were let go within the last service time (`recentMs`), oldest first:
   * arriving at least as fast as the pool frees places, they fill every place that frees, and a
   * retry let go into one only pushes a newcomer out (rejected, it comes back as a retry). So
   * they hold that many places (at most the window's), even those rejected at once. Counted
   * only while in flight, they were about half of that (the rest rejected in a ms), and the
   * window kept its other places full of retries: real express-queue (10 × 100 ms, one
   * waiting), 400 callers over 2 s: 705–723 requests against a bound of 604, now 608–610.
   */
  private readonly othersRecent: number[] = [];
  private recentMs = 0;
  /**
   * Places the window gave up to rejections while first tries held places (`othersInFlight`):
   * theirs, not a smaller pool, so back once none of them is in flight. Kept off, the window
   * came out of 2 s of arrivals at a few places and served the backlog at half the pool's rate
   * (simulated, lognormal 20 ms: 1.36× the bound's time at the median, 1.21× with them back).
   */
  private lentToOthers = 0;
  /** Those others served since the pool was first seen full of them (`othersFilled`). */
  private othersServed = 0;
  /** When one of them was last rejected. */
  private othersFullAt = Number.NEGATIVE_INFINITY;
  /** Smoothed latency of the window's served requests, and how many were counted. */
  private okLatency = 0;
  private oks = 0;
  /** Smoothed deviation of the served latencies from their mean (as a round-trip variance estimate). */
  private okSpread = 0;
  /** Smoothed latency of the window's rejected requests, and how many were counted. */
  private rejectLatency = 0;
  private rejects = 0;
  /** Rejections in a row at one place with no first try holding any, since when (`rejectsAlone`). */
  private loneRejects = 0;
  private loneRejectsFrom = 0;
  /** The requests this window let go and not yet answered, oldest first. */
  private readonly inFlight: InFlight[] = [];
  /** Factor on the estimated service time after which a request is taken as done (`aheadOfAnswer`). */
  private aheadMargin = 1;

  /**
   * @param size what the flight had served when the pool was recognised
   * @param from the first ticket the window counts (the first one still waiting)
   * @param flightServiceMs how long the flight's successes took (NaN: unknown)
   */
  constructor(
    size: number,
    private readonly from: number,
    nowMs: number,
    private readonly flightServiceMs = Number.NaN,
  ) {
    this.size = this.flightSize = Math.max(1, size);
    this.freedAt = nowMs;
  }

  /** The first ticket that may not go yet. */
  get gate(): number {
    return this.from + this.size + this.answered - this.othersHolding;
  }

  /** Places held by requests this window never let go: as their answers tell, or as sent. */
  private get othersHolding(): number {
    return Math.max(
      this.othersHeld,
      this.othersInFlight.length + this.othersBefore.length,
      Math.min(this.size, this.othersRecent.length),
    );
  }

  /**
   * Forgets first tries let go a service time or more before `nowMs` (`othersRecent`) — all of
   * them once they have stopped arriving (`ARRIVALS_STOPPED_GAPS`) — and those of the search
   * still unanswered after the stale time (`othersBefore`).
   */
  private forgetArrivals(nowMs: number): void {
    const recent = this.othersRecent;
    while (recent.length > 0 && (recent[0] as number) <= nowMs - this.recentMs) recent.shift();
    const n = recent.length;
    if (n >= ARRIVALS_SEEN_MIN) {
      const last = recent[n - 1] as number;
      if (nowMs - last > ARRIVALS_STOPPED_GAPS * ((last - (recent[0] as number)) / (n - 1))) recent.length = 0;
    }
    const before = this.othersBefore;
    while (before.length > 0 && (before[0] as { sentAt: number }).sentAt < nowMs - this.beforeStaleMs) before.shift();
    // No first try holds a place past the stale time after the last one left. `othersFilled`
    // counts the whole window less those served as theirs, the places the window's own requests
    // held included, and only first tries' answers give them back; the window's own answers
    // keep freeing places, so `rescue` never comes. Simulated spread pool, seed 1067: 7 of 18
    // places stayed held for 900 ms after the last first try (1.34× the bound on its draws).
    if (this.othersHeld > 0 && nowMs - this.lastOtherSentAt > this.othersStaleMs) this.othersHeld = 0;
  }

  /**
   * A first try (never held back) left at `nowMs`: it holds a place until answered
   * (`otherAnswered`). Those sent more than `staleMs` ago are taken as answered: a caller
   * aborted before its answer reports none, and its place must not stay held. `serviceMs`: one
   * service time as measured, over which first tries count as arriving (`othersRecent`).
   */
  otherSent(nowMs: number, staleMs: number, serviceMs: number): void {
    this.recentMs = serviceMs;
    this.othersRecent.push(nowMs);
    this.forgetArrivals(nowMs);
    const others = this.othersInFlight;
    while (others.length > 0 && (others[0] as { sentAt: number }).sentAt < nowMs - staleMs) others.shift();
    others.push({ sentAt: nowMs });
    this.lastOtherSentAt = nowMs;
    this.othersStaleMs = staleMs;
  }

  /**
   * First tries let go at the times in `sentAtMs` (oldest first) before the window was made:
   * those of the last service time (`serviceMs`) hold places as those let go since do
   * (`othersRecent`), and those in `unanswered` (the search's first tries and probes not
   * answered yet, left within `staleMs`) hold theirs until answered (`othersBefore`), as those
   * let go since do. A service time that spreads keeps some of them in the pool long after the
   * arrivals stopped: counted only from the last service time, a simulated pool (10 workers,
   * lognormal 100 ms services and 20 ms latencies, 100 callers over 200 ms) found the window's
   * first ten meeting three of them, and the two rejections that followed took two places for
   * good (8 of 10 workers kept busy).
   */
  arrivedBefore(
    sentAtMs: readonly number[],
    unanswered: readonly { sentAt: number }[],
    nowMs: number,
    serviceMs: number,
    staleMs: number,
  ): void {
    this.recentMs = serviceMs;
    for (const at of sentAtMs) if (at > nowMs - serviceMs) this.othersRecent.push(at);
    if (this.othersRecent.length > 0) this.lastOtherSentAt = this.othersRecent[this.othersRecent.length - 1] as number;
    this.beforeStaleMs = this.othersStaleMs = staleMs;
    for (const { sentAt } of unanswered) if (sentAt >= nowMs - staleMs) this.othersBefore.push({ sentAt });
  }

  /** Whether a first try was let go (`otherSent`) within `withinMs` before `sentAtMs`. */
  othersLetGoBefore(sentAtMs: number, withinMs: number): boolean {
    return sentAtMs - this.lastOtherSentAt <= withinMs;
  }

  /** The answer (of any kind) to a first try sent at `sentAtMs`: its place is free. */
  otherAnswered(sentAtMs: number): void {
    // Sent before the window was made: one of the search's (the nearer list, if both hold one).
    const before = nearestSend(this.othersBefore, sentAtMs);
    const since = nearestSend(this.othersInFlight, sentAtMs);
    const nearer =
      before >= 0 &&
      (since < 0 ||
        Math.abs((this.othersBefore[before] as { sentAt: number }).sentAt - sentAtMs) <
          Math.abs((this.othersInFlight[since] as { sentAt: number }).sentAt - sentAtMs));
    if (nearer) this.othersBefore.splice(before, 1);
    else if (since >= 0) this.othersInFlight.splice(since, 1);
    if (this.othersInFlight.length === 0 && this.lentToOthers > 0) {
      this.size += this.lentToOthers;
      this.lentToOthers = 0;
    }
  }

  /**
   * A request this window never let go was rejected at `nowMs`: the pool is full of such
   * requests, and the places the window counts as free are theirs — less those of them served
   * since it was first seen full (rejections less than one service time `serviceMs` apart are
   * one herd's first tries). Each of them served frees one (`otherServed`).
   *
   * Without it, a downstream that met herd after herd let its retries go into a pool the next
   * herd's first tries had just filled: each was rejected, freed its place, and the next went
   * (simulated pool, six herds in a row: up to 1.33× the bound's requests in one herd, 1.15× on
   * average; real express-queue 198 requests a herd against 189).
   */
  othersFilled(nowMs: number, serviceMs: number): void {
    if (nowMs - this.othersFullAt > serviceMs) this.othersServed = 0;
    this.othersFullAt = nowMs;
    this.othersHeld = Math.max(0, this.size - this.othersServed);
    // Their places free up from now: `rescue` waits for them from here.
    this.freedAt = nowMs;
  }

  /** A request this window never let go was served at `nowMs`: its place is free. */
  otherServed(nowMs: number): void {
    this.othersServed++;
    if (this.othersHeld === 0) return;
    this.othersHeld--;
    this.freedAt = nowMs;
  }

  /** `n` answers to requests let go before the window was made (their places are free). */
  countAnswered(n: number): void {
    this.answered += n;
  }

  /** Whether `ticket` may go once its slot is due. */
  admits(ticket: number, nowMs: number): boolean {
    this.forgetArrivals(nowMs);
    const gate = this.gate;
    if (ticket < gate) return true;
    return ticket === gate && this.aheadOfAnswer(nowMs);
  }

  /**
   * The request holding `ticket`, let go by this window, leaves at `nowMs` (`aheadOfAnswer`
   * counts it from then). It went ahead of an answer when its ticket was not below the gate:
   * no other rule lets such a ticket go. (Counting those in flight against the places read a
   * request let go within them as sent ahead once the two counts drifted apart — tickets
   * booked before the window was made and sent after it are in flight but hold none of its
   * places. A cold process's first herd against real express-queue: the window's rejections
   * then took no place back, each was replaced at once, and the herd sent 250–305 requests.)
   */
  sent(nowMs: number, ticket: number): void {
    const ahead = ticket >= this.gate;
    // Sent ahead on the oldest request whose worker should be free: that one has stood for it.
    if (ahead) {
      const free = this.freeWorkerAt(nowMs);
      if (free !== undefined) free.stoodFor = true;
    }
    this.inFlight.push({ sentAt: nowMs, ahead, stoodFor: false });
  }

  /**
   * Whether one more request than the window's places may go now: a request in flight left
   * more than one service time ago, so its worker is free or about to be, though the answer
   * is still on its way back.
   *
   * Sent only as answers come back, a pool whose answers take a while to return idles each
   * worker for that while: one service time estimated as the successes' round trip less the
   * rejections' (a rejection is the way there and back alone). A request sent then instead
   * reaches the worker as it frees, or the pool's queue if it is a little early. Simulated
   * (10 workers of 100 ms, queue 1, 100 callers): with a constant 20 ms back, the herd took
   * 1.172 → 1.149× the bound's time. Only one request goes so at a time, each request in
   * flight stands for one sent ahead at most (one from a service time's long tail would
   * otherwise stand for a free worker until it is answered), none goes while others hold the
   * pool's places (`othersFilled`: they are not in `inFlight`), and one sent ahead that is
   * rejected takes no place back (it was a guess, not a sign of load): it widens the margin
   * instead (`AHEAD_MARGIN_UP`). Service times that spread are left alone (`AHEAD_MAX_SPREAD`).
   */
  private aheadOfAnswer(nowMs: number): boolean {
    return this.freeWorkerAt(nowMs) !== undefined;
  }

  /** The oldest request in flight whose worker should be free by `nowMs` and that stood for none sent ahead. */
  private freeWorkerAt(nowMs: number): InFlight | undefined {
    if (this.oks < AHEAD_ANSWERS_MIN || this.rejects === 0 || this.othersHolding > 0) return undefined;
    // Served as slowly as a pool serves: twice the rejections' round trip or more.
    const service = this.okLatency - this.rejectLatency;
    if (service < this.rejectLatency || this.okSpread > AHEAD_MAX_SPREAD * service) return undefined;
    // Rejections widen the margin until the way back is too small a share of it to pay.
    const after = service * this.aheadMargin;
    if (this.rejectLatency < AHEAD_MIN_RETURN_SHARE * after) return undefined;
    for (const request of this.inFlight) {
      if (request.sentAt + after > nowMs) return undefined;
      if (!request.stoodFor) return request;
    }
    return undefined;
  }

  /**
   * Forgets the request in flight sent at (about) `sentAtMs`; returns whether it was sent
   * ahead. The nearest send time is taken: a driver's report may differ from the time it asked
   * by a clock read, and an answer to a request let go before the window was made takes one
   * that is still in flight instead (the count of those in flight stays right).
   */
  private landed(sentAtMs: number): boolean {
    const at = nearestSend(this.inFlight, sentAtMs);
    return at >= 0 && this.inFlight.splice(at, 1)[0]!.ahead;
  }

  /** The flight that revealed the pool has now been served `served` times: each was a place. */
  flightServed(served: number): void {
    if (served > this.size) this.size = served;
    if (served > this.flightSize) this.flightSize = served;
  }

  /**
   * An answer to a request the window let go frees its place: `'rejected'` (a rejection or a
   * timeout: the pool was full, one place fewer), `'ok'` (`waiting`: requests are waiting for a
   * place) or `'other'` (an error that says nothing about load). `latencyMs`: that request's
   * round trip, if known; `sentAtMs`: when it left (else now less its round trip), which finds
   * it among those in flight (`landed`).
   */
  answer(
    nowMs: number,
    signal: 'ok' | 'rejected' | 'other',
    waiting: boolean,
    latencyMs = Number.NaN,
    sentAtMs = Number.NaN,
  ): void {
    const sent = Number.isNaN(sentAtMs) && latencyMs >= 0 ? nowMs - latencyMs : sentAtMs;
    let said = signal;
    if (!Number.isNaN(sent) && this.landed(sent)) {
      if (signal === 'rejected') {
        // Sent ahead and rejected: a guess that missed, not a sign of load.
        this.aheadMargin = Math.min(AHEAD_MARGIN_MAX, this.aheadMargin * AHEAD_MARGIN_UP);
        said = 'other';
      } else if (signal === 'ok') this.aheadMargin = Math.max(AHEAD_MARGIN_MIN, this.aheadMargin * AHEAD_MARGIN_DOWN);
    }
    this.freedAt = nowMs;
    if (latencyMs >= 0 && said !== 'other') {
      if (said === 'ok') {
        if (this.oks > 0) this.okSpread = smooth(this.okSpread, this.oks - 1, Math.abs(latencyMs - this.okLatency));
        this.okLatency = smooth(this.okLatency, this.oks++, latencyMs);
      } else this.rejectLatency = smooth(this.rejectLatency, this.rejects++, latencyMs);
    }
    // A rejection at one place, with requests of the window's still in flight, frees none: the
    // next request waits for one of their answers. Freed, each rejection let the next go at
    // once, and a window shrunk to one place by arrivals kept the pool full of its own requests
    // whose answers it no longer counted: ~300 requests a second, two in three rejected
    // (simulated, 1,000 callers over 5 s, lognormal 20 ms: 2.56× the bound's requests; 1.10×).
    if (said !== 'rejected' || this.size > 1 || this.inFlight.length === 0) this.answered++;
    if (said === 'rejected') {
      // Counted only where the pool should have had room: the window down to one place, and
      // none held by first tries this pacer let go or saw arriving.
      if (
        this.size <= 1 &&
        this.othersHeld === 0 &&
        this.othersInFlight.length === 0 &&
        this.othersBefore.length === 0 &&
        this.othersRecent.length === 0
      ) {
        if (this.loneRejects++ === 0) this.loneRejectsFrom = nowMs;
      }
      this.okRun = 0;
      this.step = 0;
      if (this.size > 1) {
        this.size--;
        if (this.othersInFlight.length > 0) this.lentToOthers++;
      }
    } else if (said === 'ok') {
      this.loneRejects = 0;
      if (waiting && ++this.okRun >= (this.step > 0 ? 1 : GROW_AFTER) * this.size) {
        this.okRun = 0;
        if (this.step === 0) this.size++;
        else {
          this.size += this.step;
          if (this.step < this.size) this.step *= 2;
        }
      }
    }
  }

  /**
   * Whether the window, down to one place with no first try holding any, had its lone request
   * rejected again and again: a pool serves a request sent into an empty pool. A fixed window
   * misread as a pool (its burst of 10 served across exponential 2 ms latencies, the slowest a
   * few times the fastest rejection) rejects everything until it reopens; held at one place,
   * the window sent one request per round trip into it, all rejected — 84 in its first 100 ms,
   * the herd 1.59× the bound's requests (simulated, first tries over 3 ms).
   */
  rejectsAlone(nowMs: number): boolean {
    return (
      this.loneRejects >= LATENCY_ANSWERS_MIN && nowMs - this.loneRejectsFrom >= LONE_REJECTS_SERVICES * this.flightServiceMs
    );
  }

  /**
   * Whether the window's own requests are served about as fast as they are rejected: then the
   * callee is no pool. A pool serves in its service time and rejects at once, which is how it
   * was recognised (a flight served slowly, rejected fast) — but a flight that met a loaded
   * event loop can read that way too. Real express-rate-limit (10 per 100 ms), herd after herd
   * through one downstream: a process's first herd, V8 still cold, read as a pool (successes
   * and rejections alike ~157 ms); from then on the window's successes came back in 0.5 ms,
   * its rejections in 0.5 ms, the window sat at one place, and the queue, spaced at three
   * times the flight's rate for a pool, had half of what it sent rejected (445–455 requests a
   * herd against a bound of 190). Same threshold as the slow flight's: twice.
   */
  get servesAsFastAsRejects(): boolean {
    return this.oks >= LATENCY_ANSWERS_MIN && this.rejects >= LATENCY_ANSWERS_MIN && this.okLatency <= 2 * this.rejectLatency;
  }

  /**
   * Whether the window's own requests are served far faster than the flight's were: then the
   * flight was slow for another reason, and the callee is no pool. A pool's successes take its
   * service time, whatever the load. A cold client reads its flight's answers late, the
   * successes a little later than the rejections (real express-rate-limit: ~160–200 ms, a
   * process's first herd), and read as a pool, paced by the answers, a fixed window served a
   * place per ~100 ms; its successes then came back in 1–3 ms. Waiting for rejections
   * (`servesAsFastAsRejects`) took until a cut, which released ~45 requests at once (the
   * herd: 255–265 requests against 190).
   */
  get servesFasterThanFlight(): boolean {
    return this.oks >= FASTER_ANSWERS_MIN && FASTER_THAN_FLIGHT * this.okLatency < this.flightServiceMs;
  }

  /**
   * The flight's places per its service time (per ms; NaN if unknown): the rate it took the
   * callee for. Not the window's size now: grown on fast successes while requests waited, it
   * read 40 places and more.
   */
  get placesRate(): number {
    return this.flightSize / this.flightServiceMs;
  }

  /**
   * The expected wait of `ticket` for its place, given one service time `serviceMs`: places
   * free up about `size` per service time.
   */
  expectedWait(ticket: number, serviceMs: number): number {
    const rank = ticket - this.gate + 1;
    return rank <= 0 ? 0 : (rank * serviceMs) / this.size;
  }

  /**
   * When the caller holding `ticket` should ask again. Places free up at random moments, and
   * often many at once (workers that started together finish together), so the first `size`
   * tickets in line ask every quarter of the time one place takes: a place noticed late leaves
   * a worker idle (simulated pool, constant 100 ms service: 1,084 ms for the herd when each
   * ticket asked at its expected place, 1,029 when these ask often). The tickets behind them
   * ask when the places ahead of them should be gone.
   */
  checkAfter(ticket: number, serviceMs: number): number {
    const rank = ticket - this.gate + 1;
    if (rank <= 0) return 0;
    const place = serviceMs / this.size;
    return rank <= this.size ? place / 4 : (rank - this.size) * place;
  }

  /**
   * No place freed for `staleMs`: the places others held are taken as free (their answers
   * never came), else one request the window let go is taken as lost (its answer never
   * reported — an aborted caller), and its place freed. Returns whether one was.
   */
  rescue(nowMs: number, staleMs: number): boolean {
    if (nowMs - this.freedAt < staleMs) return false;
    if (this.othersHolding > 0) {
      this.othersHeld = 0;
      this.othersInFlight.length = 0;
      this.othersBefore.length = 0;
      this.othersRecent.length = 0;
    } else {
      this.answered++;
      this.inFlight.shift();
    }
    this.freedAt = nowMs;
    return true;
  }
}

/** A request a `PoolWindow` let go, until its answer. */
interface InFlight {
  /** When it left. */
  readonly sentAt: number;
  /** Whether it went ahead of an answer, beyond the window's places (`aheadOfAnswer`). */
  readonly ahead: boolean;
  /** Whether it already stood for a free worker: one request sent ahead. */
  stoodFor: boolean;
}

/** An exponentially smoothed mean after `count` samples; the plain mean of the first ones. */
function smooth(mean: number, count: number, sample: number): number {
  return mean + Math.max(LATENCY_GAIN, 1 / (count + 1)) * (sample - mean);
}
