/**
 * Per-downstream counters. Plain integers and sums, updated in O(1) on the call
 * path; `snapshot()` derives the ratios.
 */
export class StatsCollector {
  requests = 0;
  attempts = 0;
  retries = 0;
  /** Calls that failed at least once and then succeeded. */
  retrySuccesses = 0;
  /** Calls that needed a retry (succeeded or not). */
  retriedRequests = 0;
  successes = 0;
  failures = 0;
  timeouts = 0;
  /** Sum over successful retried calls of the time spent before the final attempt began. */
  retryAddedLatencyMs = 0;
  breakerOpens = 0;
  budgetRejections = 0;
  bulkheadRejections = 0;
  fallbacks = 0;
  pacingDelays = 0;
  pacingDelayMs = 0;
  chaosInjected = 0;
  hedges = 0;
  hedgeWins = 0;
  concurrencyRejections = 0;

  snapshot(live: {
    queueDepth: number;
    inFlight: number;
    concurrencyLimit?: number | undefined;
    attemptTimeoutMs?: number | undefined;
  }): StatsSnapshot {
    return {
      requests: this.requests,
      attempts: this.attempts,
      retries: this.retries,
      successes: this.successes,
      failures: this.failures,
      retryRatio: this.requests === 0 ? 0 : this.retries / this.requests,
      retrySuccessRate: this.retriedRequests === 0 ? 0 : this.retrySuccesses / this.retriedRequests,
      addedLatencyMs: this.retryAddedLatencyMs,
      meanAddedLatencyMs: this.retrySuccesses === 0 ? 0 : this.retryAddedLatencyMs / this.retrySuccesses,
      timeouts: this.timeouts,
      timeoutRatio: this.attempts === 0 ? 0 : this.timeouts / this.attempts,
      queueDepth: live.queueDepth,
      inFlight: live.inFlight,
      breakerOpens: this.breakerOpens,
      budgetRejections: this.budgetRejections,
      bulkheadRejections: this.bulkheadRejections,
      fallbacks: this.fallbacks,
      pacingDelays: this.pacingDelays,
      pacingDelayMs: this.pacingDelayMs,
      chaosInjected: this.chaosInjected,
      hedges: this.hedges,
      hedgeWins: this.hedgeWins,
      hedgeRatio: this.requests === 0 ? 0 : this.hedges / this.requests,
      concurrencyRejections: this.concurrencyRejections,
      concurrencyLimit: live.concurrencyLimit,
      attemptTimeoutMs: live.attemptTimeoutMs,
    };
  }
}

export interface StatsSnapshot {
  /** Logical calls started. */
  requests: number;
  /** Attempts made (first tries + retries). */
  attempts: number;
  retries: number;
  successes: number;
  failures: number;
  /** retries / requests: the extra load retries put on the callee. */
  retryRatio: number;
  /** Of the calls that retried, the share that finally succeeded. */
  retrySuccessRate: number;
  /** Total latency retries added to successful calls (time before their last attempt). */
  addedLatencyMs: number;
  meanAddedLatencyMs: number;
  timeouts: number;
  /** timeouts / attempts. */
  timeoutRatio: number;
  /** Calls waiting for a bulkhead slot now. */
  queueDepth: number;
  /** Attempts running now. */
  inFlight: number;
  breakerOpens: number;
  budgetRejections: number;
  bulkheadRejections: number;
  fallbacks: number;
  pacingDelays: number;
  pacingDelayMs: number;
  /** Faults injected by kindly-calls/chaos (0 unless chaos is enabled). */
  chaosInjected: number;
  /** Hedges sent (extra attempts while an earlier one was still running). */
  hedges: number;
  /** Calls whose answer came from a hedge. */
  hedgeWins: number;
  /** hedges / requests: the extra load hedging put on the callee. */
  hedgeRatio: number;
  /** Attempts refused by the adaptive concurrency limit. */
  concurrencyRejections: number;
  /** The learned concurrency limits, summed over keys (`undefined` without `concurrency`). */
  concurrencyLimit: number | undefined;
  /** The longest derived attempt timeout in force, ms (`undefined` without a derived timeout). */
  attemptTimeoutMs: number | undefined;
}
