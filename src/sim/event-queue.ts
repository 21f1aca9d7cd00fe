/**
 * The simulator's event queue: a min-heap of `(time, seq)` keys, each carrying two small
 * integers (`kind`, `arg`). Same ordering as `VirtualClock` — earliest time first, ties in
 * insertion order — but stored flat in one `Float64Array` (four slots per entry: time, seq,
 * kind, arg) instead of one object and one closure per timer, so that tens of millions of
 * events allocate nothing. The heap is 4-ary: half the depth of a binary heap, and the four
 * children of a node sit side by side, which matters once a million events are waiting and
 * most levels are cache misses. `VirtualClock` stays the clock for async code under test;
 * this is its allocation-free twin for the discrete-event loop.
 */
export class EventQueue {
  private heap: Float64Array;
  private count = 0;
  private nextSeq = 0;

  /** Time of the event the last `pop()` removed. */
  poppedTime = 0;
  /** Kind of the event the last `pop()` removed. */
  poppedKind = 0;
  /** Argument of the event the last `pop()` removed. */
  poppedArg = 0;

  constructor(initialCapacity = 1024) {
    this.heap = new Float64Array(Math.max(16, initialCapacity) * 4);
  }

  get size(): number {
    return this.count;
  }

  /** Time of the earliest event, or `Infinity` when the queue is empty. */
  peekTime(): number {
    return this.count === 0 ? Number.POSITIVE_INFINITY : this.heap[0]!;
  }

  /** Queues an event; `kind` and `arg` must be integers in [0, 2^31). */
  push(time: number, kind: number, arg: number): void {
    if (this.count * 4 === this.heap.length) this.grow();
    const h = this.heap;
    // A float seq stays exact up to 2^53 events, far beyond any run.
    const seq = this.nextSeq++;
    let i = this.count++;
    // Sift the hole up, moving parents down, then drop the new entry in once.
    while (i > 0) {
      const parent = (i - 1) >> 2;
      const p = parent * 4;
      const pt = h[p]!;
      if (pt < time || (pt === time && h[p + 1]! < seq)) break;
      const c = i * 4;
      h[c] = pt;
      h[c + 1] = h[p + 1]!;
      h[c + 2] = h[p + 2]!;
      h[c + 3] = h[p + 3]!;
      i = parent;
    }
    const c = i * 4;
    h[c] = time;
    h[c + 1] = seq;
    h[c + 2] = kind;
    h[c + 3] = arg;
  }

  /**
   * Removes the earliest event and exposes it through `poppedTime`, `poppedKind` and
   * `poppedArg` (fields rather than a returned object, so popping allocates nothing).
   * Returns false when the queue is empty.
   */
  pop(): boolean {
    if (this.count === 0) return false;
    const h = this.heap;
    this.poppedTime = h[0]!;
    this.poppedKind = h[2]!;
    this.poppedArg = h[3]!;
    const n = --this.count;
    if (n === 0) return true;
    // Sift the last entry down from the root.
    const last = n * 4;
    const lt = h[last]!;
    const ls = h[last + 1]!;
    const lk = h[last + 2]!;
    const la = h[last + 3]!;
    let i = 0;
    for (;;) {
      const first = 4 * i + 1;
      if (first >= n) break;
      // The earliest of up to four children.
      let m = first * 4;
      let mt = h[m]!;
      let ms = h[m + 1]!;
      const end = first + 4 < n ? first + 4 : n;
      for (let k = first + 1; k < end; k++) {
        const o = k * 4;
        const t = h[o]!;
        if (t < mt || (t === mt && h[o + 1]! < ms)) {
          m = o;
          mt = t;
          ms = h[o + 1]!;
        }
      }
      if (lt < mt || (lt === mt && ls < ms)) break;
      const c = i * 4;
      h[c] = mt;
      h[c + 1] = ms;
      h[c + 2] = h[m + 2]!;
      h[c + 3] = h[m + 3]!;
      i = m >> 2;
    }
    const c = i * 4;
    h[c] = lt;
    h[c + 1] = ls;
    h[c + 2] = lk;
    h[c + 3] = la;
    return true;
  }

  private grow(): void {
    const bigger = new Float64Array(this.heap.length * 2);
    bigger.set(this.heap);
    this.heap = bigger;
  }
}
