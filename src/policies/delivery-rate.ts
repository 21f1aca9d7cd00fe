/**
 * How fast the callee is actually serving us: a BBR-style delivery-rate estimator over a
 * sliding window of fixed buckets (by receive time).
 *
 * Each bucket holds the successes received in it, the earliest send time among them and the
 * latest receive time. Over the live buckets:
 *
 *     D = Σ successes / (latest receive − earliest send)        requests per ms
 *
 * i.e. the rate at which this set of requests was delivered, from the first one's send to
 * the last one's answer. Measuring from the *send* time is what makes the first sample
 * right: 10 successes of a burst sent at t = 0 and answered together at t = 100 ms are 10
 * per 100 ms, not 10 per instant; and ending at the last answer (not at `now`) keeps the
 * value steady between batches of answers. A steady flow reads slightly low (the latency is
 * counted once), never high.
 *
 * `peak` is a max filter of D over the window (BBR's bottleneck-bandwidth filter): sending
 * less than the callee could serve for a while (an app-limited stretch, uneven pacing)
 * lowers D but not the peak. `answerRate` is the same measure over every answer, success or
 * not — how fast the callee answered at all — an upper bound used while nothing succeeded.
 *
 * O(1) per recorded answer (amortised), O(buckets) per read; memory is a few arrays of
 * `buckets` numbers. Times are monotonic ms.
 */
export class DeliveryRate {
  readonly bucketMs: number;
  private readonly n: number;
  private readonly successes: Float64Array;
  private readonly successFrom: Float64Array;
  private readonly successTo: Float64Array;
  private readonly answers: Float64Array;
  private readonly answerFrom: Float64Array;
  private readonly answerTo: Float64Array;
  private readonly peaks: Float64Array;
  private head = Number.NEGATIVE_INFINITY;

  constructor(windowMs: number, buckets: number) {
    this.bucketMs = windowMs / buckets;
    this.n = buckets;
    this.successes = new Float64Array(buckets);
    this.successFrom = new Float64Array(buckets).fill(Number.POSITIVE_INFINITY);
    this.successTo = new Float64Array(buckets).fill(Number.NEGATIVE_INFINITY);
    this.answers = new Float64Array(buckets);
    this.answerFrom = new Float64Array(buckets).fill(Number.POSITIVE_INFINITY);
    this.answerTo = new Float64Array(buckets).fill(Number.NEGATIVE_INFINITY);
    this.peaks = new Float64Array(buckets);
  }

  /** An answer to a request sent at `sentAtMs` arrived at `nowMs`; `ok` if it succeeded. */
  record(nowMs: number, sentAtMs: number, ok: boolean): void {
    const i = this.advance(nowMs);
    this.answers[i]! += 1;
    if (sentAtMs < this.answerFrom[i]!) this.answerFrom[i] = sentAtMs;
    if (nowMs > this.answerTo[i]!) this.answerTo[i] = nowMs;
    if (ok) {
      this.successes[i]! += 1;
      if (sentAtMs < this.successFrom[i]!) this.successFrom[i] = sentAtMs;
      if (nowMs > this.successTo[i]!) this.successTo[i] = nowMs;
    }
  }

  /** D: successes per ms over the window, or `undefined` when none succeeded in it. */
  rate(nowMs: number): number | undefined {
    this.advance(nowMs);
    return this.read(this.successes, this.successFrom, this.successTo);
  }

  /**
   * Records the current D into the max filter and returns the filter's value: the highest D
   * sampled within the window (`undefined` when nothing succeeded in it).
   */
  peak(nowMs: number): number | undefined {
    const i = this.advance(nowMs);
    const d = this.read(this.successes, this.successFrom, this.successTo);
    if (d === undefined) return undefined;
    if (d > this.peaks[i]!) this.peaks[i] = d;
    let best = 0;
    for (let b = 0; b < this.n; b++) if (this.peaks[b]! > best) best = this.peaks[b]!;
    return best;
  }

  /** Answers (of any kind) per ms over the window, or `undefined` when there were none. */
  answerRate(nowMs: number): number | undefined {
    this.advance(nowMs);
    return this.read(this.answers, this.answerFrom, this.answerTo);
  }

  private read(counts: Float64Array, from: Float64Array, to: Float64Array): number | undefined {
    let total = 0;
    let earliest = Number.POSITIVE_INFINITY;
    let latest = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < this.n; i++) {
      total += counts[i]!;
      if (from[i]! < earliest) earliest = from[i]!;
      if (to[i]! > latest) latest = to[i]!;
    }
    if (total === 0) return undefined;
    // An answer at its own send instant (a local rejection) carries no duration; one
    // millisecond is the resolution below which a rate means nothing.
    const span = latest - earliest;
    return total / (span > 1 ? span : 1);
  }

  private advance(nowMs: number): number {
    const bucket = Math.floor(nowMs / this.bucketMs);
    const n = this.n;
    if (bucket > this.head) {
      const from = this.head === Number.NEGATIVE_INFINITY || bucket - this.head >= n ? bucket - n + 1 : this.head + 1;
      for (let b = from; b <= bucket; b++) {
        const i = mod(b, n);
        this.successes[i] = 0;
        this.successFrom[i] = Number.POSITIVE_INFINITY;
        this.successTo[i] = Number.NEGATIVE_INFINITY;
        this.answers[i] = 0;
        this.answerFrom[i] = Number.POSITIVE_INFINITY;
        this.answerTo[i] = Number.NEGATIVE_INFINITY;
        this.peaks[i] = 0;
      }
      this.head = bucket;
    }
    return mod(this.head, n);
  }
}

function mod(a: number, n: number): number {
  const r = a % n;
  return r < 0 ? r + n : r;
}
