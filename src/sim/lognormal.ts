import type { Random } from '../random/random.js';

/**
 * A log-normal latency, ms: `median × e^(σ·Z)` with Z standard normal (Box–Muller, two draws
 * from `random`). Service times are skewed this way: most near the median, a long right tail
 * (p99 = median × e^(2.326σ)).
 */
export function lognormal(random: Random, medianMs: number, sigma: number): number {
  if (sigma === 0) return medianMs;
  const u = 1 - random.next();
  const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.next());
  return medianMs * Math.exp(sigma * z);
}

/** The mean of that log-normal: `median × e^(σ²/2)`. */
export function lognormalMean(medianMs: number, sigma: number): number {
  return medianMs * Math.exp((sigma * sigma) / 2);
}
