import { OptionsValidator } from '../options/validate.js';
import { FlatHeap } from './flat-heap.js';

export interface EventQueueOptions {
  /** Width of a calendar bucket, in the queue's time unit (ms). Any width is correct; it only tunes speed. @default 1 */
  bucketMs?: number;
  /** Buckets in the calendar ring (rounded up to a power of two): events further ahead wait in a heap. @default 16_384 */
  buckets?: number;
}

export const EVENT_QUEUE_DEFAULTS = {
  bucketMs: 1,
  buckets: 16_384,
} as const satisfies EventQueueOptions;

/**
 * The simulator's event queue. Events are ordered by `(time, seq)` — earliest time first, ties
 * in insertion order, exactly as `VirtualClock` orders its timers — and carry two numbers
 * (`kind`, `arg`). Built for tens of millions of events without allocating per event, in
 * three parts, each holding entries `(time, seq, kind, arg)` flat in a `Float64Array`:
 *
 * - a FIFO **lane** (ring buffer) that takes every event not earlier than the lane's last one.
 *   Such an event sorts after everything already in the lane (its seq is the largest yet), so
 *   the lane stays sorted for free; simulations often schedule in order (a batch of answers,
 *   each followed by the same delay), and those events cost O(1);
 * - a **calendar** of `bucketMs`-wide buckets for the next `buckets × bucketMs`: an event goes
 *   unsorted into its bucket, and a bucket is moved into a small **near heap** only when the
 *   clock reaches it. The heap that does the ordering then holds one bucket's worth of events
 *   and stays in cache, instead of a million-entry heap whose every level is a cache miss;
 * - a **far heap** for events beyond the calendar.
 *
 * `pop` takes the earliest of the lane's head, the near heap's top and the far heap's top;
 * buckets hold only events later than the near heap's, so the order is exact. `VirtualClock`
 * stays the clock for async code under test; this is its allocation-free twin for the
 * discrete-event loop.
 */
export class EventQueue {
  private nextSeq = 0;

  private lane: Float64Array;
  private laneStart = 0;
  private laneMask: number;
  private laneCount = 0;
  private laneLastTime = Number.NEGATIVE_INFINITY;

  private readonly bucketMs: number;
  private readonly ringMask: number;
  private readonly ring: Float64Array[];
  private readonly ringLength: Int32Array;
  private ringCount = 0;
  /** The bucket last moved into the near heap; the calendar holds buckets (cursor, cursor + ring size). */
  private cursor = 0;
  private readonly near = new FlatHeap(1024);
  private readonly far = new FlatHeap(1024);

  /** Time of the event the last `pop()` removed. */
  poppedTime = 0;
  /** Kind of the event the last `pop()` removed. */
  poppedKind = 0;
  /** Argument of the event the last `pop()` removed. */
  poppedArg = 0;

  constructor(options: EventQueueOptions = {}) {
    this.lane = new Float64Array(1024 * 4);
    this.laneMask = 1023;
    new OptionsValidator('event queue')
      .knownKeys(options, ['bucketMs', 'buckets'])
      .number('bucketMs', options.bucketMs, Number.MIN_VALUE, Number.MAX_VALUE)
      .integer('buckets', options.buckets, 2)
      .done();
    this.bucketMs = options.bucketMs ?? EVENT_QUEUE_DEFAULTS.bucketMs;
    const size = 2 ** Math.ceil(Math.log2(options.buckets ?? EVENT_QUEUE_DEFAULTS.buckets));
    this.ringMask = size - 1;
    const empty = new Float64Array(0);
    this.ring = new Array<Float64Array>(size).fill(empty);
    this.ringLength = new Int32Array(size);
  }

  get size(): number {
    return this.laneCount + this.ringCount + this.near.size + this.far.size;
  }

  /** Time of the earliest event, or `Infinity` when the queue is empty. */
  peekTime(): number {
    if (this.near.size === 0 && this.ringCount > 0) this.load();
    let t = Number.POSITIVE_INFINITY;
    if (this.laneCount > 0) t = this.lane[this.laneStart * 4]!;
    if (this.near.size > 0 && this.near.topTime() < t) t = this.near.topTime();
    if (this.far.size > 0 && this.far.topTime() < t) t = this.far.topTime();
    return t;
  }

