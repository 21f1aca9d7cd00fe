/**
 * How fast the callee is actually serving us: a BBR-style delivery-rate estimator over a
 * sliding window of fixed buckets (by receive time).
 *
 * For the set S of successes received in the window, with their send and receive times:
 *
 *     spread = max(latest send − earliest send, latest receive − earliest receive)
 *     rtt    = min over S of (receive − send)
 *     D = (|S| − 1) / spread                        when spread ≥ rtt (a flow)
 *     D = |S| / (latest receive − earliest send)     otherwise (one flight)
 *
 * The first form is BBR's `delivered / max(send_elapsed, ack_elapsed)`: in a steady flow at
 * rate r, |S| − 1 gaps span the window on both clocks, so D = r whatever the latency; and
 * answers that arrive bunched (a server that replies at the end of each slot) are judged by
 * how far apart they were *sent*, so bunching does not inflate D. The second is BBR's first
 * sample, measured from the start of the flight: 10 successes to a burst sent at t = 0 and
 * answered together at t = 100 ms are 10 per 100 ms — the most the callee proved, since it
 * may have needed the whole round trip to serve them.
 *
 * `peak` is a max filter of D over the window (BBR's bottleneck-bandwidth filter): sending
 * less than the callee could serve for a while (an app-limited stretch, uneven pacing)
 * lowers D but not the peak. `answerRate` is the same measure over every answer, success or
 * not — how fast the callee answered at all — an upper bound used while nothing succeeded.
 *
 * O(1) per recorded answer (amortised), O(buckets) per read; memory is 13 numbers per bucket
 * in one typed array (7 without the answers' extremes). Times are monotonic ms.
 */
export class DeliveryRate {
  readonly bucketMs: number;
  private readonly n: number;
  private readonly successes: Extremes;
  /** Every answer's extremes (`undefined` when built without: `answerRate` and `earliestSend` then read nothing). */
  private readonly answers: Extremes | undefined;
  /** The whole array, and where the peaks' slice of it starts (a `subarray` view would be one more object). */
  private readonly data: Float64Array;
  private readonly peaksAt: number;
  private head = Number.NEGATIVE_INFINITY;

  /**
   * `answers: false` keeps successes only — an estimator read for `rate` and `peak` alone
   * (the pacer's second one) then holds 7 numbers per bucket instead of 13 (480 B fewer per
   * lane at the default 10 buckets).
   */
  constructor(windowMs: number, buckets: number, options: { answers?: boolean } = {}) {
    this.bucketMs = windowMs / buckets;
    this.n = buckets;
    const answers = options.answers !== false;
    const fields = answers ? 2 * FIELDS : FIELDS;
    // One typed array for everything (successes, answers, peaks): a throttling lane holds two
    // of these, and each typed array costs ~250 B of its own besides its numbers.
    const data = new Float64Array(buckets * (fields + 1));
    this.successes = new Extremes(buckets, data, 0);
    this.answers = answers ? new Extremes(buckets, data, buckets * FIELDS) : undefined;
    this.data = data;
    this.peaksAt = buckets * fields;
  }

  /** An answer to a request sent at `sentAtMs` arrived at `nowMs`; `ok` if it succeeded. */
  record(nowMs: number, sentAtMs: number, ok: boolean): void {
    const i = this.advance(nowMs);
    this.answers?.add(i, sentAtMs, nowMs);
    if (ok) this.successes.add(i, sentAtMs, nowMs);
  }

  /** D: successes per ms over the window, or `undefined` when none succeeded in it. */
  rate(nowMs: number): number | undefined {
    this.advance(nowMs);
    return this.successes.rate();
  }

  /**
   * Records the current D into the max filter and returns the filter's value: the highest D
   * sampled within the window (`undefined` when nothing succeeded in it). With `flowOnly`,
   * a single flight gives no sample: only a flow spanning a round trip measures a rate.
   */
  peak(nowMs: number, flowOnly = false): number | undefined {
    const i = this.advance(nowMs);
    const d = this.successes.rate(flowOnly);
    if (d === undefined) return undefined;
    const data = this.data;
    const at = this.peaksAt;
    if (d > data[at + i]!) data[at + i] = d;
    let best = 0;
    for (let b = at; b < at + this.n; b++) if (data[b]! > best) best = data[b]!;
    return best;
  }

