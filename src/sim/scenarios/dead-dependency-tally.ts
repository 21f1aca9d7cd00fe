import type { CircuitBreakerOptions } from '../../policies/circuit-breaker.js';
import { BucketCounter } from '../bucket-counter.js';
import type { Dependency } from '../dependency.js';
import type { DeadDependencyVariant } from './dead-dependency.js';

const BUCKET_MS = 1_000;

/** How the callee's caller ended: the counts taken from whatever drove the calls. */
export interface DeadDependencyCalls {
  variant: string;
  breaker: boolean;
  requests: number;
  succeeded: number;
  failed: number;
  breakerOpens: number;
}

/**
 * What one dead-dependency run counts beside its callee and its caller: attempts per second,
 * calls failed fast (and those after the callee came back), and — watching the breaker's state
 * changes — when it first closed after the callee's return, the end of the recovery delay.
 * Shared by the simulator's run and the `downstream()` one so that both count alike.
 */
export class DeadDependencyTally {
  readonly perSecond = new BucketCounter(BUCKET_MS);
  failedFast = 0;
  failedFastAfterRecovery = 0;
  /** Times the watched breaker opened. */
  breakerOpens = 0;
  private closedAfterBackAt = Number.NaN;

  /** `backAtMs`: when the callee comes back. */
  constructor(readonly backAtMs: number) {}

  /** The breaker's options with this tally watching its state changes, or false for no breaker. */
  watchBreaker(options: CircuitBreakerOptions | undefined): CircuitBreakerOptions | false {
    if (options === undefined) return false;
    return {
      ...options,
      onStateChange: (_from, to, at) => {
        if (to === 'open') this.breakerOpens++;
        if (to === 'closed' && at >= this.backAtMs && Number.isNaN(this.closedAfterBackAt)) this.closedAfterBackAt = at;
      },
    };
  }

  /** A call was failed fast (refused locally, never sent or its retry refused) at `atMs`. */
  failFast(atMs: number): void {
    this.failedFast++;
    if (atMs >= this.backAtMs) this.failedFastAfterRecovery++;
  }

  /** From the callee's return to the breaker's closing (0 if it never closed after it). */
  get recoveryDelayMs(): number {
    return Number.isNaN(this.closedAfterBackAt) ? 0 : this.closedAfterBackAt - this.backAtMs;
  }

  /** The run's row (its keys in the order the JSON output shows them). */
  row(calls: DeadDependencyCalls, callee: Dependency): DeadDependencyVariant {
    return {
      variant: calls.variant,
      breaker: calls.breaker,
      requests: calls.requests,
      attempts: callee.calls,
      requestsToDead: callee.callsWhileDown,
      failedFast: this.failedFast,
      failedFastAfterRecovery: this.failedFastAfterRecovery,
      succeeded: calls.succeeded,
      failed: calls.failed,
      breakerOpens: calls.breakerOpens,
      recoveryDelayMs: this.recoveryDelayMs,
      perSecond: this.perSecond.toArray(),
    };
  }
}
