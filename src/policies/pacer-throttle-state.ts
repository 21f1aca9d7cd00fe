import { FlightLatencies } from './flight-latencies.js';
import { LateWakeQueue } from './late-wake-queue.js';
import type { PoolWindow } from './pool-window.js';
import { ProbeSends } from './probe-sends.js';
import { ReleasedTickets } from './released-tickets.js';
import { SendLog } from './send-log.js';

/**
 * What a `Pacer` knows only once it has throttled: the learned level and its curve, the
 * search, the count of a window (the chunk), the saturation points and the send queue. A lane
 * that never throttles never makes one — most lanes of a downstream keyed by host or tenant
 * never do, and these fields (57 when they moved here) cost every lane ~700 B (bench/memory.ts:
 * 4,485 → 3,785 B).
 * Made on the first rejection, timeout or wait hint and kept from then on, so nothing learned
 * is lost between two throttling episodes. Field meanings are the pacer's (see `Pacer`).
 */
export class PacerThrottleState {
  /** Cruise before its first cut: the rate grows with every paced success. */
  startup = false;
  /** W: the level the cubic curve returns to, requests per ms. */
  level = 0;
  /** probeGain × peak paced delivery rate. */
  ceiling = Number.POSITIVE_INFINITY;
  /** tₚ: when the curve is back at W. */
  plateauAt = 0;
  /** Rejections of requests sent before this were sent at an older rate and don't cut. */
  cutGateAt = 0;
  lastCutAt = Number.NEGATIVE_INFINITY;
  /** A request sent after the last cut was served. */
  servedSinceCut = true;
  /** Paced requests sent after the last cut and answered in cruise: served, and rejected. */
  pacedServedSinceCut = 0;
  pacedRejectedSinceCut = 0;
  /** Paced requests of this cruise rejected so far. */
  cruiseRejects = 0;
  /** When a request this pacer never held (a first try) was last rejected in cruise. */
  othersRejectedAt = Number.NEGATIVE_INFINITY;
  /** When the latest first try (never held) left (`Pacer.unpacedSent`). */
  othersSentAt = Number.NEGATIVE_INFINITY;
  /** When the latest first tries left, oldest first (`Pacer.othersFillWindow`). */
  readonly othersRecent: number[] = [];

  // Saturation points (cruise, paced requests, by send time): a reopening is a success sent
  // after a rejected request with nothing served between them — the callee had just run out
  // and has capacity again (a fixed window's boundary, a bucket's next token).
  /** Send time of the latest reopening (NaN: none yet in this cruise). */
  reopenedAt = Number.NaN;
  /** Paced successes sent since `reopenedAt` (answered so far). */
  servedSinceReopen = 0;
  /** The served send that found the latest reopening in cruise (`Pacer.saturation`; NaN: none). */
  reopenSent = Number.NaN;
  /** A count was tried since the search began (after it, or in cruise: `Pacer.countInCruise`). */
  counted = false;
  /**
   * A count in cruise found a window of this many (0: none), opened at `pendingFrom`, though
   * fewer than the run before it: the next reopening opens the next (`Pacer.windowAtReopening`).
   */
  pendingWindow = 0;
  pendingFrom = 0;
  /** The latest answer by send order was a rejection: the next success sent after it reopens. */
  exhausted = false;
  lastOkSent = Number.NEGATIVE_INFINITY;
  /** The served send before `lastOkSent` (in `Pacer.saturation`'s order). */
  prevOkSent = Number.NEGATIVE_INFINITY;
  lastRejectSent = Number.NEGATIVE_INFINITY;
  /** The rate measured between the last two reopenings (per ms; NaN: none), and when. */
  saturatedRate = Number.NaN;
  saturatedAt = Number.NEGATIVE_INFINITY;
  /** The span that measured it, [from, to) by send time, and its successes answered so far. */
  spanFrom = Number.NaN;
  spanTo = Number.NaN;
  spanServed = 0;
  /**
   * The last rejected send when a cut went to the reading (`Pacer.cut`; NaN: none, or the next
   * reading has come), and the rate sent at then (per ms): the reopening right after it reads
   * a span that ends there, newer than the reading cut to (`Pacer.saturation`).
   */
  cutReadingRejectSent = Number.NaN;
  cutReadingSending = Number.NaN;
  /** The level a reading set (`Pacer.fromReading`; NaN: none, or the level moved on since), and when. */
  readingTop = Number.NaN;
  readingAt = Number.NEGATIVE_INFINITY;
  /**
   * The level a run of first tries cut short by a rejection set (`Pacer.endRun`; NaN: none, or
   * a later reading set another); since when the allowed rate has stood at it with requests
   * waiting (NaN: not yet), and paced successes sent since (`Pacer.readingOutgrown`).
   */
  readLevel = Number.NaN;
  topSince = Number.NaN;
  topServed = 0;
  /** The latest reopening is the probe that ended the search. */
  probeReopened = false;
  /** The longest gap between paced sends since the latest reopening (answers in send order). */
  widestSendGap = 0;

