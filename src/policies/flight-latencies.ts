/**
 * The round trips of one flight's answers, served and rejected, kept apart: whether its
 * successes were served slowly, as a worker pool serves and rejects fast, judged by medians.
 *
 * A median is what one tail does not move. The search reads a slow success against the slowest
 * rejection (latencies that merely spread must not read as a pool), and with lognormal 20 ms
 * latencies one rejection of 94 ms outlasted all but two successes of a simulated pool's flight.
 */
export class FlightLatencies {
  private readonly served: number[] = [];
  private readonly rejected: number[] = [];

  /** An answer of the flight came back `latencyMs` after it left. */
  record(ok: boolean, latencyMs: number): void {
    if (latencyMs >= 0) (ok ? this.served : this.rejected).push(latencyMs);
  }

  /** Forgets every answer (a new search, a new flight). */
  clear(): void {
    this.served.length = 0;
    this.rejected.length = 0;
  }

  /**
   * Whether at least `minServed` successes and `minRejected` rejections are in, and the
   * successes' median round trip is over `factor` times the rejections'.
   */
  servedSlowly(minServed: number, minRejected: number, factor: number): boolean {
    if (this.served.length < minServed || this.rejected.length < minRejected) return false;
    return median(this.served) > factor * median(this.rejected);
  }

  /** Whether `latencyMs` is over `factor` times the rejections' median round trip (false with none in). */
  slowerThanRejections(latencyMs: number, factor: number): boolean {
    return this.rejected.length > 0 && latencyMs > factor * median(this.rejected);
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
