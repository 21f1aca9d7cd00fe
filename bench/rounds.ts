import { median } from './stats.js';

/** One timed case: `once` performs one operation (one HTTP request, read to the end). */
export interface TimedCase {
  name: string;
  once: () => Promise<void>;
  /**
   * The same operation when it is synchronous (policy bookkeeping): a batch then calls it in a
   * plain loop, without the promise and the `await` per call that `once` costs (~40–50 ns,
   * more than the bookkeeping itself).
   */
  onceSync?: () => void;
}

export interface RoundsOptions {
  /** Blocks: each gives one figure per case (the median of its batches); one warm-up block runs first. */
  blocks: number;
  /** Batches per case per block, rounded up to whole cycles of `balancedCycle`. */
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
 * The order in which `n` cases take their turns, as one cycle run over and over: every case
 * comes right after every other case exactly once per cycle, the step from the cycle's end
 * back to its start included, and never right after itself (an Eulerian circuit of the
 * complete directed graph on the cases, n × (n − 1) turns; one turn for one case).
 *
 * Why not a rotation: rotating one order keeps its neighbours — each case always follows the
 * same one. A case run right after similar code (the HTTP floor after bare `fetch`) finds the
 * CPU's caches warm, one after different code pays for the misses, and the first request of
 * each batch carries that. In the HTTP bench, putting cockatiel's case before kindly's moved
 * `kindly / floor` from +4–12 % to +10–21 % and read `.call()` around the floor's own request
 * up to 16 % below the floor (Node 20, 2026-12-03): order, not code.
 *
 * Why not separate balanced orders (a Williams design) run back to back: each order is
 * balanced on its own, but the step from one order's last case to the next order's first adds
 * pairs of its own — with six cases some pairs came twice as often as others, with three a
 * case followed itself in a sixth of its turns while another never did.
 */
export function balancedCycle(n: number): number[] {
  if (!Number.isInteger(n) || n < 1) throw new Error(`balancedCycle needs a whole number of cases, got ${n}`);
  if (n === 1) return [0];
  // Hierholzer's walk: leave each case by its next unused step, back up when stuck.
  const nextStep = Array.from({ length: n }, () => 1);
  const stack = [0];
  const circuit: number[] = [];
  while (stack.length > 0) {
    const at = stack[stack.length - 1] as number;
    const k = nextStep[at] as number;
    if (k < n) {
      nextStep[at] = k + 1;
      stack.push((at + k) % n);
    } else circuit.push(stack.pop() as number);
  }
  // The walk ends where it began: drop the repeated start, so the cycle closes on itself.
  return circuit.reverse().slice(0, -1);
}

/**
 * Finely interleaved batches: the cases take turns batch by batch (a few ms each, in the
 * order of `balancedCycle`), so that load from elsewhere on a shared machine lands on every
 * case alike, and every case runs after every other equally often; each block's figure per case
 * is the median of its batches, which drops the batches that a burst of outside load hit. Both
 * wall time and this process's CPU time are kept: the client's CPU time is what a wrapper
 * adds, and it moves less than wall time when other processes compete for the cores.
 */
export async function interleavedRounds(cases: readonly TimedCase[], options: RoundsOptions): Promise<Map<string, Measured>> {
  const result = new Map<string, Measured>(cases.map((c) => [c.name, { wall: [], cpu: [] }]));
  const cycle = balancedCycle(cases.length);
  // Each case takes `cycle.length / n` turns per cycle; a block runs whole cycles.
  const turnsPerCycle = Math.max(1, cases.length - 1);
  const cycles = Math.ceil(options.batches / turnsPerCycle);
  for (let block = -1; block < options.blocks; block++) {
    const wall = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    const cpu = new Map<string, number[]>(cases.map((c) => [c.name, []]));
    for (let turn = 0; turn < cycles * cycle.length; turn++) {
      const c = cases[cycle[turn % cycle.length] as number] as TimedCase;
      const t =
        c.onceSync === undefined
          ? await timeBatch(c.once, options.ops, options.concurrency)
          : timeSyncBatch(c.onceSync, options.ops);
      wall.get(c.name)?.push(t.wallNs / options.ops);
      cpu.get(c.name)?.push(t.cpuNs / options.ops);
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
  const start = startMeasure();
  if (concurrency === 1) await worker();
  else await Promise.all(Array.from({ length: Math.min(concurrency, ops) }, worker));
  return start();
}

function timeSyncBatch(onceSync: () => void, ops: number): { wallNs: number; cpuNs: number } {
  const start = startMeasure();
  for (let i = 0; i < ops; i++) onceSync();
  return start();
}

/** Starts the clocks; the returned function reads wall and this process's CPU time since. */
function startMeasure(): () => { wallNs: number; cpuNs: number } {
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  return () => {
    const wallNs = Number(process.hrtime.bigint() - t0);
    const cpu = process.cpuUsage(cpu0);
    return { wallNs, cpuNs: (cpu.user + cpu.system) * 1000 };
  };
}
