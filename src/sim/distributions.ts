import type { Random } from '../random/random.js';

/**
 * Random draws for simulated quantities (latencies, service times, think times). Each takes
 * the `Random` to draw from, so a scenario can keep separate streams per purpose (network
 * vs backoff) and compare strategies on the same network draws.
 */

/** Exponential with the given mean: −mean × ln(1 − u). */
export function exponential(random: Random, mean: number): number {
  return -mean * Math.log(1 - random.next());
}

/** Normal with the given mean and standard deviation (Box–Muller; two draws per sample). */
export function normal(random: Random, mean: number, sd: number): number {
  // 1 − u is in (0, 1], so the logarithm is finite.
  const u = 1 - random.next();
  const v = random.next();
  return mean + sd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/**
 * Log-normal with the given mean and σ of the underlying normal: exp(μ + σZ) with
 * μ = ln(mean) − σ²/2, so that the mean is `mean` whatever σ (σ ≈ 0.5 is a typical
 * service-latency tail: p99 ≈ 2.7 × median).
 */
export function lognormal(random: Random, mean: number, sigma: number): number {
  if (mean <= 0) return 0;
  const mu = Math.log(mean) - (sigma * sigma) / 2;
  return Math.exp(normal(random, mu, sigma));
}

/** The shapes a simulated latency can take. */
export type LatencyDistribution = 'constant' | 'exponential' | 'normal' | 'lognormal';

export const LATENCY_DISTRIBUTIONS: readonly LatencyDistribution[] = ['constant', 'exponential', 'normal', 'lognormal'];

/** A latency: its mean in ms and how it is spread around it. */
export interface Latency {
  /** Mean, ms (≥ 0). */
  ms: number;
  /** @default 'constant' */
  distribution?: LatencyDistribution;
  /**
   * Spread: σ of the underlying normal for `lognormal`, the coefficient of variation
   * (sd / mean) for `normal`; unused otherwise. @default 0.5
   */
  sigma?: number;
  /**
   * Measured latencies, ms: when given, each draw picks one of them uniformly (a bootstrap of
   * what a real server did) and `distribution` and `sigma` are unused; `ms` should be their
   * mean (lower bounds read it).
   */
  samples?: readonly number[];
}

/** Draws one latency ≥ 0 (constant latencies draw nothing from `random`). */
export function sampleLatency(latency: Latency, random: Random): number {
  const ms = latency.ms;
  const samples = latency.samples;
  if (samples !== undefined) return samples[Math.min(samples.length - 1, Math.floor(random.next() * samples.length))]!;
  switch (latency.distribution ?? 'constant') {
    case 'constant':
      return ms;
    case 'exponential':
      return exponential(random, ms);
    case 'normal':
      return Math.max(0, normal(random, ms, (latency.sigma ?? 0.5) * ms));
    default:
      return lognormal(random, ms, latency.sigma ?? 0.5);
  }
}
