import { ConcurrencyLimitError } from '../errors/errors.js';
import { LatencyPolicies, type LatencyPolicyOptions, type LimitWaiter, NO_LIMIT } from '../policies/latency-policies.js';
import type { Random } from '../random/random.js';
import type { Cancel, Clock } from '../time/clock.js';
import { onAbort, type Unsubscribe } from '../time/on-abort.js';

export { type AttemptEnd, LIMIT_REJECTED, NO_LIMIT } from '../policies/latency-policies.js';
/** The latency-driven policies of one lane; each is optional. */
export type LatencyLaneOptions = LatencyPolicyOptions;

/** A call waiting for a slot of the limit, with its promise, timer and abort listener. */
class Waiter implements LimitWaiter {
  cancelTimer: Cancel | undefined = undefined;
  /** The abort subscription (`onAbort`: one listener of kindly's per signal, however many wait on it). */
  stopAbort: Unsubscribe | undefined = undefined;

  constructor(
    readonly partition: number,
    private readonly resolve: (slot: number) => void,
    readonly reject: (reason: unknown) => void,
    public signal: AbortSignal | undefined,
  ) {}

  granted(slot: number): void {
    this.detach();
    this.resolve(slot);
  }

  /** Drops the timer and the abort listener. */
  detach(): void {
    if (this.cancelTimer !== undefined) this.cancelTimer();
    this.cancelTimer = undefined;
    if (this.stopAbort !== undefined) this.stopAbort();
    this.stopAbort = undefined;
    this.signal = undefined;
  }
}

/**
 * One lane's latency policies (`LatencyPolicies`: the adaptive limit, derived attempt
 * timeout and hedging, sans-IO) with the runtime's way of waiting for a slot: a promise, a
 * timer for the longest wait and the caller's abort signal.
 */
export class LatencyLane extends LatencyPolicies {
  constructor(
    options: LatencyLaneOptions,
    private readonly clock: Clock,
    random: Random,
  ) {
    super(options, random);
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
    const waitMs = this.waitAllowance(maxWaitMs);
    if (typeof waitMs !== 'number') return Promise.reject(new ConcurrencyLimitError(limit.limit, waitMs));
    return new Promise<number>((resolve, reject) => {
      const w = new Waiter(this.partitionIndex(partition), resolve, reject, signal);
      this.join(w);
      if (waitMs !== Number.POSITIVE_INFINITY) {
        w.cancelTimer = this.clock.schedule(waitMs, () => {
          w.cancelTimer = undefined;
          this.giveUpWaiting(w, new ConcurrencyLimitError(limit.limit, 'queue-timeout'));
        });
      }
      if (signal !== undefined) {
        w.stopAbort = onAbort(signal, () => {
          w.stopAbort = undefined;
          this.giveUpWaiting(w, signal.reason);
        });
      }
    });
  }

  private giveUpWaiting(w: Waiter, reason: unknown): void {
    this.leave(w);
    w.detach();
    w.reject(reason);
  }
}
