/** Small statistics shared by the benchmark suites. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** One measured figure: the median over runs, and every run's value (so the spread shows). */
export interface Row {
  suite: string;
  name: string;
  /** Median of `runs`. Nanoseconds per call unless `unit` says otherwise. */
  nsPerCall?: number;
  value?: number;
  unit?: string;
  runs: number[];
}

/**
 * `a / b` per run, then the median: each run's two figures were measured side by side under
 * the same machine load, so their ratio is steadier than the ratio of two medians.
 */
export interface Ratio {
  suite: string;
  name: string;
  ratio: number;
  runs: number[];
  /** What the ratio must not exceed, when the project set a target for it. */
  target?: number;
}

export function ratioOf(suite: string, name: string, a: readonly number[], b: readonly number[], target?: number): Ratio {
  const runs = a.map((x, i) => round(x / (b[i] as number), 4));
  const ratio: Ratio = { suite, name, ratio: round(median(runs), 4), runs };
  if (target !== undefined) ratio.target = target;
  return ratio;
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

export function formatRatio(r: Ratio): string {
  const over = (r.ratio - 1) * 100;
  const verdict = r.target === undefined ? '' : r.ratio <= r.target ? '  target met' : '  TARGET MISSED';
  const bound = r.target === undefined ? '' : ` (target ≤ ${r.target})`;
  return `${r.name.padEnd(34)} ${r.ratio.toFixed(3)}  (${over >= 0 ? '+' : ''}${over.toFixed(1)} %)${bound}${verdict}   runs: ${r.runs.map((x) => x.toFixed(3)).join(' ')}`;
}