  /**
   * One flight's successes per ms of the callee's own time: |S| / (latest receive − earliest
   * send − `pathMs`), `pathMs` being what a round trip costs without any serving (a rejection's
   * latency). The flight form above charges the callee for that path too: 10 served by a
   * 100 ms worker pool whose requests spent 40 ms reaching it and back read as 10 per 140 ms.
   * `undefined` when nothing succeeded in the window.
   */
  flightRate(nowMs: number, pathMs: number): number | undefined {
    this.advance(nowMs);
    return this.successes.flightRate(pathMs);
  }

  /** Successes in the window. */
  served(nowMs: number): number {
    this.advance(nowMs);
    return this.successes.count();
  }

  /** The earliest send among the successes in the window (`undefined` when there were none). */
  earliestServedSend(nowMs: number): number | undefined {
    this.advance(nowMs);
    return this.successes.earliestSend();
  }

  /** The earliest answer among the successes in the window (`undefined` when there were none). */
  earliestServedAnswer(nowMs: number): number | undefined {
    this.advance(nowMs);
    return this.successes.earliestAnswer();
  }

  /** The shortest latency of any answer in the window (`undefined` when there were none). */
  fastestLatency(nowMs: number): number | undefined {
    this.advance(nowMs);
    return (this.answers ?? this.successes).fastestLatency();
  }

  /** The earliest send among the answers in the window (`undefined` when there were none). */
  earliestSend(nowMs: number): number | undefined {
    this.advance(nowMs);
    return this.answers?.earliestSend();
  }

  /** Answers (of any kind) per ms over the window, or `undefined` when there were none. */
  answerRate(nowMs: number): number | undefined {
    this.advance(nowMs);
    return this.answers?.rate();
  }

  /** Forgets every answer and peak: what follows is measured afresh. */
  reset(): void {
    for (let i = 0; i < this.n; i++) {
      this.successes.clear(i);
      this.answers?.clear(i);
      this.data[this.peaksAt + i] = 0;
    }
  }

  private advance(nowMs: number): number {
    const bucket = Math.floor(nowMs / this.bucketMs);
    const n = this.n;
    if (bucket > this.head) {
      const from = this.head === Number.NEGATIVE_INFINITY || bucket - this.head >= n ? bucket - n + 1 : this.head + 1;
      for (let b = from; b <= bucket; b++) {
        const i = mod(b, n);
        this.successes.clear(i);
        this.answers?.clear(i);
        this.data[this.peaksAt + i] = 0;
      }
      this.head = bucket;
    }
    return mod(this.head, n);
  }
}

/** Fields per bucket in `Extremes`' slice of the array. */
const FIELDS = 6;
const COUNT = 0;
const SENT_MIN = 1;
const SENT_MAX = 2;
const RECV_MIN = 3;
const RECV_MAX = 4;
/** Shortest send→receive time per bucket: one round trip, at least. */
const LATENCY_MIN = 5;

/**
 * Per bucket: how many answers, and the extremes of their send and receive times — `FIELDS`
 * numbers per bucket in a slice of one shared `Float64Array` (starting at `base`).
 */
class Extremes {
  constructor(
    private readonly n: number,
    private readonly data: Float64Array,
    private readonly base: number,
  ) {
    for (let i = 0; i < n; i++) this.clear(i);
  }

  add(i: number, sent: number, recv: number): void {
    const d = this.data;
    const o = this.base + i * FIELDS;
    d[o + COUNT]! += 1;
    if (sent < d[o + SENT_MIN]!) d[o + SENT_MIN] = sent;
    if (sent > d[o + SENT_MAX]!) d[o + SENT_MAX] = sent;
    if (recv < d[o + RECV_MIN]!) d[o + RECV_MIN] = recv;
    if (recv > d[o + RECV_MAX]!) d[o + RECV_MAX] = recv;
    if (recv - sent < d[o + LATENCY_MIN]!) d[o + LATENCY_MIN] = recv - sent;
  }