  /** Queues an event. */
  push(time: number, kind: number, arg: number): void {
    // A float seq stays exact up to 2^53 events, far beyond any run.
    const seq = this.nextSeq++;
    if (this.laneCount === 0 || time >= this.laneLastTime) {
      if (this.laneCount > this.laneMask) this.growLane();
      const o = ((this.laneStart + this.laneCount) & this.laneMask) * 4;
      const lane = this.lane;
      lane[o] = time;
      lane[o + 1] = seq;
      lane[o + 2] = kind;
      lane[o + 3] = arg;
      this.laneCount++;
      this.laneLastTime = time;
      return;
    }
    const ahead = Math.floor(time / this.bucketMs) - this.cursor;
    if (ahead <= 0) this.near.push(time, seq, kind, arg);
    else if (ahead > this.ringMask) this.far.push(time, seq, kind, arg);
    else {
      const slot = (this.cursor + ahead) & this.ringMask;
      let bucket = this.ring[slot]!;
      const n = this.ringLength[slot]!;
      if (n * 4 === bucket.length) {
        const bigger = new Float64Array(Math.max(64, bucket.length * 2));
        bigger.set(bucket);
        this.ring[slot] = bucket = bigger;
      }
      const o = n * 4;
      bucket[o] = time;
      bucket[o + 1] = seq;
      bucket[o + 2] = kind;
      bucket[o + 3] = arg;
      this.ringLength[slot] = n + 1;
      this.ringCount++;
    }
  }

  /**
   * Removes the earliest event and exposes it through `poppedTime`, `poppedKind` and
   * `poppedArg` (fields rather than a returned object, so popping allocates nothing).
   * Returns false when the queue is empty.
   */
  pop(): boolean {
    if (this.near.size === 0 && this.ringCount > 0) this.load();
    // 0: none, 1: lane, 2: near, 3: far.
    let from = 0;
    let t = Number.POSITIVE_INFINITY;
    let s = 0;
    if (this.laneCount > 0) {
      const o = this.laneStart * 4;
      t = this.lane[o]!;
      s = this.lane[o + 1]!;
      from = 1;
    }
    const near = this.near;
    if (near.size > 0) {
      const nt = near.topTime();
      if (from === 0 || nt < t || (nt === t && near.topSeq() < s)) {
        t = nt;
        s = near.topSeq();
        from = 2;
      }
    }
    const far = this.far;
    if (far.size > 0) {
      const ft = far.topTime();
      if (from === 0 || ft < t || (ft === t && far.topSeq() < s)) from = 3;
    }
    if (from === 1) {
      const o = this.laneStart * 4;
      this.poppedTime = t;
      this.poppedKind = this.lane[o + 2]!;
      this.poppedArg = this.lane[o + 3]!;
      this.laneStart = (this.laneStart + 1) & this.laneMask;
      this.laneCount--;
      return true;
    }
    if (from === 0) return false;
    const heap = from === 2 ? near : far;
    heap.pop();
    this.poppedTime = heap.time;
    this.poppedKind = heap.kind;
    this.poppedArg = heap.arg;
    return true;
  }

  /**
   * Moves the next non-empty bucket into the (empty) near heap — unless the lane or the far heap
   * holds an event earlier than that bucket could, in which case that event goes first.
   */
  private load(): void {
    let limit = Number.POSITIVE_INFINITY;
    if (this.laneCount > 0) limit = this.lane[this.laneStart * 4]!;
    if (this.far.size > 0 && this.far.topTime() < limit) limit = this.far.topTime();
    // Compared as bucket indices (the same floor(t / bucketMs) that placed the events), so the
    // decision agrees with the placement even where floating-point division rounds.
    const limitBucket = limit === Number.POSITIVE_INFINITY ? limit : Math.floor(limit / this.bucketMs);
    for (;;) {
      if (this.cursor + 1 > limitBucket) return;
      this.cursor++;
      const slot = this.cursor & this.ringMask;
      const n = this.ringLength[slot]!;
      if (n === 0) continue;
      const bucket = this.ring[slot]!;
      const near = this.near;
      for (let o = 0; o < n * 4; o += 4) near.push(bucket[o]!, bucket[o + 1]!, bucket[o + 2]!, bucket[o + 3]!);
      this.ringLength[slot] = 0;
      this.ringCount -= n;
      return;
    }
  }

  private growLane(): void {
    const size = this.laneMask + 1;
    const bigger = new Float64Array(size * 8);
    // Unroll the ring so that the head is at 0.
    const head = this.lane.subarray(this.laneStart * 4);
    bigger.set(head);
    bigger.set(this.lane.subarray(0, this.laneStart * 4), head.length);
    this.lane = bigger;
    this.laneStart = 0;
    this.laneMask = size * 2 - 1;
  }
}
