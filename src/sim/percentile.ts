/**
 * The nearest-rank percentile of `values[0..length)`: the smallest value with at least a
 * share `q` of the values at or below it. Sorts a copy; `NaN` for no values.
 */
export function percentile(values: ArrayLike<number>, q: number, length: number = values.length): number {
  if (length === 0) return Number.NaN;
  const sorted = Float64Array.from({ length }, (_, i) => values[i]!).sort();
  const rank = Math.min(length, Math.max(1, Math.ceil(q * length)));
  return sorted[rank - 1]!;
}
