/**
 * When a pacer's recent paced requests left (each time it answered "send now"), oldest first:
 * how many left within a span. Slot arithmetic cannot tell once the queue was re-spaced (a
 * rejected opener answered after the next tickets left moves the epoch past them), nor for
 * callers that looked late. Entries older than the horizon given at each record are dropped,
 * so it holds about one window's sends whatever the window's size.
 */
export class SendLog {
  private times: number[] = [];
  private head = 0;

  record(atMs: number, keepFromMs: number): void {
    const times = this.times;
    times.push(atMs);
    while (this.head < times.length && (times[this.head] as number) < keepFromMs) this.head++;
    // Compact once the dropped part is most of the array.
    if (this.head > 32 && this.head * 2 > times.length) {
      this.times = times.slice(this.head);
      this.head = 0;
    }
  }

  /** Sends at `fromMs` or later and at `toMs` or earlier. */
  countBetween(fromMs: number, toMs: number): number {
    const times = this.times;
    let n = 0;
    for (let i = this.head; i < times.length; i++) {
      const t = times[i] as number;
      if (t >= fromMs && t <= toMs) n++;
    }
    return n;
  }

  clear(): void {
    this.times = [];
    this.head = 0;
  }
}
