import type { Chart, Marker, Series } from './model.js';

/**
 * Per-bucket counts as a step series in seconds: bucket k holds its count over
 * [k × width, (k + 1) × width), and the line drops to 0 after the last bucket.
 */
export function bucketSeries(name: string, counts: readonly number[], widthMs: number): Series {
  const points: [number, number][] = [];
  for (let k = 0; k < counts.length; k++) points.push([(k * widthMs) / 1000, counts[k]!]);
  points.push([(counts.length * widthMs) / 1000, 0]);
  return { name, points };
}

/**
 * The scenarios' "attempts per second" chart: one step series per variant, counted in
 * one-second buckets, with the scenario's own reference lines.
 */
export function attemptsPerSecondChart(
  title: string,
  rows: readonly { variant: string; perSecond: readonly number[] }[],
  markers: Marker[],
): Chart {
  return {
    title,
    xLabel: 'time (s)',
    yLabel: 'attempts per second',
    series: rows.map((r) => bucketSeries(r.variant, r.perSecond, 1_000)),
    markers,
    steps: true,
  };
}
