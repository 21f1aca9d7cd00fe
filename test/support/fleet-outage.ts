import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FleetBudgetRun } from '../../src/sim/fleet.js';

const childPath = fileURLToPath(new URL('../fixtures/fleet-outage-child.ts', import.meta.url));

/** What the simulator's outage reports (`runFleetBudget`), from real processes, and more. */
export interface FleetOutageRun extends FleetBudgetRun {
  /** Whether every shared process still had its store at the end (always false unshared). */
  storeAvailable: boolean;
  /** Why a process's store went down, each time one did (then its budget was its own a while). */
  storeDowns: string[];
  /** Processes whose store went down at least once. */
  processesWithStoreDown: number;
  /** Each process's attempts per call, in start order. */
  perProcess: number[];
}

interface ChildReport {
  requests: number;
  attempts: number;
  refused: number;
  storeAvailable: boolean;
  storeDowns: string[];
}

/**
 * Real processes (`test/fixtures/fleet-outage-child.ts`), each starting `rate` calls a second
 * for `durationMs` to a callee that is down, all from the same instant; with `shared`, their
 * retry budgets are one fleet budget in the redis-server on `redisPort`. A child that exits
 * non-zero (a crash, an unhandled rejection) rejects the run.
 */
export async function runFleetOutage(setup: {
  processes: number;
  rate: number;
  durationMs: number;
  shared: boolean;
  redisPort: number;
  prefix: string;
  /** The store's `timeoutMs` in each process (its default when left out). */
  storeTimeoutMs?: number;
}): Promise<FleetOutageRun> {
  const children = await Promise.all(
    Array.from({ length: setup.processes }, () => {
      const child = fork(childPath, {
        execArgv: ['--import', 'tsx'],
        env: {
          ...process.env,
          REDIS_PORT: String(setup.redisPort),
          PREFIX: setup.prefix,
          SHARED: setup.shared ? '1' : '0',
          RATE: String(setup.rate),
          DURATION_MS: String(setup.durationMs),
          STORE_TIMEOUT_MS: setup.storeTimeoutMs === undefined ? '' : String(setup.storeTimeoutMs),
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      return new Promise<typeof child>((resolve, reject) => {
        child.once('message', () => resolve(child));
        child.once('exit', (code) => reject(new Error(`outage child exited with ${code} before it was ready`)));
      });
    }),
  );
  // Half a second ahead: every child has its message and has armed its timer by then.
  const startAt = performance.timeOrigin + performance.now() + 500;
  const reports = await Promise.all(
    children.map(
      (child) =>
        new Promise<ChildReport>((resolve, reject) => {
          let report: ChildReport | undefined;
          child.once('message', (m) => (report = m as ChildReport));
          child.once('exit', (code) =>
            code === 0 && report !== undefined ? resolve(report) : reject(new Error(`outage child exited with ${code}`)),
          );
          child.send({ startAt });
        }),
    ),
  );
  const requests = reports.reduce((sum, r) => sum + r.requests, 0);
  const attempts = reports.reduce((sum, r) => sum + r.attempts, 0);
  return {
    processes: setup.processes,
    shared: setup.shared,
    requests,
    attempts,
    amplification: attempts / requests,
    refused: reports.reduce((sum, r) => sum + r.refused, 0),
    storeAvailable: setup.shared && reports.every((r) => r.storeAvailable),
    storeDowns: reports.flatMap((r) => r.storeDowns),
    processesWithStoreDown: reports.filter((r) => r.storeDowns.length > 0).length,
    perProcess: reports.map((r) => r.attempts / r.requests),
  };
}
