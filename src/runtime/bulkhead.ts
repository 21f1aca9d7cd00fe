import { BulkheadRejectedError } from '../errors/errors.js';
import { InvalidOptionsError } from '../options/validate.js';
import { type BulkheadOptions, BulkheadSlots } from '../policies/bulkhead-slots.js';
import type { Cancel, Clock } from '../time/clock.js';
import { onAbort } from '../time/on-abort.js';

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
 * A concurrency limit with a bounded FIFO waiting line: `BulkheadSlots`' accounting plus the
 * promises, timers and abort signals of callers who wait.
 *
 * When no slot is free, `acquire(signal, maxWaitMs)` waits in line:
 * - queue full → rejects at once with `BulkheadRejectedError('queue-full')`;
 * - no slot within `min(queueTimeoutMs, maxWaitMs)` → `BulkheadRejectedError('queue-timeout')`;
 * - `signal` aborts → rejects with `signal.reason`.
 * A waiter that gives up leaves the list at once (O(1) unlink), its timer cancelled and its
 * abort listener removed; a granted waiter's listener and timer are removed too, so nothing
 * accumulates on a long-lived signal.
 *
 * A slot freed by `release` goes straight to the head of the line. Whoever holds a slot — from
 * `tryAcquire` returning true or `acquire` resolving — must call `release` exactly once.
 */
export class Bulkhead extends BulkheadSlots {
  private readonly clock: Clock;
  private head: Waiter | undefined;
  private tail: Waiter | undefined;

  constructor(options: BulkheadOptions, clock: Clock) {
    if (typeof clock !== 'object' || clock === null || typeof clock.schedule !== 'function') {
      throw new InvalidOptionsError('bulkhead', [`Expected a Clock, got ${typeof clock}`]);
    }
    super(options);
    this.clock = clock;
  }

  /** Gives a slot back; hands it to the longest waiter, if any (the slot then stays taken). */
  override release(): boolean {
    const w = this.head;
    if (w === undefined) return super.release();
    this.unlink(w, false);
    this.detach(w);
    w.resolve();
    return true;
  }

  /**
   * Resolves once a slot is held (at once, without queueing, when one is free). `maxWaitMs`
   * caps the wait below `queueTimeoutMs`, e.g. to the time left before the deadline.
   */
  acquire(signal?: AbortSignal, maxWaitMs?: number): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.tryAcquire()) return Promise.resolve();
    const waitMs = this.waitAllowance(maxWaitMs);
    if (typeof waitMs !== 'number') return Promise.reject(new BulkheadRejectedError(waitMs));
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
      this.joined();
      if (waitMs !== Number.POSITIVE_INFINITY) {
        w.cancelTimer = this.clock.schedule(waitMs, () => {
          w.cancelTimer = undefined;
          this.unlink(w, true);
          this.detach(w);
          reject(new BulkheadRejectedError('queue-timeout'));
        });
      }
      if (signal !== undefined) {
        w.onAbort = onAbort(signal, () => {
          w.onAbort = undefined;
          this.unlink(w, false);
          this.detach(w);
          reject(signal.reason);
        });
      }
    });
  }

  private unlink(w: Waiter, timedOut: boolean): void {
    if (w.prev === undefined) this.head = w.next;
    else w.prev.next = w.next;
    if (w.next === undefined) this.tail = w.prev;
    else w.next.prev = w.prev;
    w.prev = undefined;
    w.next = undefined;
    this.left(timedOut);
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
