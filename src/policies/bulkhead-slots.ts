import { OptionsValidator } from '../options/validate.js';

export interface BulkheadOptions {
  /** Calls running at once. @default 25 */
  maxConcurrent?: number;
  /**
   * Calls allowed to wait for a slot; beyond that `acquire` rejects at once. 0 means no
   * waiting: queueing adds latency nobody asked for, so it is opt-in. @default 0
   */
  maxQueue?: number;
  /** Longest wait for a slot in ms (the runtime also passes the time left before the deadline). @default 1_000 */
  queueTimeoutMs?: number;
}

export const BULKHEAD_DEFAULTS = {
  maxConcurrent: 25,
  maxQueue: 0,
  queueTimeoutMs: 1_000,
} as const satisfies BulkheadOptions;

const KEYS = ['maxConcurrent', 'maxQueue', 'queueTimeoutMs'] as const;

/** Why a caller that found no free slot is turned away instead of waiting. */
export type BulkheadRefusal = 'queue-full' | 'queue-timeout';

/**
 * A bulkhead's accounting, without promises, timers or signals: how many slots are taken, how
 * many callers wait, and what a caller that finds every slot taken should do. The runtime's
 * waiting line (`Bulkhead` in the runtime) and the simulator both stand on it, so "may this
 * call run now, wait, or be refused" is decided in one place.
 *
 * Hot path, synchronous and allocation-free: `if (slots.tryAcquire()) { … finally release() }`.
 * `tryAcquire` fails while anyone waits (then every slot is taken), so nobody barges the line.
 */
export class BulkheadSlots {
  readonly maxConcurrent: number;
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
  protected running = 0;
  protected waiting = 0;
  protected rejectedCount = 0;

  constructor(options: BulkheadOptions = {}) {
    const v = new OptionsValidator('bulkhead');
    v.knownKeys(options, KEYS)
      .integer('maxConcurrent', options?.maxConcurrent, 1)
      .integer('maxQueue', options?.maxQueue, 0, { allowInfinity: true })
      .duration('queueTimeoutMs', options?.queueTimeoutMs, { allowInfinity: true });
    v.done();
    this.maxConcurrent = options.maxConcurrent ?? BULKHEAD_DEFAULTS.maxConcurrent;
    this.maxQueue = options.maxQueue ?? BULKHEAD_DEFAULTS.maxQueue;
    this.queueTimeoutMs = options.queueTimeoutMs ?? BULKHEAD_DEFAULTS.queueTimeoutMs;
  }

  /** Slots taken. */
  get active(): number {
    return this.running;
  }

  /** Callers waiting for a slot. */
  get queued(): number {
    return this.waiting;
  }

  /** Callers refused for a full queue or a queue timeout since creation. */
  get rejected(): number {
    return this.rejectedCount;
  }

  /** Takes a slot if one is free now. */
  tryAcquire(): boolean {
    if (this.running < this.maxConcurrent) {
      this.running++;
      return true;
    }
    return false;
  }

  /**
   * For a caller that found every slot taken: how long it may wait in line (ms, > 0, possibly
   * Infinity), or why it is refused at once — the queue is full, or the wait allowed
   * (`min(queueTimeoutMs, maxWaitMs)`, e.g. the time left before the deadline) is nothing.
   * A refusal is counted in `rejected`.
   */
  waitAllowance(maxWaitMs?: number): number | BulkheadRefusal {
    if (this.waiting >= this.maxQueue) {
      this.rejectedCount++;
      return 'queue-full';
    }
    const waitMs = maxWaitMs !== undefined && maxWaitMs < this.queueTimeoutMs ? maxWaitMs : this.queueTimeoutMs;
    if (!(waitMs > 0)) {
      this.rejectedCount++;
      return 'queue-timeout';
    }
    return waitMs;
  }

  /** A caller joined the line. */
  protected joined(): void {
    this.waiting++;
  }

  /** A caller left the line: granted a slot, timed out (`timedOut`: counted as rejected) or aborted. */
  protected left(timedOut: boolean): void {
    this.waiting--;
    if (timedOut) this.rejectedCount++;
  }

  /**
   * Gives a slot back. Returns true when someone waits: the slot then passes to the longest
   * waiter and stays taken (the line's owner hands it over); false when it was freed.
   */
  release(): boolean {
    if (this.waiting > 0) return true;
    if (this.running > 0) this.running--;
    return false;
  }
}
