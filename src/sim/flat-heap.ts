/**
 * A 4-ary min-heap of `(time, seq)` keys carrying two numbers (`kind`, `arg`), stored flat in
 * one `Float64Array`, four slots per entry. Half the depth of a binary heap, and a node's four
 * children sit side by side, which matters when most levels are cache misses. The building
 * block of `EventQueue`; allocation-free except when it doubles.
 */
export class FlatHeap {
  private h: Float64Array;
  /** Entries held. */
  size = 0;
  /** The entry the last `pop()` removed. */
  time = 0;
  seq = 0;
  kind = 0;
  arg = 0;

  constructor(initialCapacity = 64) {
    this.h = new Float64Array(Math.max(4, initialCapacity) * 4);
  }

  /** Time of the top entry (meaningless when empty). */
  topTime(): number {
    return this.h[0]!;
  }

  /** Seq of the top entry (meaningless when empty). */
  topSeq(): number {
    return this.h[1]!;
  }

  push(time: number, seq: number, kind: number, arg: number): void {
    if (this.size * 4 === this.h.length) {
      const bigger = new Float64Array(this.h.length * 2);
      bigger.set(this.h);
      this.h = bigger;
    }
    const h = this.h;
    let i = this.size++;
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

  /** Removes the top entry into `time`, `seq`, `kind`, `arg`. The heap must not be empty. */
  pop(): void {
    const h = this.h;
    this.time = h[0]!;
    this.seq = h[1]!;
    this.kind = h[2]!;
    this.arg = h[3]!;
    const n = --this.size;
    if (n === 0) return;
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
      const end = Math.min(first + 4, n);
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
  }
}
