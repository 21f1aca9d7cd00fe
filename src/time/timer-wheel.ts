import type { Cancel, Expiring, TimerHandle } from './clock.js';

/** The longest delay a native timer accepts (2^31 − 1 ms). */
export const MAX_NATIVE_DELAY_MS = 2_147_483_647;

/**
 * Many timeouts, one native timer.
 *
 * Per-attempt timeouts are armed on every call and almost always cancelled, because the
 * call succeeds first. A native `setTimeout` + `clearTimeout` per call costs more than the
 * rest of kindly's success path, so long timeouts share a bucketed wheel: an entry expires
 * at the end of its `resolutionMs` bucket (never early, at most `resolutionMs` late), and a
 * single unref'd native timer is armed for the earliest bucket.
 *
 * Cancelling is O(1) and frees memory as soon as it empties a bucket: cancelled entries
 * must not pile up for the whole timeout (10 s by default), or a busy process would carry
 * millions of dead entries into the old generation and pay for them in GC.
 */
export class TimerWheel {
  private readonly buckets = new Map<number, Bucket>();
  private armedFor = Number.POSITIVE_INFINITY;
  private handle: ReturnType<typeof setTimeout> | undefined;
  private live = 0;
  /** The bucket of the previous add: consecutive timeouts of the same length share it. */
  private last: Bucket | undefined;

  constructor(
    private readonly nowMs: () => number,
    private readonly resolutionMs: number,
  ) {}

  /** Live (armed, not cancelled, not fired) entries; for tests and leak checks. */
  get size(): number {
    return this.live;
  }

  /**
   * Runs `callback` `ms` after `fromMs` (a reading of `nowMs` the caller just took, saving a
   * second read of the clock on the hot path; default: now), at the end of that bucket.
   */
  add(ms: number, callback: () => void, fromMs?: number): Cancel {
    const entry = this.enter(ms, callback, undefined, fromMs);
    return () => this.cancel(entry);
  }

  /**
   * As `add`, for a target that knows what to do when its time comes (`target.expire()`): the
   * entry itself is the cancel handle, so an armed timeout costs one object rather than an
   * entry, a callback and a cancel closure (one per call on the hot path).
   */
  expireAfter(ms: number, target: Expiring, fromMs?: number): TimerHandle {
    return this.enter(ms, undefined, target, fromMs);
  }

  private enter(
    ms: number,
    callback: (() => void) | undefined,
    target: Expiring | undefined,
    fromMs: number | undefined,
  ): WheelEntry {
    const at = Math.ceil(((fromMs ?? this.nowMs()) + ms) / this.resolutionMs) * this.resolutionMs;
    let bucket = this.last;
    if (bucket === undefined || bucket.at !== at) {
      bucket = this.buckets.get(at);
      if (bucket === undefined) {
        bucket = new Bucket(at);
        this.buckets.set(at, bucket);
        if (at < this.armedFor) this.arm(at);
      }
      this.last = bucket;
    }
    const entry = new WheelEntry(this, callback, target, bucket);
    // Entries form a doubly linked list per bucket: cancelling unlinks one in O(1) and leaves
    // nothing behind, with no array to grow, compact or reallocate per call.
    const head = bucket.head;
    if (head !== undefined) {
      entry.next = head;
      head.prev = entry;
    }
    bucket.head = entry;
    this.live++;
    return entry;
  }

  /** Cancels `entry` (harmless once it fired or was cancelled). */
  cancel(entry: WheelEntry): void {
    if (!entry.live) return;
    entry.live = false;
    this.live--;
    const { prev, next, bucket } = entry;
    if (prev === undefined) bucket.head = next;
    else prev.next = next;
    if (next !== undefined) next.prev = prev;
    // `entry.next` is kept: `fire` may be walking this list and hold `entry` as its next step.
    // An emptied bucket stays in the map until its time comes: deleting and re-adding map
    // keys on every call makes V8 shrink and regrow the table. The native timer stays armed
    // (unref'd, so harmless): re-arming on the next call would cost a setTimeout /
    // clearTimeout pair per call, the very cost the wheel avoids.
  }

  private arm(at: number): void {
    if (this.handle !== undefined) clearTimeout(this.handle);
    this.armedFor = at;
    // Native timers hold at most 2^31 − 1 ms (~24.8 days); beyond, they fire at once. A
    // longer wait fires early instead, finds nothing due and re-arms for what is left.
    this.handle = setTimeout(() => this.fire(), Math.min(MAX_NATIVE_DELAY_MS, Math.max(0, at - this.nowMs())));
    this.handle.unref?.();
  }

  private fire(): void {
    this.handle = undefined;
    this.armedFor = Number.POSITIVE_INFINITY;
    const now = this.nowMs();
    const due: Bucket[] = [];
    for (const bucket of this.buckets.values()) if (bucket.at <= now) due.push(bucket);
    for (const bucket of due) {
      this.buckets.delete(bucket.at);
      if (this.last === bucket) this.last = undefined;
      // Detach the list first: callbacks may cancel other entries of this bucket.
      let entry = bucket.head;
      bucket.head = undefined;
      while (entry !== undefined) {
        const next = entry.next;
        entry.prev = entry.next = undefined;
        if (entry.live) {
          entry.live = false;
          this.live--;
          const target = entry.target;
          if (target !== undefined) target.expire();
          else (entry.callback as () => void)();
        }
        entry = next;
      }
    }
    // Callbacks may have added entries (and armed) already; arm for whatever is earliest.
    let earliest = Number.POSITIVE_INFINITY;
    for (const at of this.buckets.keys()) if (at < earliest) earliest = at;
    if (earliest < this.armedFor) this.arm(earliest);
  }
}

class Bucket {
  head: WheelEntry | undefined = undefined;
  constructor(readonly at: number) {}
}

/** One armed timeout, and its own cancel handle. */
class WheelEntry implements TimerHandle {
  live = true;
  prev: WheelEntry | undefined = undefined;
  next: WheelEntry | undefined = undefined;
  constructor(
    readonly wheel: TimerWheel,
    readonly callback: (() => void) | undefined,
    readonly target: Expiring | undefined,
    readonly bucket: Bucket,
  ) {}

  cancel(): void {
    this.wheel.cancel(this);
  }
}