  clear(i: number): void {
    const d = this.data;
    const o = this.base + i * FIELDS;
    d[o + COUNT] = 0;
    d[o + SENT_MIN] = Number.POSITIVE_INFINITY;
    d[o + SENT_MAX] = Number.NEGATIVE_INFINITY;
    d[o + RECV_MIN] = Number.POSITIVE_INFINITY;
    d[o + RECV_MAX] = Number.NEGATIVE_INFINITY;
    d[o + LATENCY_MIN] = Number.POSITIVE_INFINITY;
  }

  /** `DeliveryRate.flightRate` over every bucket. */
  flightRate(pathMs: number): number | undefined {
    let total = 0;
    let sentMin = Number.POSITIVE_INFINITY;
    let recvMax = Number.NEGATIVE_INFINITY;
    const d = this.data;
    for (let i = 0; i < this.n; i++) {
      const o = this.base + i * FIELDS;
      const c = d[o + COUNT]!;
      if (c === 0) continue;
      total += c;
      if (d[o + SENT_MIN]! < sentMin) sentMin = d[o + SENT_MIN]!;
      if (d[o + RECV_MAX]! > recvMax) recvMax = d[o + RECV_MAX]!;
    }
    if (total === 0) return undefined;
    return total / Math.max(recvMax - sentMin - Math.max(0, pathMs), 1);
  }

  /** Answers over every bucket. */
  count(): number {
    let total = 0;
    for (let i = 0; i < this.n; i++) total += this.data[this.base + i * FIELDS + COUNT]!;
    return total;
  }

  /** The smallest send time over every bucket (`undefined`: no answers). */
  earliestSend(): number | undefined {
    return this.smallest(SENT_MIN);
  }

  /** The smallest answer time over every bucket (`undefined`: no answers). */
  earliestAnswer(): number | undefined {
    return this.smallest(RECV_MIN);
  }

  /** The smallest latency over every bucket (`undefined`: no answers). */
  fastestLatency(): number | undefined {
    return this.smallest(LATENCY_MIN);
  }

  private smallest(field: number): number | undefined {
    let min = Number.POSITIVE_INFINITY;
    const d = this.data;
    for (let i = 0; i < this.n; i++) {
      const o = this.base + i * FIELDS;
      if (d[o + COUNT]! > 0 && d[o + field]! < min) min = d[o + field]!;
    }
    return min === Number.POSITIVE_INFINITY ? undefined : min;
  }

  /** The D formula of `DeliveryRate` over every bucket. */
  rate(flowOnly = false): number | undefined {
    let total = 0;
    let sentMin = Number.POSITIVE_INFINITY;
    let sentMax = Number.NEGATIVE_INFINITY;
    let recvMin = Number.POSITIVE_INFINITY;
    let recvMax = Number.NEGATIVE_INFINITY;
    let latencyMin = Number.POSITIVE_INFINITY;
    const d = this.data;
    for (let i = 0; i < this.n; i++) {
      const o = this.base + i * FIELDS;
      const c = d[o + COUNT]!;
      if (c === 0) continue;
      total += c;
      if (d[o + SENT_MIN]! < sentMin) sentMin = d[o + SENT_MIN]!;
      if (d[o + SENT_MAX]! > sentMax) sentMax = d[o + SENT_MAX]!;
      if (d[o + RECV_MIN]! < recvMin) recvMin = d[o + RECV_MIN]!;
      if (d[o + RECV_MAX]! > recvMax) recvMax = d[o + RECV_MAX]!;
      if (d[o + LATENCY_MIN]! < latencyMin) latencyMin = d[o + LATENCY_MIN]!;
    }
    if (total === 0) return undefined;
    const sendSpread = sentMax - sentMin;
    const recvSpread = recvMax - recvMin;
    const spread = Math.max(sendSpread, recvSpread);
    // A flow that spans more than a round trip is judged BBR's way. Samples spanning less
    // than one round trip are a single flight (a burst that left together, even if a real
    // client's sends spread over a few ms): gaps inside it say nothing about the callee.
    if (spread > 0 && spread >= latencyMin) return (total - 1) / spread;
    if (flowOnly) return undefined;
    // One flight: what it delivered over the whole flight. Below a millisecond (an answer
    // at its own send instant, e.g. a local rejection) a duration means nothing.
    const flight = recvMax - sentMin;
    return total / Math.max(flight, 1);
  }
}

function mod(a: number, n: number): number {
  const r = a % n;
  return r < 0 ? r + n : r;
}
