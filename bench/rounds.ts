import { median } from './stats.js';

/** One timed case: `once` performs one operation (one HTTP request, read to the end). */
export interface TimedCase {
  name: string;
  once: () => Promise<void>;
}

export interface RoundsOptions {
  /** Blocks: each gives one figure per case (the median of its batches); one warm-up block runs first. */
  blocks: number;
  /** Batches per case per block, rounded up to whole cycles of `balancedOrders`. */
  batches: number;
  /** Operations per batch. */
  ops: number;
  /** Operations in flight at once (1: sequential). */
  concurrency: number;
}

export interface Measured {
  /** Wall time, ns per operation, one figure per block. */
  wall: number[];
  /** This process's CPU time (user + system), ns per operation, one figure per block. */
  cpu: number[];
}

/**
 * The orders in which `n` cases take their turns: a Williams design, in which every case
 * follows every other case equally often (once per n turns for an even n, twice per 2n for an
 * odd one), and takes every position equally often.
 *
 * Why not a rotation: rotating one order keeps its neighbours — each case always follows the
 * same one. A case run right after similar code (the HTTP floor after bare `fetch`) finds the
 * CPU's caches warm, one after different code pays for the misses, and the first request of
 * each batch carries that. In the HTTP bench, putting cockatiel's case before kindly's moved
 * `kindly / floor` from +4–12 % to +10–21 % and read `.call()` around the floor's own request
 * up to 16 % below the floor (Node 20, 2026-12-03): order, not code.
 */
export function balancedOrders(n: number): number[][] {
  if (!Number.isInteger(n) || n < 1) throw new Error(`balancedOrders needs a whole number of cases, got ${n}`);
  // First order: 0, 1, n−1, 2, n−2, …; the others add k (mod n).
  const first: number[] = [];
  for (let j = 0, low = 0, high = n - 1; j < n; j++) first.push(j === 0 ? 0 : j % 2 === 1 ? ++low : high--);
  const orders = Array.from({ length: n }, (_, k) => first.map((c) => (c + k) % n));
  // With an odd n each order's neighbours are one-sided; its reverse supplies the other side
  // (one case has no neighbours: its one order).
  return n % 2 === 0 || n === 1 ? orders : [...orders, ...orders.map((o) => [...o].reverse())];
}

/**
 * Finely interleaved batches: the cases take turns batch by batch (a few ms each, in the
 * orders of `balancedOrders`), so that load from elsewhere on a shared machine lands on every
 * case alike, and no case always runs after the same neighbour; each block's figure per case
 * is the median of its batches, which drops the batches that a burst of outside load hit. Both
 * wall time and this process's CPU time are kept: the client's CPU time is what a wrapper
 * adds, and it moves less than wall time when other processes compete for the cores.
 */
export async function interleavedRounds(cases: readonly TimedCase[], options: RoundsOptions): Promise<Map<string, Measured>> {
  const result = new Map<string, Measured>(cases.map((c) => [c.name, { wall: [], cpu: [] }]));
  const orders = balancedOrders(cases.length);
  for (let block = -1; block < options.blocks; block++) {
    const wall = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const cpu = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const turns = Math.ceil(options.batches / orders.length) * orders.length;
    for (let b = 0; b < turns; b++) {
      for (const index of orders[b % orders.length] as number[]) {
        const c = cases[index] as TimedCase;
        const t = await timeBatch(c.once, options.ops, options.concurrency);
        wall.get(c.name)?.push(t.wallNs / options.ops);
        cpu.get(c.name)?.push(t.cpuNs / options.ops);
      }
    }
    if (block < 0) continue;
    for (const c of cases) {
      const m = result.get(c.name) as Measured;
      m.wall.push(median(wall.get(c.name) ?? []));
      m.cpu.push(median(cpu.get(c.name) ?? []));
    }
  }
  return result;
}

async function timeBatch(
  once: () => Promise<void>,
  ops: number,
  concurrency: number,
): Promise<{ wallNs: number; cpuNs: number }> {
  let started = 0;
  const worker = async () => {
    while (started < ops) {
      started++;
      await once();
    }
  };
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  if (concurrency === 1) await worker();
  else await Promise.all(Array.from({ length: Math.min(concurrency, ops) }, worker));
  const wallNs = Number(process.hrtime.bigint() - t0);
  const cpu = process.cpuUsage(cpu0);
  return { wallNs, cpuNs: (cpu.user + cpu.system) * 1000 };
}
