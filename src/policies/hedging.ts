import { OptionsValidator } from '../options/validate.js';
import { LATENCY_QUANTILES_DEFAULTS, LatencyQuantiles } from './latency-quantiles.js';
import { RetryBudget } from './retry-budget.js';

export interface HedgingOptions {
  /**
   * Fixed wait before a hedge, ms. Without it the wait is the learned `percentile` of this
   * lane's latency. @default learned
   */
  delayMs?: number;
  /** Which percentile of latency a learned delay follows, in (0, 1). @default 0.95 */
  percentile?: number;
  /** Hedges per call at most (attempts in flight at once: 1 + maxHedges). @default 1 */
  maxHedges?: number;
  /**
   * Hedges per request at most over a 10 s sliding window (Finagle's `maxExtraLoad`), in
   * [0, 1]. Hedges also draw on the retry budget. @default 0.05
   */
  maxExtraLoad?: number;
  /** Decayed latencies needed before a learned delay is trusted (no hedging until then). @default 20 */
  minSamples?: number;
  /** Half-life of a latency sample's weight, ms. @default 10_000 */
  halfLifeMs?: number;
}

export const HEDGING_DEFAULTS = {
  percentile: 0.95,
  maxHedges: 1,
  maxExtraLoad: 0.05,
  minSamples: 20,
  halfLifeMs: LATENCY_QUANTILES_DEFAULTS.halfLifeMs,
} as const satisfies HedgingOptions;

const KEYS = ['delayMs', 'percentile', 'maxHedges', 'maxExtraLoad', 'minSamples', 'halfLifeMs'] as const;

/** Why a hedge was not sent. */
export type HedgeRefusal =
  /** The call is not safe to repeat. */
  | 'not-idempotent'
  /** `maxHedges` hedges are out already. */
  | 'max-hedges'
  /** The breaker is not closed, or pacing is throttling: the callee is in trouble. */
  | 'trouble'
  /** Hedges would exceed `maxExtraLoad` of the requests. */
  | 'extra-load'
  /** The retry budget has nothing left. */
  | 'budget';

export interface HedgeInput {
  nowMs: number;
  idempotent: boolean;
  /** Hedges this call has sent so far. */
  hedgesSent: number;
  /** The breaker is open or half-open, or the pacer is throttling. */
  trouble: boolean;
  /** Withdraws one retry from the retry budget; `true` when granted. Asked last. */
  retryBudget: (() => boolean) | undefined;
}

/**
 * When to send a hedge — a second attempt, without cancelling the first, for a call that is
 * taking long (the "backup request" of Finagle and gRPC's hedging policy). The runtime sends
 * one after `delayMs()` if `decide` grants it; the first good answer wins and the rest are
 * aborted.
 *
 * A hedge is granted only if, in this order: the call is idempotent; fewer than `maxHedges`
 * were sent; the callee is not in trouble (breaker closed, pacer calm); the hedge keeps
 * hedges ≤ `maxExtraLoad` × requests over a 10 s window; and the retry budget grants one.
 * Hence hedging can never more than add `maxExtraLoad` to the load, and never pushes a
 * struggling callee.
 *
 * The learned delay is the `percentile` of this lane's attempt latency (a decaying
 * estimate); until `minSamples` are known there is no learned delay and no hedging.
 * Sans-IO: time is the caller's monotonic ms.
 */
export class HedgingPolicy {
  readonly fixedDelayMs: number | undefined;
  readonly percentile: number;
  readonly maxHedges: number;
  readonly maxExtraLoad: number;
  readonly minSamples: number;
  readonly latency: LatencyQuantiles;
  private readonly extraLoad: RetryBudget;
  private sentCount = 0;

  constructor(options: HedgingOptions = {}) {
    const v = new OptionsValidator('hedging');
    v.knownKeys(options, KEYS)
      .duration('delayMs', options.delayMs)
      .check(
        options.percentile === undefined ||
          (typeof options.percentile === 'number' && options.percentile > 0 && options.percentile < 1),
        `Expected \`percentile\` in (0, 1), got ${String(options.percentile)}`,
      )
      .integer('maxHedges', options.maxHedges, 1)
      .number('maxExtraLoad', options.maxExtraLoad, 0, 1)
      .integer('minSamples', options.minSamples, 1)
      .duration('halfLifeMs', options.halfLifeMs, { min: 1, allowInfinity: true })
      .done();
    this.fixedDelayMs = options.delayMs;
    this.percentile = options.percentile ?? HEDGING_DEFAULTS.percentile;
    this.maxHedges = options.maxHedges ?? HEDGING_DEFAULTS.maxHedges;
    this.maxExtraLoad = options.maxExtraLoad ?? HEDGING_DEFAULTS.maxExtraLoad;
    this.minSamples = options.minSamples ?? HEDGING_DEFAULTS.minSamples;
    this.latency = new LatencyQuantiles({ halfLifeMs: options.halfLifeMs ?? HEDGING_DEFAULTS.halfLifeMs });
    this.extraLoad = new RetryBudget({ ratio: this.maxExtraLoad, reservePerSecond: 0 });
  }

  /** Hedges granted since creation. */
  get sent(): number {
    return this.sentCount;
  }

  /** A call started: deposits `maxExtraLoad` of a hedge. */
  recordRequest(nowMs: number): void {
    this.extraLoad.recordRequest(nowMs);
  }

  /** An attempt answered after `latencyMs` (or was abandoned after that long). */
  recordLatency(latencyMs: number, nowMs: number): void {
    this.latency.record(latencyMs, nowMs);
  }

  /**
   * How long after an attempt starts its hedge may go, ms; `undefined` while a learned
   * delay has too few samples (no hedging yet).
   */
  delayMs(nowMs: number): number | undefined {
    if (this.fixedDelayMs !== undefined) return this.fixedDelayMs;
    if (this.latency.weight(nowMs) < this.minSamples) return undefined;
    return this.latency.quantile(this.percentile);
  }

  /** Whether to send a hedge now: `undefined` when granted (tokens taken), else why not. */
  decide(input: HedgeInput): HedgeRefusal | undefined {
    if (!input.idempotent) return 'not-idempotent';
    if (input.hedgesSent >= this.maxHedges) return 'max-hedges';
    if (input.trouble) return 'trouble';
    if (!this.extraLoad.tryRetry(input.nowMs)) return 'extra-load';
    if (input.retryBudget !== undefined && !input.retryBudget()) return 'budget';
    this.sentCount++;
    return undefined;
  }
}
