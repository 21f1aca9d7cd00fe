/**
 * The success-path cases of cases.ts and budget.ts, in finely interleaved batches (see
 * rounds.ts: every case takes its turn batch by batch, a few ms each), `runs` blocks; reports
 * per case the median over blocks of this process's CPU time and of wall time per call, and
 * for each `peer:X` case its ratio to `kindly:X` per block and the median.
 *
 * Why not mitata's one-case-at-a-time sampling: on a machine shared with other work (load
 * average 15–22 when these figures were taken) the same build measured against itself that
 * way gave per-run ratios from 0.23 to 1.78; interleaved batches and CPU time keep that
 * within a few per cent.
 */
import { budgetCases } from './budget.js';
import { type BenchCase, cases } from './cases.js';
import { interleavedRounds, type TimedCase } from './rounds.js';
import { median, type Ratio, type Row, ratioOf, round } from './stats.js';

/** The targets, in ns per call (median over runs); docs/benchmarks.md says why each. */
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
  const timed: TimedCase[] = all.map((c) => {
    const fn = fns.get(c.name) as () => Promise<number> | number;
    return c.sync
      ? { name: c.name, once: async () => void fn(), onceSync: () => void fn() }
      : { name: c.name, once: async () => void (await fn()) };
  });
  const measured = await interleavedRounds(timed, { blocks: options.runs, batches: 30, ops: 2_000, concurrency: 1 });
  const perRun = new Map<string, number[]>(all.map((c) => [c.name, measured.get(c.name)?.cpu ?? []]));
  const wallOf = (name: string) => measured.get(name)?.wall ?? [];
  const rows: Row[] = all.map((c) => {
    const runs = perRun.get(c.name) ?? [];
    return { suite: 'core:cpu', name: c.name, nsPerCall: round(median(runs)), runs: runs.map((x) => round(x)) };
  });
  for (const c of all) {
    const runs = wallOf(c.name);
    rows.push({ suite: 'core:wall', name: c.name, nsPerCall: round(median(runs)), runs: runs.map((x) => round(x)) });
  }
  const ratios: Ratio[] = [];
  for (const c of all) {
    if (c.name.startsWith('kindly:') || c.name.startsWith('floor:') || !c.name.includes(':')) continue;
    const kindly = c.name.replace(/^[^:]+:/, 'kindly:');
    if (!perRun.has(kindly)) continue;
    // Peer over kindly: how many times cheaper kindly is.
    const r = ratioOf('core:cpu', `${c.name} / ${kindly}`, perRun.get(c.name) ?? [], perRun.get(kindly) ?? []);
    ratios.push(r);
  }
  // kindly over its floor (how much dearer), for the cases that have one.
  for (const c of all) {
    if (!c.name.startsWith('floor:')) continue;
    const kindly = c.name.replace(/^floor:/, 'kindly:');
    if (!perRun.has(kindly)) continue;
    ratios.push(ratioOf('core:cpu', `${kindly} / ${c.name}`, perRun.get(kindly) ?? [], perRun.get(c.name) ?? []));
  }
  return { rows, ratios };
}
