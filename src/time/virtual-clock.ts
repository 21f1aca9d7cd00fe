import type { Cancel, Clock } from './clock.js';
import { onAbort, type Unsubscribe } from './on-abort.js';

/**
 * A clock that only moves when told to. Timers fire in deadline order, ties in the order
 * they were scheduled, so a run is reproducible.
 *
 * Two ways to drive it:
 * - `advance(ms)` / `advanceTo(t)`: fire everything due, letting promise continuations run
 *   between timers (for async code under test);
 * - `runNext()`: fire the single earliest timer synchronously (for discrete-event loops).
 */
export class VirtualClock implements Clock {
  private time: number;
  private readonly wallOffset: number;
  private seq = 0;
  private readonly heap: VirtualTimer[] = [];

  constructor(options: { startMs?: number; wallClockStartMs?: number } = {}) {
    this.time = options.startMs ?? 0;
    // An arbitrary but fixed wall-clock origin so that HTTP dates are reproducible.
    this.wallOffset = (options.wallClockStartMs ?? Date.UTC(2025, 0, 1)) - this.time;
  }

  now(): number {
    return this.wallOffset + this.time;
  }

  monotonic(): number {
    return this.time;
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    let n = 0;
    for (const t of this.heap) if (t.live) n++;
    return n;
  }

  schedule(ms: number, callback: () => void, fromMs?: number): Cancel {
    const timer: VirtualTimer = {
      at: (fromMs ?? this.time) + Math.max(0, ms),
      seq: this.seq++,
      callback,
      live: true,
    };
    this.push(timer);
    return () => {
      timer.live = false;
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      let unsubscribe: Unsubscribe | undefined;
      const cancel = this.schedule(ms, () => {
        unsubscribe?.();
        resolve();
      });
      if (signal !== undefined) {
        unsubscribe = onAbort(signal, () => {
          cancel();
          reject(signal.reason);
        });
      }
    });
  }

  /** Fires the earliest live timer synchronously. Returns false when none is left. */
  runNext(): boolean {
    for (;;) {
      const timer = this.pop();
      if (timer === undefined) return false;
      if (!timer.live) continue;
      timer.live = false;
      if (timer.at > this.time) this.time = timer.at;
      timer.callback();
      return true;
    }
  }

  /** Time of the earliest live timer, or undefined. */
  nextAt(): number | undefined {
    while (this.heap.length > 0 && !this.heap[0]!.live) this.pop();
    return this.heap[0]?.at;
  }

  /**
   * Moves time forward by `ms`, firing due timers in order and yielding to the microtask
   * queue after each so that awaiting code can schedule its next timer.
   */
  async advance(ms: number): Promise<void> {
    await this.advanceTo(this.time + ms);
  }

  async advanceTo(target: number): Promise<void> {
    await flushMicrotasks();
    for (;;) {
      const at = this.nextAt();
      if (at === undefined || at > target) break;
      this.runNext();
      await flushMicrotasks();
    }
    if (target > this.time) this.time = target;
    await flushMicrotasks();
  }

  /** Runs timers until none is left (or `limit` fired, to stop runaway loops). */
  async runAll(limit = 100_000): Promise<void> {
    await flushMicrotasks();
    for (let i = 0; i < limit; i++) {
      if (!this.runNext()) return;
      await flushMicrotasks();
    }
    throw new Error(`VirtualClock.runAll: more than ${limit} timers fired; is something looping?`);
  }

  private push(timer: VirtualTimer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): VirtualTimer | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (heap.length > 0 && last !== undefined) {
      heap[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && before(heap[l]!, heap[m]!)) m = l;
        if (r < heap.length && before(heap[r]!, heap[m]!)) m = r;
        if (m === i) break;
        [heap[i], heap[m]] = [heap[m]!, heap[i]!];
        i = m;
      }
    }
    return top;
  }
}

interface VirtualTimer {
  at: number;
  seq: number;
  callback: () => void;
  live: boolean;
}

function before(a: VirtualTimer, b: VirtualTimer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Lets pending promise continuations run (several turns, for chains of awaits). */
async function flushMicrotasks(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
