import { OptionsValidator } from '../options/validate.js';

export interface LatencyQuantilesOptions {
  /**
   * Age at which a sample counts half as much as a new one, ms. Shorter follows a change
   * sooner; longer gives steadier estimates. @default 10_000
   */
  halfLifeMs?: number;
}

export const LATENCY_QUANTILES_DEFAULTS = {
  halfLifeMs: 10_000,
} as const satisfies LatencyQuantilesOptions;

/** Smallest latency told apart from zero, ms (anything below lands in the first bucket). */
const MIN_MS = 0.01;
/** Ratio between bucket bounds: a quantile is reported within ±2.5 % of a recorded value. */
const GROWTH = 1.05;
const LOG_GROWTH = Math.log(GROWTH);
/** Buckets up to ~2.8 hours; longer samples land in the last one. */
const BUCKETS = 450;
/** Weights are rescaled before they can lose precision (2^40 ≈ 40 half-lives of growth). */
const RESCALE_AT = 2 ** 40;

/**
 * A streaming latency quantile estimate with bounded memory and exponential decay.
 *
 * Samples go into 450 log-spaced buckets (bounds grow by 5 %, from 0.01 ms to ~2.8 h), so
 * memory is fixed whatever the rate, and a quantile is exact to within the width of one
 * bucket (±2.5 % with the linear interpolation inside it). Each sample's weight halves every
 * `halfLifeMs`:
 *
 *     weight(sample at t, read at now) = 2^(−(now − t) / halfLifeMs)
 *
 * implemented without touching old buckets: a new sample is added with weight
 * 2^((t − epoch) / halfLife), which is the same ratio to the older ones; everything is
 * rescaled now and then so the numbers stay small. `record` is O(1); `quantile` is O(buckets).
 *
 * Sans-IO: time is the caller's monotonic ms. Samples should arrive in non-decreasing time
 * order (an earlier one is treated as happening at the latest time seen).
 */
export class LatencyQuantiles {
  readonly halfLifeMs: number;
  private readonly weights = new Float64Array(BUCKETS);
  private total = 0;
  private epoch = Number.NaN;
  private latest = Number.NEGATIVE_INFINITY;
  private recorded = 0;

  constructor(options: LatencyQuantilesOptions = {}) {
    new OptionsValidator('latency quantiles')
      .knownKeys(options, ['halfLifeMs'])
      .duration('halfLifeMs', options.halfLifeMs, { min: 1, allowInfinity: true })
      .done();
    this.halfLifeMs = options.halfLifeMs ?? LATENCY_QUANTILES_DEFAULTS.halfLifeMs;
  }

  /** Samples recorded since creation (not decayed). */
  get count(): number {
    return this.recorded;
  }

  /** Records one latency (ms, ≥ 0; NaN and negative values are ignored). */
  record(latencyMs: number, nowMs: number): void {
    if (!(latencyMs >= 0)) return;
    if (nowMs > this.latest) this.latest = nowMs;
    const now = this.latest;
    if (Number.isNaN(this.epoch)) this.epoch = now;
    let w = this.scale(now);
    if (w > RESCALE_AT) {
      this.rescale(now);
      w = 1;
    }
    this.weights[bucketOf(latencyMs)]! += w;
    this.total += w;
    this.recorded++;
  }

  /**
   * The decayed number of samples: how many fresh samples the estimate is worth at `nowMs`
   * (0 before any sample).
   */
  weight(nowMs: number): number {
    if (this.total === 0) return 0;
    return this.total / this.scale(Math.max(nowMs, this.latest));
  }

  /**
   * The latency below which a share `q` (in [0, 1]) of the decayed samples fall, ms;
   * `undefined` before any sample.
   */
  quantile(q: number): number | undefined {
    if (this.total === 0) return undefined;
    const target = Math.min(Math.max(q, 0), 1) * this.total;
    const weights = this.weights;
    let below = 0;
    let last = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const w = weights[i]!;
      if (w === 0) continue;
      last = i;
      if (below + w >= target) {
        // Linear interpolation inside the bucket, by the share of its weight needed.
        const within = (target - below) / w;
        const lower = lowerBound(i);
        return lower + (lowerBound(i + 1) - lower) * within;
      }
      below += w;
    }
    return lowerBound(last + 1);
  }

  /** Forgets every sample. */
  reset(): void {
    this.weights.fill(0);
    this.total = 0;
    this.epoch = Number.NaN;
  }

  private scale(now: number): number {
    return this.halfLifeMs === Number.POSITIVE_INFINITY ? 1 : 2 ** ((now - this.epoch) / this.halfLifeMs);
  }

  private rescale(now: number): void {
    const factor = 1 / this.scale(now);
    const weights = this.weights;
    let total = 0;
    for (let i = 0; i < BUCKETS; i++) {
      const w = weights[i]! * factor;
      // Weights too small to matter are dropped rather than kept as denormals.
      weights[i] = w < 1e-200 ? 0 : w;
      total += weights[i]!;
    }
    this.total = total;
    this.epoch = now;
  }
}

function bucketOf(ms: number): number {
  if (ms <= MIN_MS) return 0;
  const i = Math.floor(Math.log(ms / MIN_MS) / LOG_GROWTH) + 1;
  return i < BUCKETS ? i : BUCKETS - 1;
}

/** Bucket 0 holds [0, MIN_MS]; bucket i ≥ 1 holds [MIN_MS·g^(i−1), MIN_MS·g^i). */
function lowerBound(i: number): number {
  return i === 0 ? 0 : MIN_MS * GROWTH ** (i - 1);
}
