/**
 * How fast the callee is actually answering us: a BBR-style delivery-rate estimator over a
 * sliding window of fixed buckets (receive time).
 *
 * Each bucket holds the count of successes received in it and the earliest send time among
 * them (the same for every answer, success or not). Over the live buckets:
 *
 *     delivered = Σ successes,   from = min sentAt of those successes
 *     rate      = delivered / (now − from)          requests per ms
 *
 * Measuring from the earliest *send* time rather than the window's start is what makes the
 * first sample right: 10 successes to a burst sent at t = 0 and answered together at
 * t = 100 ms are 10 per 100 ms, not 10 per instant; and once the window is full it counts
 * the latency in once, so a steady flow reads slightly low, never high. `answerRate` is the
 * same over every answer: how fast the callee answered at all, an upper bound used when
 * nothing has succeeded yet.
 *
 * O(1) per recorded answer (amortised), O(buckets) per read; memory is four arrays of
 * `buckets` numbers.
 */
export class DeliveryRate {
  readonly bucketMs: number;
  private readonly n: number;
  private readonly successes: Float64Array;
  private readonly successFrom: Float64Array;
  private readonly answers: Float64Array;
  private readonly answerFrom: Float64Array;
  private head = Number.NEGATIVE_INFINITY;

  constructor(windowMs: number, buckets: number) {
    this.bucketMs = windowMs / buckets;
    this.n = buckets;
    this.successes = new Float64Array(buckets);
    this.successFrom = new Float64Array(buckets).fill(Number.POSITIVE_INFINITY);
    this.answers = new Float64Array(buckets);
    this.answerFrom = new Float64Array(buckets).fill(Number.POSITIVE_INFINITY);
  }

  /** An answer to a request sent at `sentAtMs` arrived at `nowMs`; `ok` if it succeeded. */
  record(nowMs: number, sentAtMs: number, ok: boolean): void {
    const i = this.advance(nowMs);
    this.answers[i]! += 1;
    if (sentAtMs < this.answerFrom[i]!) this.answerFrom[i] = sentAtMs;
    if (ok) {
      this.successes[i]! += 1;
      if (sentAtMs < this.successFrom[i]!) this.successFrom[i] = sentAtMs;
    }
  }

  /** Successes per ms over the window, or `undefined` when none succeeded in it. */
  rate(nowMs: number): number | undefined {
    return this.read(nowMs, this.successes, this.successFrom);
  }

  /** Answers (of any kind) per ms over the window, or `undefined` when there were none. */
  answerRate(nowMs: number): number | undefined {
    return this.read(nowMs, this.answers, this.answerFrom);
  }

  private read(nowMs: number, counts: Float64Array, from: Float64Array): number | undefined {
    this.advance(nowMs);
    let total = 0;
    let earliest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.n; i++) {
      total += counts[i]!;
      if (from[i]! < earliest) earliest = from[i]!;
    }
    if (total === 0) return undefined;
    // An answer at its own send instant (a local rejection) carries no duration; one
    // millisecond is the resolution below which a rate means nothing.
    const span = nowMs - earliest;
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
        this.answers[i] = 0;
        this.answerFrom[i] = Number.POSITIVE_INFINITY;
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
