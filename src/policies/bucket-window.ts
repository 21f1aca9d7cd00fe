/**
 * A few counters over a sliding time window, kept as a ring of fixed buckets.
 *
 * The window is split into `buckets` buckets of `bucketMs = windowMs / buckets`. Bucket
 * number `b = ⌊now / bucketMs⌋` is the current one; the window is the current bucket and
 * the `buckets − 1` before it, so it covers between `windowMs − bucketMs` and `windowMs` of
 * history. Every operation is O(1) amortised (moving forward clears at most `buckets`
 * cells, however long the gap) and memory is `buckets × counters` numbers, whatever the rate:
 * never a list of timestamps.
 *
 * Time is expected not to go backwards; an earlier `now` is counted in the current bucket.
 */
export class BucketWindow {
  readonly bucketMs: number;
  readonly buckets: number;
  private readonly counters: number;
  private readonly cells: Float64Array;
  private readonly totals: Float64Array;
  /** Absolute number of the current bucket; -Infinity before the first use. */
  private head = Number.NEGATIVE_INFINITY;
  /**
   * Ring index of the current bucket (`head` mod `buckets`), kept rather than computed per
   * use: `head` is a float, and a float modulo is a library call (~20 ns, on every call).
   */
  private slot = 0;

  constructor(windowMs: number, buckets: number, counters: number) {
    this.bucketMs = windowMs / buckets;
    this.buckets = buckets;
    this.counters = counters;
    this.cells = new Float64Array(buckets * counters);
    this.totals = new Float64Array(counters);
  }

  /** Adds `by` to counter `counter` at time `nowMs`. */
  add(nowMs: number, counter: number, by: number): void {
    const slot = this.advance(nowMs);
    this.cells[slot * this.counters + counter]! += by;
    this.totals[counter]! += by;
  }

  /** Sum of counter `counter` over the window ending at `nowMs`. */
  sum(nowMs: number, counter: number): number {
    this.advance(nowMs);
    return this.totals[counter]!;
  }

  /** Forgets everything (e.g. a breaker that closes starts a fresh window). */
  reset(): void {
    this.cells.fill(0);
    this.totals.fill(0);
    this.head = Number.NEGATIVE_INFINITY;
  }

  /** Moves the window to `nowMs`, expiring old buckets; returns the ring index of the current one. */
  private advance(nowMs: number): number {
    const bucket = Math.floor(nowMs / this.bucketMs);
    const n = this.buckets;
    if (bucket > this.head) {
      if (this.head === Number.NEGATIVE_INFINITY || bucket - this.head >= n) {
        // Everything in the ring is older than the window.
        this.cells.fill(0);
        this.totals.fill(0);
      } else {
        const k = this.counters;
        for (let b = this.head + 1; b <= bucket; b++) {
          const base = mod(b, n) * k;
          for (let c = 0; c < k; c++) {
            this.totals[c]! -= this.cells[base + c]!;
            this.cells[base + c] = 0;
          }
        }
      }
      this.head = bucket;
      this.slot = mod(bucket, n);
    }
    return this.slot;
  }
}

/** Modulo that stays non-negative for negative times. */
function mod(a: number, n: number): number {
  const r = a % n;
  return r < 0 ? r + n : r;
}
