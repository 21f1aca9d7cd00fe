import { ConcurrencyLimitError } from '../errors/errors.js';
import { AdaptiveConcurrencyLimit, type AdaptiveConcurrencyOptions, LIMIT_REJECTED } from '../policies/adaptive-concurrency.js';
import { DerivedTimeout, type DerivedTimeoutOptions } from '../policies/derived-timeout.js';
import { type HedgingOptions, HedgingPolicy } from '../policies/hedging.js';
import type { Random } from '../random/random.js';
import type { Cancel, Clock } from '../time/clock.js';

/** The latency-driven policies of one lane; each is optional. */
export interface LatencyLaneOptions {
  concurrency: AdaptiveConcurrencyOptions | undefined;
  attemptTimeoutMs: DerivedTimeoutOptions | undefined;
  hedging: HedgingOptions | undefined;
}

/** `admit`'s answer when there is no limit: a slot that needs no release. */
export const NO_LIMIT = -2;
export { LIMIT_REJECTED };

/**
 * How an attempt ended, as far as latency is concerned:
 * - `ok`: answered (successfully, or with an error that took a normal time);
 * - `timeout`: cut by its attempt timeout;
 * - `overload`: the callee said it is overloaded (429/503, a wait hint);
 * - `abandoned`: cancelled, or lost a hedge race — its elapsed time is only a lower bound.
 */
export type AttemptEnd = 'ok' | 'timeout' | 'overload' | 'abandoned';

/** A call waiting for a slot of the limit. */
interface Waiter {
  partition: number;
  resolve: (slot: number) => void;
  reject: (reason: unknown) => void;
  cancelTimer: Cancel | undefined;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * One lane's adaptive concurrency limit, derived attempt timeout and hedging policy, and the
 * single place where an attempt's latency is fed to all three, so that the runtime reports
 * each attempt once and the three never disagree about what it measured.
 */
export class LatencyLane {
  readonly limit: AdaptiveConcurrencyLimit | undefined;
  readonly timeouts: DerivedTimeout | undefined;
  readonly hedging: HedgingPolicy | undefined;
  /** Calls waiting for a slot, oldest first (at most `maxQueue`). */
  private readonly waiters: Waiter[] = [];

  constructor(
    options: LatencyLaneOptions,
    private readonly clock: Clock,
    random: Random,
  ) {
    this.limit = options.concurrency === undefined ? undefined : new AdaptiveConcurrencyLimit(options.concurrency, random);
    this.timeouts = options.attemptTimeoutMs === undefined ? undefined : new DerivedTimeout(options.attemptTimeoutMs);
    this.hedging = options.hedging === undefined ? undefined : new HedgingPolicy(options.hedging);
  }

  /** Attempts holding a slot of the limit, or waiting for one. */
  get inFlight(): number {
    return (this.limit?.inFlight ?? 0) + this.waiters.length;
  }

  /** Whether a refused attempt may wait for a slot (`maxQueue` > 0). */
  get queues(): boolean {
    return (this.limit?.maxQueue ?? 0) > 0;
  }

  /** Calls waiting for a slot now. */
  get queued(): number {
    return this.waiters.length;
  }

  /** A slot of the adaptive limit for `partition`: `NO_LIMIT` without one, `LIMIT_REJECTED` when full. */
  admit(nowMs: number, partition: string | undefined): number {
    const limit = this.limit;
    if (limit === undefined) return NO_LIMIT;
    // Nobody jumps the queue.
    if (this.waiters.length > 0) return LIMIT_REJECTED;
    return limit.tryAcquire(nowMs, limit.partitionIndex(partition));
  }

