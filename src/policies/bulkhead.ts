import { BulkheadRejectedError } from '../errors/errors.js';
import { OptionsValidator } from '../options/validate.js';
import type { Cancel, Clock } from '../time/clock.js';
import { onAbort } from '../time/on-abort.js';

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

/** One queued `acquire`: a node of the FIFO's doubly linked list. */
interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  prev: Waiter | undefined;
  next: Waiter | undefined;
  signal: AbortSignal | undefined;
  /** Ends the waiter's subscription to its signal's abort (see `onAbort`). */
  onAbort: (() => void) | undefined;
  cancelTimer: Cancel | undefined;
}

/**
 * A concurrency limit with a bounded FIFO queue.
 *
 * Hot path, synchronous and allocation-free: `if (bulkhead.tryAcquire()) { … finally release() }`.
 * When no slot is free, `acquire(signal, maxWaitMs)` waits in line:
 * - queue full → rejects at once with `BulkheadRejectedError('queue-full')`;
 * - no slot within `min(queueTimeoutMs, maxWaitMs)` → `BulkheadRejectedError('queue-timeout')`;
 * - `signal` aborts → rejects with `signal.reason`.
 * A waiter that gives up leaves the list at once (O(1) unlink), its timer cancelled and its
 * abort listener removed; a granted waiter's listener and timer are removed too, so nothing
 * accumulates on a long-lived signal.
 *
 * A slot freed by `release` goes straight to the head of the queue (no barging: `tryAcquire`
 * fails while anyone waits, because then every slot is taken). Whoever holds a slot — from
 * `tryAcquire` returning true or `acquire` resolving — must call `release` exactly once.
 */
export class Bulkhead {
  readonly maxConcurrent: number;
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
  private readonly clock: Clock;
  private running = 0;
  private waiting = 0;
  private head: Waiter | undefined;
  private tail: Waiter | undefined;
  private rejectedCount = 0;

  constructor(options: BulkheadOptions, clock: Clock) {
    const v = new OptionsValidator('bulkhead');
    v.knownKeys(options, KEYS)
      .integer('maxConcurrent', options?.maxConcurrent, 1)
      .integer('maxQueue', options?.maxQueue, 0, { allowInfinity: true })
      .duration('queueTimeoutMs', options?.queueTimeoutMs, { allowInfinity: true })
      .check(
        typeof clock === 'object' && clock !== null && typeof clock.schedule === 'function',
        `Expected a Clock, got ${typeof clock}`,
      );
    v.done();
    this.maxConcurrent = options.maxConcurrent ?? BULKHEAD_DEFAULTS.maxConcurrent;
    this.maxQueue = options.maxQueue ?? BULKHEAD_DEFAULTS.maxQueue;
    this.queueTimeoutMs = options.queueTimeoutMs ?? BULKHEAD_DEFAULTS.queueTimeoutMs;
    this.clock = clock;
  }

  /** Slots taken. */
  get active(): number {
    return this.running;
  }

  /** Callers waiting for a slot. */
  get queued(): number {
    return this.waiting;
  }

  /** `acquire` calls rejected for a full queue or a queue timeout since creation. */
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

  /** Gives a slot back; hands it to the longest waiter, if any. */
  release(): void {
    const w = this.head;
    if (w === undefined) {
      if (this.running > 0) this.running--;
      return;
    }
    // The slot passes from the releaser to the waiter: `running` is unchanged.
    this.unlink(w);
    this.detach(w);
    w.resolve();
  }

  /**
   * Resolves once a slot is held (at once, without queueing, when one is free). `maxWaitMs`
   * caps the wait below `queueTimeoutMs`, e.g. to the time left before the deadline.
   */
  acquire(signal?: AbortSignal, maxWaitMs?: number): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.running < this.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    if (this.waiting >= this.maxQueue) {
      this.rejectedCount++;
      return Promise.reject(new BulkheadRejectedError('queue-full'));
    }
    const waitMs = maxWaitMs !== undefined && maxWaitMs < this.queueTimeoutMs ? maxWaitMs : this.queueTimeoutMs;
    if (!(waitMs > 0)) {
      this.rejectedCount++;
      return Promise.reject(new BulkheadRejectedError('queue-timeout'));
    }
    return new Promise<void>((resolve, reject) => {
      const w: Waiter = {
        resolve,
        reject,
        prev: this.tail,
        next: undefined,
        signal,
        onAbort: undefined,
        cancelTimer: undefined,
      };
      if (this.tail === undefined) this.head = w;
      else this.tail.next = w;
      this.tail = w;
      this.waiting++;
      if (waitMs !== Number.POSITIVE_INFINITY) {
        w.cancelTimer = this.clock.schedule(waitMs, () => {
          w.cancelTimer = undefined;
          this.unlink(w);
          this.detach(w);
          this.rejectedCount++;
          reject(new BulkheadRejectedError('queue-timeout'));
        });
      }
      if (signal !== undefined) {
        w.onAbort = onAbort(signal, () => {
          w.onAbort = undefined;
          this.unlink(w);
          this.detach(w);
          reject(signal.reason);
        });
      }
    });
  }

  private unlink(w: Waiter): void {
    if (w.prev === undefined) this.head = w.next;
    else w.prev.next = w.next;
    if (w.next === undefined) this.tail = w.prev;
    else w.next.prev = w.prev;
    w.prev = undefined;
    w.next = undefined;
    this.waiting--;
  }

  /** Drops the waiter's timer and abort listener. */
  private detach(w: Waiter): void {
    if (w.cancelTimer !== undefined) {
      w.cancelTimer();
      w.cancelTimer = undefined;
    }
    if (w.onAbort !== undefined) {
      w.onAbort();
      w.onAbort = undefined;
    }
    w.signal = undefined;
  }
}
