/**
 * The simulator's event queue: a binary min-heap of `(time, seq)` keys, each carrying two
 * small integers (`kind`, `arg`). Same ordering as `VirtualClock` — earliest time first, ties
 * in insertion order — but stored as parallel typed arrays instead of one object and one
 * closure per timer, so that tens of millions of events allocate nothing and a run is not
 * dominated by garbage collection. `VirtualClock` stays the clock for async code under test;
 * this is its allocation-free twin for the discrete-event loop.
 */
export class EventQueue {
  private times: Float64Array;
  private seqs: Float64Array;
  private kinds: Int32Array;
  private args: Int32Array;
  private count = 0;
  private nextSeq = 0;

  /** Time of the event the last `pop()` removed. */
  poppedTime = 0;
  /** Kind of the event the last `pop()` removed. */
  poppedKind = 0;
  /** Argument of the event the last `pop()` removed. */
  poppedArg = 0;

  constructor(initialCapacity = 1024) {
    const n = Math.max(16, initialCapacity);
    this.times = new Float64Array(n);
    this.seqs = new Float64Array(n);
    this.kinds = new Int32Array(n);
    this.args = new Int32Array(n);
  }

  get size(): number {
    return this.count;
  }

  /** Time of the earliest event, or `Infinity` when the queue is empty. */
  peekTime(): number {
    return this.count === 0 ? Number.POSITIVE_INFINITY : this.times[0]!;
  }

  push(time: number, kind: number, arg: number): void {
    if (this.count === this.times.length) this.grow();
    const times = this.times;
    const seqs = this.seqs;
    const kinds = this.kinds;
    const args = this.args;
    // A float seq stays exact up to 2^53 events, far beyond any run.
    const seq = this.nextSeq++;
    let i = this.count++;
    // Sift the hole up, moving parents down, then drop the new entry in once.
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = times[parent]!;
      if (pt < time || (pt === time && seqs[parent]! < seq)) break;
      times[i] = pt;
      seqs[i] = seqs[parent]!;
      kinds[i] = kinds[parent]!;
      args[i] = args[parent]!;
      i = parent;
    }
    times[i] = time;
    seqs[i] = seq;
    kinds[i] = kind;
    args[i] = arg;
  }

  /**
   * Removes the earliest event and exposes it through `poppedTime`, `poppedKind` and
   * `poppedArg` (fields rather than a returned object, so popping allocates nothing).
   * Returns false when the queue is empty.
   */
  pop(): boolean {
    if (this.count === 0) return false;
    const times = this.times;
    const seqs = this.seqs;
    const kinds = this.kinds;
    const args = this.args;
    this.poppedTime = times[0]!;
    this.poppedKind = kinds[0]!;
    this.poppedArg = args[0]!;
    const n = --this.count;
    if (n === 0) return true;
    const lt = times[n]!;
    const ls = seqs[n]!;
    const lk = kinds[n]!;
    const la = args[n]!;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let m = l;
      const r = l + 1;
      if (r < n) {
        const rt = times[r]!;
        const ltm = times[l]!;
        if (rt < ltm || (rt === ltm && seqs[r]! < seqs[l]!)) m = r;
      }
      const mt = times[m]!;
      if (lt < mt || (lt === mt && ls < seqs[m]!)) break;
      times[i] = mt;
      seqs[i] = seqs[m]!;
      kinds[i] = kinds[m]!;
      args[i] = args[m]!;
      i = m;
    }
    times[i] = lt;
    seqs[i] = ls;
    kinds[i] = lk;
    args[i] = la;
    return true;
  }

  private grow(): void {
    const n = this.times.length * 2;
    const times = new Float64Array(n);
    const seqs = new Float64Array(n);
    const kinds = new Int32Array(n);
    const args = new Int32Array(n);
    times.set(this.times);
    seqs.set(this.seqs);
    kinds.set(this.kinds);
    args.set(this.args);
    this.times = times;
    this.seqs = seqs;
    this.kinds = kinds;
    this.args = args;
  }
}
