import type { Series } from './model.js';

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
