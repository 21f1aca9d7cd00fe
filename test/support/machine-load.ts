// What the rest of the machine did while a timed herd ran. The quiet tests time real herds
// whose delays are timers of this process; a herd that shared the cores with other work
// measured the machine, not the pacer. Linux only (`/proc/stat`); elsewhere nothing is known.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { systemClock } from '../../src/time/system-clock.js';

/** `/proc/stat` counts CPU time in ticks of 1/100 s (USER_HZ) on every Linux kernel Node runs on. */
const MS_PER_TICK = 10;

export interface CpuMark {
  atMs: number;
  /** All cores' busy time since boot (user, nice, system, irq, softirq), ms; NaN when unknown. */
  busyMs: number;
  /** Time the hypervisor gave this machine's cores to others since boot, ms; NaN when unknown. */
  stealMs: number;
  /** This process's CPU time (user and system), ms. */
  ownMs: number;
}

export function cpuMark(): CpuMark {
  const { user, system } = process.cpuUsage();
  const own = (user + system) / 1000;
  let busyMs = Number.NaN;
  let stealMs = Number.NaN;
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    if (f.length >= 8 && f.every(Number.isFinite)) {
      const [u, nice, sys, , , irq, softirq, steal] = f as [number, number, number, number, number, number, number, number];
      busyMs = (u + nice + sys + irq + softirq) * MS_PER_TICK;
      stealMs = steal * MS_PER_TICK;
    }
  } catch {
    // Not Linux: nothing known about the rest of the machine.
  }
  return { atMs: systemClock.monotonic(), busyMs, stealMs, ownMs: own };
}

/** What others used between two marks, in cores on average (1: one core busy throughout). */
export interface MachineLoad {
  /** CPU time of every other process on the machine, cores. */
  othersCores: number;
  /** CPU time the hypervisor took from this machine, cores. */
  stealCores: number;
  /**
   * This process's own CPU time, cores: callers, proxy and server of a herd share its one
   * thread, so near 1 the loop was never idle and every timer of the herd ran late.
   */
  ownCores: number;
  /**
   * The longest this process's event loop was held at once, ms (`loopHeldMeter`): callers,
   * proxy and server of a herd all wait on it. Unknown (undefined) where it was not watched.
   */
  loopHeldMs?: number;
}

/**
 * Starts watching how long this process's event loop is held at once; the function returned
 * stops and gives the longest, ms. Sampled every 5 ms: shorter holds read as up to 5 ms.
 */
export function loopHeldMeter(): () => number {
  const delays = monitorEventLoopDelay({ resolution: 5 });
  delays.enable();
  return () => {
    delays.disable();
    return delays.max / 1e6;
  };
}

export function loadBetween(from: CpuMark, to: CpuMark): MachineLoad {
  const ms = Math.max(1, to.atMs - from.atMs);
  return {
    othersCores: Math.max(0, to.busyMs - from.busyMs - (to.ownMs - from.ownMs)) / ms,
    stealCores: Math.max(0, to.stealMs - from.stealMs) / ms,
    ownCores: Math.max(0, to.ownMs - from.ownMs) / ms,
  };
}

/**
 * Others' CPU, in cores over a herd, from which the herd measured the machine. Quiet herds here
 * read 0.00–0.09 (0.00–0.03 under vitest, the runner's own process included). With one other
 * core busy (0.94–1.07), 4 of 63 herds against the spread pool took 1.64–1.81× the bound on its
 * draws, the rest at most 1.14×: the herd's process (callers, proxy and server) ran short of a
 * core, and the search no longer read the pool's successes as slow (traced: rejections back in
 * 11–129 ms, median 73, where the same seed's herd that found its pool met 9–56 ms, median 24).
 */
export const BUSY_OTHERS_CORES = 0.25;
/** The same for CPU time the hypervisor took away (a neighbour on the host). */
export const BUSY_STEAL_CORES = 0.1;

/**
 * A hold of this process's event loop, ms, beyond any the test makes itself, from which a herd
 * measured this process rather than the pacer: its callers, proxy and server all wait while the
 * loop is held (a major GC, a page fault storm). Quiet herds read 6–25 ms (the three timed tests
 * with no hold of their own, alone and in a full CI run).
 */
export const HELD_LOOP_MS = 50;

/**
 * Whether a timed herd measured the machine or its own process rather than the pacer: others
 * took cores, the hypervisor took time, or this process's loop was held `HELD_LOOP_MS` longer
 * than the `plannedHoldMs` the test held it for on purpose.
 */
export function herdDisturbed(load: MachineLoad, plannedHoldMs = 0): boolean {
  return (
    load.othersCores >= BUSY_OTHERS_CORES ||
    load.stealCores >= BUSY_STEAL_CORES ||
    (load.loopHeldMs ?? 0) >= plannedHoldMs + HELD_LOOP_MS
  );
}

export function describeLoad(load: MachineLoad): string {
  const held = load.loopHeldMs === undefined ? '' : `, its loop held ≤ ${Math.round(load.loopHeldMs)} ms`;
  return `others used ${load.othersCores.toFixed(2)} cores, steal ${load.stealCores.toFixed(2)}, this process ${load.ownCores.toFixed(2)}${held}`;
}

/**
 * Timed herds a quiet test may run again, over its whole run, when they were disturbed while
 * they ran (`herdDisturbed`). A herd run again is said so in the log with what disturbed it;
 * once none are left, a disturbed herd counts as it came out, and its checks apply as to any
 * other.
 */
export class BusyReruns {
  private left: number;
  private readonly log: (line: string) => void;
  private readonly plannedHoldMs: number;

  /**
   * @param options.left reruns allowed over the test's run (three: a few seconds of herds at most)
   * @param options.log where each rerun is said (the test's output; a test of this class reads it)
   * @param options.plannedHoldMs how long the test itself holds the loop in each herd, ms
   */
  constructor(options: { left?: number; log?: (line: string) => void; plannedHoldMs?: number } = {}) {
    this.left = options.left ?? 3;
    this.log = options.log ?? console.log;
    this.plannedHoldMs = options.plannedHoldMs ?? 0;
  }

  async run<T extends { load: MachineLoad }>(what: string, once: () => Promise<T>): Promise<T> {
    for (;;) {
      const result = await once();
      if (!herdDisturbed(result.load, this.plannedHoldMs) || this.left === 0) return result;
      this.left--;
      this.log(`[figure] ${what}: ${describeLoad(result.load)} while it ran; run again (${this.left} more allowed)`);
    }
  }
}
