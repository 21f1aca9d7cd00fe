/**
 * Counts events per fixed-width time bucket (bucket k covers [k × width, (k + 1) × width)),
 * growing as time goes on. Constant time per event and no allocation except when doubling.
 */
export class BucketCounter {
  private counts: Int32Array;
  private used = 0;

  constructor(readonly widthMs: number) {
    if (!(widthMs > 0) || !Number.isFinite(widthMs)) throw new RangeError(`Expected a positive bucket width, got ${widthMs}`);
    this.counts = new Int32Array(64);
  }

  /** Adds one event at time `t` (ms ≥ 0). */
  add(t: number): void {
    this.addToBucket(Math.floor(t / this.widthMs));
  }

  addToBucket(bucket: number): void {
    if (bucket >= this.counts.length) {
      let n = this.counts.length * 2;
      while (n <= bucket) n *= 2;
      const next = new Int32Array(n);
      next.set(this.counts);
      this.counts = next;
    }
    this.counts[bucket]!++;
    if (bucket >= this.used) this.used = bucket + 1;
  }

  /** Number of buckets up to and including the last one that received an event. */
  get length(): number {
    return this.used;
  }

  get(bucket: number): number {
    return bucket < this.used ? this.counts[bucket]! : 0;
  }

  /** The largest count in any bucket (0 when empty). */
  max(): number {
    let m = 0;
    for (let i = 0; i < this.used; i++) if (this.counts[i]! > m) m = this.counts[i]!;
    return m;
  }

  total(): number {
    let s = 0;
    for (let i = 0; i < this.used; i++) s += this.counts[i]!;
    return s;
  }

  /** A copy of the counts as a plain array (for reports). */
  toArray(): number[] {
    return Array.from(this.counts.subarray(0, this.used));
  }
}
