/**
 * How many round trips of each kind a flight keeps: the most recent. A search lasts as long as
 * the callee rejects; first tries arriving all the while are answered too, and a herd of
 * thousands a second against an outage of minutes would otherwise keep hundreds of thousands
 * of numbers and sort them all at each look. 255 answers read a median to within a few per cent
 * of the distribution's, which is all the comparisons here need (a factor of 2).
 */
const KEPT = 255;

/**
 * The round trips of one flight's answers, served and rejected, kept apart: whether its
 * successes were served slowly, as a worker pool serves and rejects fast, judged by medians.
 *
 * A median is what one tail does not move. The search reads a slow success against the slowest
 * rejection (latencies that merely spread must not read as a pool), and with lognormal 20 ms
 * latencies one rejection of 94 ms outlasted all but two successes of a simulated pool's flight.
 */
export class FlightLatencies {
  private readonly served = new RecentLatencies();
  private readonly rejected = new RecentLatencies();

  /** An answer of the flight came back `latencyMs` after it left. */
  record(ok: boolean, latencyMs: number): void {
    if (latencyMs >= 0) (ok ? this.served : this.rejected).add(latencyMs);
  }

  /** Forgets every answer (a new search, a new flight). */
  clear(): void {
    this.served.clear();
    this.rejected.clear();
  }

  /**
   * Whether at least `minServed` successes and `minRejected` rejections are in, and the
   * successes' median round trip is over `factor` times the rejections'.
   */
  servedSlowly(minServed: number, minRejected: number, factor: number): boolean {
    if (this.served.count < minServed || this.rejected.count < minRejected) return false;
    return this.served.median() > factor * this.rejected.median();
  }

  /** How many rejections were recorded since the last `clear`. */
  get rejectedCount(): number {
    return this.rejected.count;
  }

  /** The rejections' round trip at quantile `q` (0–1) of those kept; NaN with none in. */
  rejectedQuantile(q: number): number {
    return this.rejected.quantile(q);
  }

  /** Whether `latencyMs` is over `factor` times the rejections' median round trip (false with none in). */
  slowerThanRejections(latencyMs: number, factor: number): boolean {
    return this.rejected.count > 0 && latencyMs > factor * this.rejected.median();
  }
}

/** The last `KEPT` round trips of one kind (a ring), sorted once per change for their median and quantiles. */
class RecentLatencies {
  private readonly values: number[] = [];
  private next = 0;
  /** How many were ever added since the last `clear` (only the last `KEPT` are kept). */
  count = 0;
  /** The kept values in order, sorted once per change; undefined when stale. */
  private cachedSorted: number[] | undefined;

  add(latencyMs: number): void {
    if (this.values.length < KEPT) this.values.push(latencyMs);
    else this.values[this.next] = latencyMs;
    this.next = (this.next + 1) % KEPT;
    this.count++;
    this.cachedSorted = undefined;
  }

  clear(): void {
    this.values.length = 0;
    this.next = 0;
    this.count = 0;
    this.cachedSorted = undefined;
  }

  /** NaN with none kept. */
  median(): number {
    const sorted = this.sorted();
    return sorted.length === 0 ? Number.NaN : median(sorted);
  }

  quantile(q: number): number {
    const sorted = this.sorted();
    if (sorted.length === 0) return Number.NaN;
    return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  }

  private sorted(): number[] {
    if (this.cachedSorted === undefined) this.cachedSorted = [...this.values].sort((a, b) => a - b);
    return this.cachedSorted;
  }
}

/** The median of `sorted` (ascending, at least one value). */
function median(sorted: readonly number[]): number {
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
