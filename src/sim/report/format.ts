import type { Spread } from '../summary.js';

/**
 * Milliseconds as seconds for people, with as many decimals as the value needs (at most 3):
 * 10000 → "10.0 s", 1850 → "1.85 s", `Infinity` → "never".
 */
export function seconds(ms: number): string {
  if (!Number.isFinite(ms)) return 'never';
  const decimals = ms % 100 === 0 ? 1 : ms % 10 === 0 ? 2 : 3;
  return `${(ms / 1000).toFixed(decimals)} s`;
}

/** A count or ratio with at most `decimals` decimals, trailing zeros dropped. */
export function number(value: number, decimals = 2): string {
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '—';
  return String(Number(value.toFixed(decimals)));
}

/** "median (min–max)", or just the value when all three are equal. */
export function spreadText(
  s: Spread,
  show: (v: number) => string = (v) => number(v, 1),
  showBound: (v: number) => string = show,
): string {
  if (s.min === s.max) return show(s.median);
  return `${show(s.median)} (${showBound(s.min)}–${showBound(s.max)})`;
}

/** Milliseconds as seconds without the unit, for ranges next to a value that has it. */
export function bareSeconds(ms: number): string {
  return seconds(ms).replace(/ s$/, '');
}

/** Replaces non-finite numbers by `null` so the value survives `JSON.stringify` faithfully. */
export function jsonSpread(s: Spread): { min: number | null; median: number | null; max: number | null } {
  const f = (v: number) => (Number.isFinite(v) ? v : null);
  return { min: f(s.min), median: f(s.median), max: f(s.max) };
}
