import { median } from './stats.js';

/** One timed case: `once` performs one operation (one HTTP request, read to the end). */
export interface TimedCase {
  name: string;
  once: () => Promise<void>;
}

export interface RoundsOptions {
  /** Blocks: each gives one figure per case (the median of its batches); one warm-up block runs first. */
  blocks: number;
  /** Batches per case per block. */
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
 * Finely interleaved batches: the cases take turns batch by batch (a few ms each, in an order
 * rotated every turn), so that load from elsewhere on a shared machine lands on every case
 * alike; each block's figure per case is the median of its batches, which drops the batches
 * that a burst of outside load hit. Both wall time and this process's CPU time are kept: the
 * client's CPU time is what a wrapper adds, and it moves less than wall time when other
 * processes compete for the cores.
 */
export async function interleavedRounds(cases: readonly TimedCase[], options: RoundsOptions): Promise<Map<string, Measured>> {
  const result = new Map<string, Measured>(cases.map((c) => [c.name, { wall: [], cpu: [] }]));
  for (let block = -1; block < options.blocks; block++) {
    const wall = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const cpu = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let b = 0; b < options.batches; b++) {
      for (let i = 0; i < cases.length; i++) {
        const c = cases[(i + b) % cases.length] as TimedCase;
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