  // Search.
  /**
   * When the search began: first tries sent from then on are remembered (`searchArrivals`,
   * `searchUnanswered`), though the probes' base (`searchBase`) may come later.
   */
  searchEnteredAt = 0;
  searchBase = 0;
  rejectedProbeAt = Number.NEGATIVE_INFINITY;
  /** Where a served probe's span is measured from: `searchBase`, or a later re-spacing's base. */
  probeBase = 0;
  /** When this search's probes were due, and when they left (a late caller's lag is its own). */
  readonly probeSends = new ProbeSends();
  /** Latency of the slowest rejection in this search (+∞: none yet). */
  rejectLatency = Number.POSITIVE_INFINITY;
  /** Latency of the fastest rejection of the flight: a round trip with no serving in it. */
  pathLatency = Number.POSITIVE_INFINITY;
  /** The round trips of the flight's answers, for a pool found after the search (`Pacer.slowFlightFoundLate`). */
  readonly flightLatencies = new FlightLatencies();
  /** The first ticket of cruise, and the paced answers counted before it began. */
  cruiseTicket = 0;
  cruiseAnswersBefore = 0;
  /** The latest ticket a probe of this search left with (the search's base less one: none yet). */
  probeSentTicket = 0;
  /** The fastest round trip of the search's rejected probes (sent once the flight was through). */
  probeLatency = Number.POSITIVE_INFINITY;
  /** The highest `flightRate` read at any success of this search (per ms; 0: none). */
  flightPeak = 0;
  /** Answers to the flight served in a row in this search, each slower than every rejection. */
  flightRun = 0;
  /** The slowest success of that run (ms). */
  flightRunLatency = 0;
  /** Successes of that run that held: no rejection of the flight came back for long enough after each. */
  flightRunHeld = 0;
  /**
   * The slowest success of the flight slower than twice every rejection but read while they
   * still came back (0: none): the slow flight it shows once they stop (`Pacer.slowFlightHeld`).
   */
  slowTooSoon = 0;
  /**
   * First tries sent after the search began, served slower than twice every rejection
   * (`Pacer.slowFlight`): one may be a tail of latencies that spread; a slow flight needs two.
   */
  lateSlow = 0;
  /**
   * When this search's latest first tries left (`Pacer.unpacedSent`), oldest first, at most
   * `SEARCH_ARRIVALS_MAX`: a pool's window made at the search's end counts those of the last
   * service time as holding places (`PoolWindow.arrivedBefore`).
   */
  readonly searchArrivals: number[] = [];
  /**
   * Those of them not answered yet, oldest first: each still holds a place of a pool, however
   * long ago it left, up to the stale time (`PoolWindow.arrivedBefore`).
   */
  readonly searchUnanswered: { sentAt: number }[] = [];
  /**
   * The search's own probes (paced requests it let go) not answered yet, oldest first: in a
   * pool, each holds a place as a first try does, and a window made at the search's end must
   * not count it as free (`PoolWindow.arrivedBefore`).
   */
  readonly probesUnanswered: { sentAt: number }[] = [];
  /** A flight answer broke that run (a rejection after it, or a success no slower than one). */
  flightMixed = false;
  /** The slow flight that ended the search was a run (its answers: slower than every rejection). */
  slowRun = false;
  /** When the latest rejection of the flight came back (-∞: none in this search). */
  flightRejectAt = Number.NEGATIVE_INFINITY;
  /** Rejections back during this search (the flight's, its late first tries' and the probes'). */
  flightRejects = 0;
  cruiseAt = 0;
  /** Startup: when the rate last grew (only answers to requests sent since then grow it again). */
  grewAt = 0;
  /** The search ended on a slow flight's success: its later answers may raise the level. */
  fromFlight = false;
  /** The level came from probes' bracket (within 2×), not from a measured rate. */
  bracketed = false;
  /**
   * Start-up began from a guess — a probe bracket, or a first probe served, which only says
   * the callee had room then — not from a rate a flight measured: its first cut, measured on
   * the ramp, keeps start-up going (a real slot server's herd cut to a ramp's 50/s of 100/s
   * and climbed back for a second). Not after a wait hint: each overshoot then costs the hint.
   */
  guessed = false;
  /** A wait hint came with this search's answers. */
  searchHinted = false;
  /**
   * The level was set by the cut that ended start-up, on what the ramp delivered (mostly
   * below the callee's rate): the first rate measured between reopenings replaces it.
   */
  rampLevel = false;
  /** The search ended on a probe served; g₀ of that search. */
  startedFromProbe = false;
  /** The level came from a measurement of this pacer's own deliveries (`rateKind` 'share'). */
  measuredShare = false;
  /** The level came from a cut to a measured delivery rate (since the search ended). */
  cutMeasured = false;
  probeGap = 1;
  /** When the flight that started the search was first sent (the callee's capacity was full). */
  flightStart = 0;
  /**
   * When the flight's first success reached the callee, roughly: its answer less the flight's
   * fastest round trip (NaN until one is served). After `flightStart`, the first tries did not
   * arrive together (a cold client's reach the callee tens of ms after they leave), and a fixed
   * window opened as late as `flightServedAt`.
   */
  flightOpenedBy = Number.NaN;
  /** When the flight's first success was answered (NaN until one is). */
  flightServedAt = Number.NaN;
  /**
   * Right after a bracketed probe was served: one request per round trip while they are
   * served, to count what the callee restored (a fixed window's N at once, a bucket's token).
   */
  chunk = false;
  chunkServed = 0;
  chunkFrom = 0;
  chunkUntil = 0;
  chunkGap = 1;
  chunkMax = 2;
  /**
   * The count is pipelined (round trips too long to count one at a time): the tickets below
   * `chunkLast` go `gap` apart without waiting for answers; the later ones wait for its end.
   */
  chunkPiped = false;
  /** The count may go pipelined (the search's; not one in cruise): see `Pacer.pipeRest`. */
  chunkMayPipe = false;
  chunkFirst = 0;
  chunkLast = 0;
  /** When a pipelined count is taken as complete if nothing was rejected by then (`Pacer.startPipe`). */
  chunkDue = 0;
  /** The count ran out of time before a rejection or the flight's number: what it found is a floor. */
  chunkIncomplete = false;
  /** Reprobing: answers to requests sent before this are the count's, not the reprobe's. */
  reprobeFrom = 0;
  /** After a chunk: probing for the window's reopening (evenly spaced); the latest rejected. */
  reprobe = false;
  reprobeRejectedAt = Number.NEGATIVE_INFINITY;
  /**
   * A window the reprobe confirmed (S served at once after a reopening, T bracketed): its count
   * (0: none known), a lower bound of its length, the send time of the paced success that
   * opened the current one, and the tickets below `earlyTo`, let go into it before their slots.
   */
  windowCount = 0;
  windowLow = 0;
  windowHigh = 0;
  windowOpen = Number.NaN;
  /** The opener of the window before (an earlier opener answered late may move `windowOpen` back). */
  windowPrevOpen = Number.NaN;
  /**
   * Places left free in the current window: an earlier opener still on its way when it opened
   * was counted in it, and came back rejected.
   */
  windowLeftover = 0;
  /** The latest opener rejected (sent before the window ended): answered, so in no window. */
  windowRejectedSent = Number.NEGATIVE_INFINITY;
  /** The current window was opened by requests the pacer never held (`reanchorWindow`): none of its own are in it. */
  windowForeign = false;
  /** Requests let go into the current window so far (its opener included). */
  windowUsed = 0;
  /** Openers rejected past `windowHigh` (the window is longer than it measured). */
  windowMisses = 0;
  earlyTo = 0;
  /** The bracket of the probe that ended the search, from the flight's first send: (low, high]. */
  chunkLow = 0;
  chunkHigh = 0;
  /** The level the bracket guessed (start-up's, had no chunk run). */
  chunkGuess = 0;
  /** The count runs in cruise (`Pacer.countInCruise`): its S is checked against the run before it. */
  chunkInCruise = false;
  /** A count in cruise: the gaps its run was sent at when rejected (`Pacer.countInCruise`), and its latest success's send. */
  chunkRunGap = 0;
  chunkLastOk = 0;
  /**
   * Start-up goes on after a cut, its ceiling following what paced requests deliver up to this
   * (after a ramp's cut, the rate that overshot; after a blind cut, no bound). 0: it stays.
   */
  followCap = 0;
  /** Start-up's growth steps held at `followCap` with nothing rejected (`Pacer.grow`). */
  stepsAtCap = 0;

