/** Min, median and max of a measurement over several seeds. */
export interface Spread {
  min: number;
  median: number;
  max: number;
}

/**
 * Summarises values measured over several seeds. The median of an even count is the mean of
 * the two middle values. Deterministic measurements give min = median = max.
 */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError('spread() of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const mid = n >> 1;
  const median = n % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return { min: sorted[0]!, median, max: sorted[n - 1]! };
}
