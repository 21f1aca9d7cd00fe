import type { Cancel } from './clock.js';

/**
 * Many timeouts, one native timer.
 *
 * Per-attempt timeouts are armed on every call and almost always cancelled, because the
 * call succeeds first. A native `setTimeout` + `clearTimeout` per call costs more than the
 * rest of kindly's success path, so long timeouts share a bucketed wheel: an entry expires
 * at the end of its `resolutionMs` bucket (never early, at most `resolutionMs` late), and a
 * single unref'd native timer is armed for the earliest bucket. Cancelling is O(1): the
 * entry is marked dead and skipped when its bucket fires.
 */
export class TimerWheel {
  private readonly buckets = new Map<number, WheelEntry[]>();
  private armedFor = Number.POSITIVE_INFINITY;
  private handle: ReturnType<typeof setTimeout> | undefined;
  private live = 0;

  constructor(
    private readonly nowMs: () => number,
    private readonly resolutionMs: number,
  ) {}

  /** Live (armed, not cancelled, not fired) entries; for tests and leak checks. */
  get size(): number {
    return this.live;
  }

  add(ms: number, callback: () => void): Cancel {
    const bucket = Math.ceil((this.nowMs() + ms) / this.resolutionMs) * this.resolutionMs;
    const entry: WheelEntry = { callback, live: true };
    let list = this.buckets.get(bucket);
    if (list === undefined) {
      list = [];
      this.buckets.set(bucket, list);
    }
    list.push(entry);
    this.live++;
    if (bucket < this.armedFor) this.arm(bucket);
    return () => {
      if (entry.live) {
        entry.live = false;
        this.live--;
        if (this.live === 0) this.disarm();
      }
    };
  }

  private arm(bucket: number): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.armedFor = bucket;
    this.handle = setTimeout(() => this.fire(), Math.max(0, bucket - this.nowMs()));
    this.handle.unref?.();
  }

  private disarm(): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.handle = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.buckets.clear();
  }

  private fire(): void {
    this.handle = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.nowMs();
    const due: WheelEntry[][] = [];
    let next = Number.POSITIVE_INFINITY;
    for (const [bucket, list] of this.buckets) {
      if (bucket <= now) {
        due.push(list);
        this.buckets.delete(bucket);
      } else if (bucket < next) {
        next = bucket;
      }
    }
    for (const list of due) {
      for (const entry of list) {
        if (!entry.live) continue;
        entry.live = false;
        this.live--;
        entry.callback();
      }
    }
    if (this.live === 0) this.buckets.clear();
    else if (next < this.armedFor) {
      // Recompute: callbacks may have added entries (and armed) already.
      let earliest = next;
      for (const bucket of this.buckets.keys()) if (bucket < earliest) earliest = bucket;
      if (earliest < this.armedFor) this.arm(earliest);
    }
  }
}

interface WheelEntry {
  callback: () => void;
  live: boolean;
}
