import { OptionsValidator } from '../options/validate.js';
import { LATENCY_QUANTILES_DEFAULTS, LatencyQuantiles } from './latency-quantiles.js';

export interface DerivedTimeoutOptions {
  /**
   * Which percentile of recent latency the timeout follows, in (0, 1). Its complement is the
   * share of attempts the timeout may cut short while the callee is merely slow — the
   * "false timeout" rate you accept (0.99 → about 1 %, less with `factor` > 1). @default 0.99
   */
  percentile?: number;
  /** Multiplier on the percentile (headroom), ≥ 1. @default 1.5 */
  factor?: number;
  /** Shortest timeout, ms. @default 10 */
  floorMs?: number;
  /**
   * Longest timeout, ms; also the timeout used until `minSamples` latencies are known.
   * @default 10_000
   */
  ceilingMs?: number;
  /** Decayed samples needed before the percentile is trusted. @default 20 */
  minSamples?: number;
  /** Half-life of a latency sample's weight, ms. @default 10_000 */
  halfLifeMs?: number;
}

export const DERIVED_TIMEOUT_DEFAULTS = {
  percentile: 0.99,
  factor: 1.5,
  floorMs: 10,
  ceilingMs: 10_000,
  minSamples: 20,
  halfLifeMs: LATENCY_QUANTILES_DEFAULTS.halfLifeMs,
} as const satisfies DerivedTimeoutOptions;

const KEYS = ['percentile', 'factor', 'floorMs', 'ceilingMs', 'minSamples', 'halfLifeMs'] as const;

/**
 * How much longer than its own timeout a timed-out attempt is recorded as. The attempt proves
 * only that the latency was longer than the timeout; recording it at the timeout itself
 * would pin the estimate there (a censored sample never lies above the cut-off), so a callee
 * that slowed down would be timed out at the old percentile for ever.
 */
export const TIMED_OUT_SAMPLE_FACTOR = 2;

/**
 * Attempt timeouts that follow the callee's latency (the Amazon Builders' Library advice: a
 * timeout at a latency percentile with an acceptable false-timeout rate, padded):
 *
 *     timeout = clamp(quantile(percentile) × factor, floorMs, ceilingMs)
 *             = ceilingMs while fewer than minSamples (decayed) latencies are known
 *
 * Latencies of successful attempts are recorded with `recordSuccess`; attempts cut by this
 * timeout with `recordTimeout` (at `TIMED_OUT_SAMPLE_FACTOR` × their timeout, see there).
 * Failures that answered fast say nothing about how long a success takes and are not
 * recorded. The call's deadline stays the outer bound: the runtime takes the earlier of it
 * and this timeout.
 */
export class DerivedTimeout {
  readonly percentile: number;
  readonly factor: number;
  readonly floorMs: number;
  readonly ceilingMs: number;
  readonly minSamples: number;
  readonly latency: LatencyQuantiles;

  constructor(options: DerivedTimeoutOptions = {}) {
    const v = new OptionsValidator('derived attempt timeout');
    v.knownKeys(options, KEYS)
      .number('percentile', options.percentile, 0, 1)
      .check(
        options.percentile === undefined || (options.percentile > 0 && options.percentile < 1),
        `Expected \`percentile\` in (0, 1), got ${String(options.percentile)}`,
      )
      .number('factor', options.factor, 1)
      .duration('floorMs', options.floorMs, { min: 1 })
      .duration('ceilingMs', options.ceilingMs, { min: 1, allowInfinity: true })
      .integer('minSamples', options.minSamples, 1)
      .duration('halfLifeMs', options.halfLifeMs, { min: 1, allowInfinity: true });
    const floor = options.floorMs ?? DERIVED_TIMEOUT_DEFAULTS.floorMs;
    const ceiling = options.ceilingMs ?? DERIVED_TIMEOUT_DEFAULTS.ceilingMs;
    v.check(!(floor > ceiling), `Expected \`floorMs\` ≤ \`ceilingMs\`, got ${floor} > ${ceiling}`);
    v.done();
    this.percentile = options.percentile ?? DERIVED_TIMEOUT_DEFAULTS.percentile;
    this.factor = options.factor ?? DERIVED_TIMEOUT_DEFAULTS.factor;
    this.floorMs = floor;
    this.ceilingMs = ceiling;
    this.minSamples = options.minSamples ?? DERIVED_TIMEOUT_DEFAULTS.minSamples;
    this.latency = new LatencyQuantiles({ halfLifeMs: options.halfLifeMs ?? DERIVED_TIMEOUT_DEFAULTS.halfLifeMs });
  }

  /** The attempt timeout to use for an attempt starting at `nowMs`. */
  timeoutMs(nowMs: number): number {
    if (this.latency.weight(nowMs) < this.minSamples) return this.ceilingMs;
    const q = this.latency.quantile(this.percentile) as number;
    const t = q * this.factor;
    return t < this.floorMs ? this.floorMs : Math.min(t, this.ceilingMs);
  }

  /** A successful attempt took `latencyMs`. */
  recordSuccess(latencyMs: number, nowMs: number): void {
    this.latency.record(latencyMs, nowMs);
  }

  /** An attempt was cut by its timeout of `timeoutMs`. */
  recordTimeout(timeoutMs: number, nowMs: number): void {
    this.latency.record(timeoutMs * TIMED_OUT_SAMPLE_FACTOR, nowMs);
  }
}