  // A run (`Pacer.runServed`): while searching, a first try served after first tries sent
  // before it were rejected — the callee restored capacity while the herd was still arriving —
  // and what is served from there.
  /** The latest send of a first try rejected during the search. */
  flightRejectedSent = Number.NEGATIVE_INFINITY;
  /** The send of the first try that found the callee serving again (NaN: none being counted). */
  runFrom = Number.NaN;
  /** When that request reached the callee (`Pacer.reachedAt`); the window it opened ends runWindow later. */
  runReachedAt = 0;
  runWindow = 0;
  /** Served since the reopening, and the latest of them. */
  runServed = 0;
  runLastSent = 0;
  /** What the flight's first window served: a run that reaches it counted the whole window. */
  runMax = 0;
  /** The latest rejected first try's send when the run started: first tries sent after it are the run's. */
  runFloor = Number.NEGATIVE_INFINITY;
  /**
   * Set when the run met a rejection too soon to read (`Pacer.closeRun`): the earliest rejected
   * send after its start. The run counts what was sent before it. NaN: not cut short.
   */
  runCutoff = Number.NaN;
  /** The sends of the run's successes, recounted when its cut-off is set or moves earlier. */
  readonly runSent: number[] = [];
  /**
   * After a run cut short read its window (`Pacer.endRun`): the rejected send that cut it. A
   * success sent after the reopening and before it, answered later, was served in the window
   * the run read (`Pacer.lateInRun`). NaN: no such reading.
   */
  runLateTo = Number.NaN;

