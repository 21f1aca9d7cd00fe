/** Min, median and max of a measurement over several seeds (and its mean, from `spread`). */
export interface Spread {
  min: number;
  median: number;
  max: number;
  /** The arithmetic mean (absent in spreads built by hand). */
  mean?: number;
}

/**
 * Summarises values measured over several seeds: min, median, max and mean. The median of an
 * even count is the mean of the two middle values. Deterministic measurements give min = median = max.
 */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError('spread() of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = n >> 1;
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += sorted[i]!;
  return { min: sorted[0]!, median, max: sorted[n - 1]!, mean: sum / n };
}
