import { AdaptiveConcurrencyLimit, type AdaptiveConcurrencyOptions, LIMIT_REJECTED } from '../policies/adaptive-concurrency.js';
import { DerivedTimeout, type DerivedTimeoutOptions } from '../policies/derived-timeout.js';
import { type HedgingOptions, HedgingPolicy } from '../policies/hedging.js';

/** The latency-driven policies of one lane; each is optional. */
export interface LatencyLaneOptions {
  concurrency: AdaptiveConcurrencyOptions | undefined;
  attemptTimeout: DerivedTimeoutOptions | undefined;
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

/**
 * One lane's adaptive concurrency limit, derived attempt timeout and hedging policy, and the
 * single place where an attempt's latency is fed to all three, so that the runtime reports
 * each attempt once and the three never disagree about what it measured.
 */
export class LatencyLane {
  readonly limit: AdaptiveConcurrencyLimit | undefined;
  readonly timeouts: DerivedTimeout | undefined;
  readonly hedging: HedgingPolicy | undefined;

  constructor(options: LatencyLaneOptions) {
    this.limit = options.concurrency === undefined ? undefined : new AdaptiveConcurrencyLimit(options.concurrency);
    this.timeouts = options.attemptTimeout === undefined ? undefined : new DerivedTimeout(options.attemptTimeout);
    this.hedging = options.hedging === undefined ? undefined : new HedgingPolicy(options.hedging);
  }

  /** Attempts holding a slot of the limit. */
  get inFlight(): number {
    return this.limit?.inFlight ?? 0;
  }

  /** A slot of the adaptive limit for `partition`: `NO_LIMIT` without one, `LIMIT_REJECTED` when full. */
  admit(nowMs: number, partition: string | undefined): number {
    const limit = this.limit;
    if (limit === undefined) return NO_LIMIT;
    return limit.tryAcquire(nowMs, limit.partitionIndex(partition));
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
}
