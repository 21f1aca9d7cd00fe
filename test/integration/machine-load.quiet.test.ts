// The meter the quiet tests read to tell a busy machine from a slow pacer: another process's
// CPU is counted as the machine's, this process's own is not, and a herd is run again only
// while herds to spare are left.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/time/system-clock.js';
import {
  BUSY_OTHERS_CORES,
  BusyReruns,
  type CpuMark,
  cpuMark,
  herdDisturbed,
  loadBetween,
  loopHeldMeter,
  type MachineLoad,
} from '../support/machine-load.js';

const linux = existsSync('/proc/stat');

describe('the machine-load meter of the quiet tests', () => {
  it('counts what others used between two marks, less this process, in cores', () => {
    const from: CpuMark = { atMs: 1_000, busyMs: 50_000, stealMs: 10, ownMs: 200 };
    const to: CpuMark = { atMs: 2_000, busyMs: 51_500, stealMs: 110, ownMs: 900 };
    expect(loadBetween(from, to)).toEqual({ othersCores: 0.8, stealCores: 0.1, ownCores: 0.7 });
    // The kernel's ticks are coarser than this process's own count: never below zero.
    expect(loadBetween(from, { ...to, busyMs: 50_600 }).othersCores).toBe(0);
  });

  it.runIf(linux)('reads another process busy for 600 ms as the machine busy', async () => {
    const from = cpuMark();
    const child = spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end);']);
    await once(child, 'exit');
    const load = loadBetween(from, cpuMark());
    expect(load.othersCores).toBeGreaterThanOrEqual(0.5);
    expect(herdDisturbed(load)).toBe(true);
  });

  it.runIf(linux)("does not count this process's own work", () => {
    const from = cpuMark();
    const end = performance.now() + 500;
    while (performance.now() < end) {
      // busy in this process, as a herd's server, proxy and callers are
    }
    const load = loadBetween(from, cpuMark());
    expect(load.othersCores).toBeLessThan(BUSY_OTHERS_CORES);
  });

  it("reads this process's event loop held for 120 ms as a disturbed herd, unless the test held it on purpose", async () => {
    const held = loopHeldMeter();
    // The meter takes its first sample as its start, not as a hold: a herd's loop turns first.
    await systemClock.sleep(20);
    const end = performance.now() + 120;
    while (performance.now() < end) {
      // a major GC or a long task in the herd's own process
    }
    // The meter's timer reads the hold when the loop turns again.
    await systemClock.sleep(10);
    const load: MachineLoad = { othersCores: 0, stealCores: 0, ownCores: 0.1, loopHeldMs: held() };
    // Sampled every 5 ms: the hold reads at most that much short.
    expect(load.loopHeldMs).toBeGreaterThanOrEqual(114);
    expect(herdDisturbed(load)).toBe(true);
    expect(herdDisturbed(load, 120)).toBe(false);
    expect(herdDisturbed({ ...load, loopHeldMs: 20 })).toBe(false);
  });

  it('runs a herd again while the machine was busy, as long as reruns are left, then keeps what came', async () => {
    const busy: MachineLoad = { othersCores: 1, stealCores: 0, ownCores: 0.5 };
    const quiet: MachineLoad = { othersCores: 0.02, stealCores: 0, ownCores: 0.5 };
    const loads = [busy, busy, quiet];
    let runs = 0;
    const said: string[] = [];
    const reruns = new BusyReruns({ left: 3, log: (line) => said.push(line) });
    const first = await reruns.run('seed 1', async () => {
      runs++;
      return { load: loads[runs - 1] as MachineLoad, run: runs };
    });
    expect(first).toEqual({ load: quiet, run: 3 });
    // One rerun left of three: the next busy herd runs once more, and the one after counts.
    const second = await reruns.run('seed 2', async () => ({ load: busy, run: ++runs }));
    expect(second.run).toBe(5);
    const third = await reruns.run('seed 3', async () => ({ load: busy, run: ++runs }));
    expect(third.run).toBe(6);
    expect(said).toEqual([
      '[figure] seed 1: others used 1.00 cores, steal 0.00, this process 0.50 while it ran; run again (2 more allowed)',
      '[figure] seed 1: others used 1.00 cores, steal 0.00, this process 0.50 while it ran; run again (1 more allowed)',
      '[figure] seed 2: others used 1.00 cores, steal 0.00, this process 0.50 while it ran; run again (0 more allowed)',
    ]);
  });
});