  /** Successes to the flight that started the search (requests sent before it). */
  flightServed = 0;
  /**
   * Successes the estimator held when the search began (the flight's, answered before its first
   * rejection). Kept apart from the estimator, whose window forgets them: a fixed window of a
   * minute reopens long after they left it.
   */
  servedAtSearch = 0;
  /** The callee is a worker pool (the search ended on a slow flight): requests go as places free up. */
  pool: PoolWindow | undefined = undefined;

  // The queue: tickets 1, 2, …; waiting ones are ≥ baseTicket, their slots follow the epoch.
  nextTicket = 1;
  baseTicket = 1;
  baseAt = 0;
  /** Linear epoch: the gap between slots. Search epoch: g₀. */
  gap = 1;
  geometric = false;
  /** The slot of the ticket before baseTicket (the last one due when the queue was re-spaced). */
  lastDueAt = Number.NEGATIVE_INFINITY;
  /** Tickets handed back while still ahead: the next bookings take them first, smallest first. */
  readonly released = new ReleasedTickets();
  /** Due tickets held back so that callers waking late together do not send at once (cruise by rate). */
  readonly lateWakes = new LateWakeQueue();
  /** Paced sends while reprobing or pacing by windows: how many went into a window. */
  readonly sends = new SendLog();
  respacedAt = Number.NaN;
}