  /**
   * Waits in line for a slot, at most `min(queueTimeoutMs, maxWaitMs)`. Resolves with the slot;
   * rejects with a `ConcurrencyLimitError` (`queue-full`, `queue-timeout`) or `signal.reason`.
   * A waiter that gives up leaves the line at once, its timer and listener removed.
   */
  wait(partition: string | undefined, signal: AbortSignal | undefined, maxWaitMs: number): Promise<number> {
    const limit = this.limit;
    if (limit === undefined) return Promise.resolve(NO_LIMIT);
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.waiters.length >= limit.maxQueue) return Promise.reject(new ConcurrencyLimitError(limit.limit, 'queue-full'));
    const waitMs = Math.min(limit.queueTimeoutMs, maxWaitMs);
    if (!(waitMs > 0)) return Promise.reject(new ConcurrencyLimitError(limit.limit, 'queue-timeout'));
    return new Promise<number>((resolve, reject) => {
      const w: Waiter = {
        partition: limit.partitionIndex(partition),
        resolve,
        reject,
        cancelTimer: undefined,
        signal,
        onAbort: undefined,
      };
      this.waiters.push(w);
      if (waitMs !== Number.POSITIVE_INFINITY) {
        w.cancelTimer = this.clock.schedule(waitMs, () => {
          w.cancelTimer = undefined;
          this.leave(w);
          reject(new ConcurrencyLimitError(limit.limit, 'queue-timeout'));
        });
      }
      if (signal !== undefined) {
        w.onAbort = () => {
          w.onAbort = undefined;
          this.leave(w);
          reject(signal.reason);
        };
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
    });
  }

  /** Gives back a slot that was never used (nothing learned from it). */
  giveBack(slot: number, nowMs: number): void {
    if (slot < 0) return;
    this.limit?.release(slot, nowMs, nowMs, 'ignore');
    this.grant(nowMs);
  }

  /** The attempt timeout for an attempt starting now: derived when configured, else `fixedMs`. */
  attemptTimeoutMs(nowMs: number, fixedMs: number): number {
    return this.timeouts === undefined ? fixedMs : this.timeouts.timeoutMs(nowMs);
  }

  /**
   * An attempt that started at `startedMs` (holding `slot` from `admit`, and cut at
   * `timeoutMs` if it timed out) ended now.
   */
  settle(slot: number, startedMs: number, nowMs: number, end: AttemptEnd, timeoutMs: number): void {
    if (slot >= 0) {
      this.limit?.release(slot, startedMs, nowMs, end === 'ok' ? 'ok' : end === 'abandoned' ? 'ignore' : 'dropped');
      this.grant(nowMs);
    }
    const latency = nowMs - startedMs;
    if (end === 'ok') {
      this.timeouts?.recordSuccess(latency, nowMs);
      this.hedging?.recordLatency(latency, nowMs);
    } else if (end === 'timeout') {
      this.timeouts?.recordTimeout(timeoutMs, nowMs);
      this.hedging?.recordLatency(timeoutMs, nowMs);
    } else if (end === 'abandoned') {
      // A lower bound only: enough to keep a hedge delay from shrinking on the winners alone.
      this.hedging?.recordLatency(latency, nowMs);
    }
  }

  /** Hands free slots to waiters, oldest first (skipping one whose partition cannot go yet). */
  private grant(nowMs: number): void {
    const limit = this.limit;
    if (limit === undefined || this.waiters.length === 0) return;
    for (let i = 0; i < this.waiters.length; ) {
      const w = this.waiters[i]!;
      const slot = limit.tryAcquire(nowMs, w.partition, false);
      if (slot === LIMIT_REJECTED) {
        i++;
        continue;
      }
      this.leave(w);
      w.resolve(slot);
    }
  }

  private leave(w: Waiter): void {
    const i = this.waiters.indexOf(w);
    if (i >= 0) this.waiters.splice(i, 1);
    if (w.cancelTimer !== undefined) w.cancelTimer();
    w.cancelTimer = undefined;
    if (w.onAbort !== undefined) w.signal?.removeEventListener('abort', w.onAbort);
    w.onAbort = undefined;
    w.signal = undefined;
  }
}
