/**
 * The success-path cases of cases.ts and budget.ts, measured with mitata `runs` times over
 * (each run measures every case once, in an order rotated per run); reports the median per
 * case and, for each `peer:X` case, the ratio to `kindly:X` per run and its median.
 */
import { bench, do_not_optimize, run } from 'mitata';
import { budgetCases } from './budget.js';
import { type BenchCase, cases } from './cases.js';
import { median, type Ratio, type Row, ratioOf, round } from './stats.js';

/** Targets from the performance issue, in ns per call (median over runs). */
export const CORE_TARGETS: Record<string, number> = {
  'kindly:retry+timeout': 1_000,
  'kindly:signal': 1_000,
  'kindly:full': 350,
};
/** Least factor by which kindly must beat the peer's equivalent. */
export const PEER_FACTOR: Record<string, number> = {
  'cockatiel:signal': 8,
  'cockatiel:retry+timeout': 10,
  'cockatiel:full': 10,
};

export async function runCore(options: { runs: number; filter?: string }): Promise<{ rows: Row[]; ratios: Ratio[] }> {
  const all = [...cases, ...budgetCases].filter((c) => options.filter === undefined || c.name.includes(options.filter));
  const fns = new Map<string, Awaited<ReturnType<BenchCase['setup']>>>();
  for (const c of all) {
    const fn = await c.setup();
    // Sanity: every case must really run the operation and resolve with its value.
    if ((await fn()) !== 42) throw new Error(`bench case ${c.name} did not return the operation's value`);
    fns.set(c.name, fn);
  }
  const perRun = new Map<string, number[]>(all.map((c) => [c.name, []]));
  for (let r = 0; r < options.runs; r++) {
    for (let i = 0; i < all.length; i++) {
      const c = all[(i + r) % all.length] as BenchCase;
      const fn = fns.get(c.name) as () => Promise<number> | number;
      if (c.sync) bench(c.name, () => do_not_optimize(fn()));
      else bench(c.name, async () => do_not_optimize(await fn()));
    }
    const result = await run({ format: 'quiet', throw: true });
    for (const b of result.benchmarks) perRun.get(b.alias)?.push(b.runs[0]?.stats?.avg ?? Number.NaN);
  }
  const rows: Row[] = all.map((c) => {
    const runs = perRun.get(c.name) ?? [];
    return { suite: 'core', name: c.name, nsPerCall: round(median(runs)), runs: runs.map((x) => round(x)) };
  });
  const ratios: Ratio[] = [];
  for (const c of all) {
    if (c.name.startsWith('kindly:') || !c.name.includes(':')) continue;
    const kindly = c.name.replace(/^[^:]+:/, 'kindly:');
    if (!perRun.has(kindly)) continue;
    // Peer over kindly: how many times cheaper kindly is.
    const r = ratioOf('core', `${c.name} / ${kindly}`, perRun.get(c.name) ?? [], perRun.get(kindly) ?? []);
    ratios.push(r);
  }
  return { rows, ratios };
}
