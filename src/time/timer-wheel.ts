import type { Cancel, Expiring } from './clock.js';

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
 * millions of dead entries into the old generation and pay for them in GC. Emptied buckets
 * go too, but for the one being filled.
 */
export class TimerWheel {
  private readonly buckets = new Map<number, Bucket>();
  private armedFor = Number.POSITIVE_INFINITY;
  private handle: ReturnType<typeof setTimeout> | undefined;
  private live = 0;
  /** The bucket of the previous add: consecutive timeouts of the same length share it. */
  private last: Bucket | undefined;
  /** Entries armed by `expireAfterUnstamped`, waiting for `stamp`; never in `buckets`. */
  private readonly unstamped = new Bucket(Number.NaN);

  constructor(
    private readonly nowMs: () => number,
    private readonly resolutionMs: number,
  ) {}

  /** Live (armed, not cancelled, not fired) entries; for tests and leak checks. */
  get size(): number {
    return this.live;
  }

  /** Buckets held (each with live entries, or the one being filled); for tests and leak checks. */
  get bucketCount(): number {
    return this.buckets.size;
  }

  /**
   * Runs `callback` `ms` after `fromMs` (a reading of `nowMs` the caller just took, saving a
   * second read of the clock on the hot path; default: now), at the end of that bucket.
   */
  add(ms: number, callback: () => void, fromMs?: number): Cancel {
    const entry = new CallbackEntry(callback);
    this.link(entry, ms, fromMs);
    return () => this.cancel(entry);
  }

  /**
   * As `add`, for an entry that carries its own links and knows what to do when its time comes
   * (`entry.expire()`): an armed timeout then costs no object at all (one per call on the hot
   * path: the attempt is its own entry). Cancel it with `cancel(entry)`.
   */
  expireAfter(ms: number, entry: WheelEntry, fromMs?: number): void {
    this.link(entry, ms, fromMs);
  }

  /**
   * As `expireAfter`, for an entry whose delay counts from a moment nobody read the clock at
   * (the call started on a coarse reading, see `CoarseClock`): it waits unfiled until the next
   * `stamp(nowMs)`, and its delay counts from that reading, taken after it was armed — so it
   * never expires early, and at most the time between stamps later than `expireAfter` would.
   */
  expireAfterUnstamped(ms: number, entry: WheelEntry): void {
    entry.delayMs = ms;
    entry.wheel = this;
    this.push(this.unstamped, entry);
  }

  /** Files every unstamped entry, its delay counted from `nowMs` (read after each was armed). */
  stamp(nowMs: number): void {
    let entry = this.unstamped.head;
    this.unstamped.head = undefined;
    while (entry !== undefined) {
      const next = entry.next;
      this.live--; // `link` counts it again
      this.link(entry, entry.delayMs, nowMs);
      entry = next;
    }
  }

  private link(entry: WheelEntry, ms: number, fromMs: number | undefined): void {
    const at = Math.ceil(((fromMs ?? this.nowMs()) + ms) / this.resolutionMs) * this.resolutionMs;
    let bucket = this.last;
    if (bucket === undefined || bucket.at !== at) {
      const previous = bucket;
      bucket = this.buckets.get(at);
      if (bucket === undefined) {
        bucket = new Bucket(at);
        this.buckets.set(at, bucket);
        if (at < this.armedFor) this.arm(at);
      }
      this.last = bucket;
      // The bucket filled until now, if its entries were all cancelled meanwhile, goes now
      // (see `cancel`: it was kept while it was being filled).
      if (previous !== undefined) this.dropIfEmpty(previous);
    }
    entry.wheel = this;
    this.push(bucket, entry);
  }

  /**
   * Entries form a doubly linked list per bucket: cancelling unlinks one in O(1) and leaves
   * nothing behind, with no array to grow, compact or reallocate per call.
   */
  private push(bucket: Bucket, entry: WheelEntry): void {
    entry.bucket = bucket;
    const head = bucket.head;
    entry.prev = undefined;
    entry.next = head;
    if (head !== undefined) head.prev = entry;
    bucket.head = entry;
    this.live++;
  }

  /** Cancels `entry` (harmless once it fired or was cancelled). */
  cancel(entry: WheelEntry): void {
    if (entry.wheel !== this) return;
    entry.wheel = undefined;
    this.live--;
    const { prev, next } = entry;
    const bucket = entry.bucket as Bucket;
    if (prev === undefined) bucket.head = next;
    else prev.next = next;
    if (next !== undefined) next.prev = prev;
    // `entry.next` is kept: `fire` may be walking this list and hold `entry` as its next step.
    // The bucket being filled (`last`) stays in the map when emptied: calls that each add and
    // cancel a timeout of the same length would otherwise delete and re-add its key every
    // time, and V8 shrinks and regrows the table. Any other bucket goes once emptied, and the
    // one being filled when the next add moves on to another (once per bucket): kept until
    // their time came, buckets piled up by the million when timeouts were long and each of
    // another length (deadlines chosen by inbound clients, up to a day), and every `fire`
    // scans them all. The native timer stays armed (unref'd, so
    // harmless; it re-arms for what is left): re-arming on the next call would cost a
    // setTimeout / clearTimeout pair per call, the very cost the wheel avoids.
    if (bucket !== this.last && bucket !== this.unstamped) this.dropIfEmpty(bucket);
  }

  private dropIfEmpty(bucket: Bucket): void {
    // (A bucket `fire` took out of the map is not the one its time may be held under now.)
    if (bucket.head === undefined && this.buckets.get(bucket.at) === bucket) this.buckets.delete(bucket.at);
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
        if (entry.wheel === this) {
          entry.wheel = undefined;
          this.live--;
          entry.expire();
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

/** The entries due at the end of one `resolutionMs` slot. */
export class Bucket {
  head: WheelEntry | undefined = undefined;
  constructor(readonly at: number) {}
}

/**
 * What a wheel holds: an object carrying its own links, so that arming it allocates nothing.
 * A subclass assigns nothing of these itself (the constructor here sets them first, for one
 * hidden class) and says in `expire` what happens when its time comes.
 */
export abstract class WheelEntry implements Expiring {
  /** The wheel the entry is armed in; `undefined` when not armed (never, fired or cancelled). */
  declare wheel: TimerWheel | undefined;
  declare bucket: Bucket | undefined;
  declare prev: WheelEntry | undefined;
  declare next: WheelEntry | undefined;
  /** The delay of an entry waiting unstamped (`expireAfterUnstamped`). */
  declare delayMs: number;

  constructor() {
    this.wheel = undefined;
    this.bucket = undefined;
    this.prev = undefined;
    this.next = undefined;
    this.delayMs = 0;
  }

  abstract expire(): void;
}

/** An entry for `add`: runs its callback. */
class CallbackEntry extends WheelEntry {
  constructor(private readonly callback: () => void) {
    super();
  }

  expire(): void {
    this.callback();
  }
}
