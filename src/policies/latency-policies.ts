import type { Random } from '../random/random.js';
import { AdaptiveConcurrencyLimit, type AdaptiveConcurrencyOptions, LIMIT_REJECTED } from './adaptive-concurrency.js';
import type { BulkheadRefusal } from './bulkhead-slots.js';
import { DerivedTimeout, type DerivedTimeoutOptions } from './derived-timeout.js';
import { type HedgingOptions, HedgingPolicy } from './hedging.js';

/** The latency-driven policies of one lane; each is optional. */
export interface LatencyPolicyOptions {
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

/** One caller waiting in line for a slot of the limit; its driver owns its timer and signal. */
export interface LimitWaiter {
  /** The partition index (`AdaptiveConcurrencyLimit.partitionIndex`). */
  readonly partition: number;
  /** A slot was freed for it at `nowMs` (it has left the line). */
  granted(slot: number, nowMs: number): void;
}

/**
 * One lane's adaptive concurrency limit, derived attempt timeout and hedging policy, and the
 * single place where an attempt's latency is fed to all three, so that each attempt is
 * reported once and the three never disagree about what it measured. Sans-IO: the line of
 * callers waiting for a slot is kept here, while how they wait (promises and timers in the
 * runtime's `LatencyLane`, events on virtual time in the simulator) is the driver's.
 */
export class LatencyPolicies {
  readonly limit: AdaptiveConcurrencyLimit | undefined;
  readonly timeouts: DerivedTimeout | undefined;
  readonly hedging: HedgingPolicy | undefined;
  /** Callers waiting for a slot, oldest first (at most `maxQueue`). */
  private readonly waiters: LimitWaiter[] = [];

  constructor(options: LatencyPolicyOptions, random: Random) {
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

  /** Callers waiting for a slot now. */
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
   * For a caller the limit refused: how long it may wait in line (ms, > 0, possibly Infinity),
   * or why it is refused at once — the line is full, or `min(queueTimeoutMs, maxWaitMs)` is
   * nothing. Without a limit: `Infinity` (a slot is granted at once).
   */
  waitAllowance(maxWaitMs: number): number | BulkheadRefusal {
    const limit = this.limit;
    if (limit === undefined) return Number.POSITIVE_INFINITY;
    if (this.waiters.length >= limit.maxQueue) return 'queue-full';
    const waitMs = Math.min(limit.queueTimeoutMs, maxWaitMs);
    return waitMs > 0 ? waitMs : 'queue-timeout';
  }

  /** The partition index a waiter of `partition` carries. */
  partitionIndex(partition: string | undefined): number {
    return this.limit?.partitionIndex(partition) ?? 0;
  }

  /** `waiter` joins the end of the line (after `waitAllowance` allowed it). */
  join(waiter: LimitWaiter): void {
    this.waiters.push(waiter);
  }

  /** `waiter` leaves the line without a slot (its wait ran out, its caller aborted). */
  leave(waiter: LimitWaiter): void {
    const i = this.waiters.indexOf(waiter);
    if (i >= 0) this.waiters.splice(i, 1);
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
    const waiters = this.waiters;
    if (limit === undefined || waiters.length === 0) return;
    for (let i = 0; i < waiters.length; ) {
      const w = waiters[i]!;
      const slot = limit.tryAcquire(nowMs, w.partition, false);
      if (slot === LIMIT_REJECTED) {
        i++;
        continue;
      }
      waiters.splice(i, 1);
      w.granted(slot, nowMs);
    }
  }
}
