/**
 * Memory, measured as retained heap plus retained `ArrayBuffer` contents (GC forced before and
 * after; run with --expose-gc, as `npm run bench:memory` does). The second matters: a typed
 * array's numbers live outside V8's heap (`heapUsed` does not count them), and the pacer's
 * delivery-rate windows are typed arrays.
 * - per downstream: N downstreams built and kept, each having made one call (so its budget
 *   and, for the full pipeline, its first lane exist), bytes per downstream;
 * - per lane: one downstream whose calls use N different keys, bytes per key (a lane with
 *   breaker + bulkhead + pacer, plus that key's retry budget when the budget key follows it);
 * - cockatiel's circuit breaker + bulkhead + retry policies side by side, as an anchor;
 * - one retry budget after 1,000 / 100,000 / 1,000,000 requests in its window (flat: a ring
 *   of bucket counters, not a timestamp per request).
 */
import { execFileSync } from 'node:child_process';
import { bulkhead, ConsecutiveBreaker, circuitBreaker, handleAll, retry, wrap } from 'cockatiel';
import { downstream } from '../dist/index.js';
import { RetryBudget } from '../dist/policies.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const collect = gc;

/** Targets in bytes (justified in docs/benchmarks.md). */
export const MEMORY_TARGETS = { downstream: 8 * 1024, fullDownstream: 16 * 1024, lane: 4 * 1024 } as const;

const operation = async () => 42;
const N = 10_000;

/** What the process holds: V8's heap and, outside it, the contents of every `ArrayBuffer`. */
function retained(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

async function retainedPer(build: () => Promise<unknown> | unknown, count: number): Promise<number> {
  // A throwaway pass first, so that compiled code and feedback are not counted per object.
  for (let i = 0; i < 200; i++) await build();
  collect();
  collect();
  const before = retained();
  const keep: unknown[] = [];
  for (let i = 0; i < count; i++) keep.push(await build());
  collect();
  collect();
  const bytes = retained() - before;
  if (keep.length !== count) throw new Error('unreachable');
  return bytes / count;
}

const FULL = {
  retry: { maxAttempts: 3 },
  attemptTimeoutMs: 10_000,
  budget: {},
  breaker: {},
  bulkhead: { maxConcurrent: 1_000 },
  pacing: {},
} as const;

let seq = 0;

/** Each case runs in a process of its own, so that no case's garbage is counted in another's. */
const CASES: Record<string, { title: string; target?: number; bytes: () => Promise<number> }> = {
  downstream: {
    title: 'downstream (retry + attempt timeout + budget), after one call',
    target: MEMORY_TARGETS.downstream,
    bytes: () =>
      retainedPer(async () => {
        const api = downstream(`mem-${seq++}`);
        await api.call(operation);
        return api;
      }, N),
  },
  full: {
    title: 'downstream, full pipeline, after one call (one lane)',
    target: MEMORY_TARGETS.fullDownstream,
    bytes: () =>
      retainedPer(async () => {
        const api = downstream(`mem-full-${seq++}`, FULL);
        await api.call(operation);
        return api;
      }, N),
  },
  lane: {
    title: 'lane (breaker + bulkhead + pacer), per extra key',
    target: MEMORY_TARGETS.lane,
    bytes: async () => {
      const api = downstream('mem-lanes', { ...FULL, maxKeys: 4 * N });
      await api.call(operation);
      return retainedPer(() => api.call(operation, { key: `k${seq++}` }), N);
    },
  },
  laneBudget: {
    title: 'lane + its own retry budget, per extra key',
    bytes: async () => {
      const api = downstream('mem-lanes', { ...FULL, maxKeys: 4 * N });
      await api.call(operation);
      return retainedPer(() => {
        const key = `k${seq++}`;
        return api.call(operation, { key, budgetKey: key });
      }, N);
    },
  },
  cockatiel: {
    title: 'cockatiel: wrap(retry, circuitBreaker, bulkhead), for comparison',
    bytes: () =>
      retainedPer(
        () =>
          wrap(
            retry(handleAll, { maxAttempts: 2 }),
            circuitBreaker(handleAll, { halfOpenAfter: 5_000, breaker: new ConsecutiveBreaker(5) }),
            bulkhead(1_000),
          ),
        N,
      ),
  },
};

const BUDGET_EVENTS = [1_000, 100_000, 1_000_000];
const BUDGETS_PER_SAMPLE = 20;
const BUDGET_SAMPLES = 7;

/**
 * Heap held by one budget after `events` requests (and as many retry attempts) in its window:
 * the median of several samples of 20 budgets each, all kept alive. One sample alone moved by
 * ±2–3 KB per budget between runs (even below zero): V8's heap after a forced GC still varies
 * by tens of KB, spread over only 20 objects.
 */
function budgetBytes(events: number): number {
  // A throwaway pass first, so that compiled code and feedback are not counted as the budget's.
  fill(new RetryBudget({ windowMs: 10_000 }), events);
  const kept: RetryBudget[][] = [];
  const samples: number[] = [];
  for (let s = 0; s < BUDGET_SAMPLES; s++) {
    collect();
    collect();
    const before = retained();
    const budgets: RetryBudget[] = [];
    for (let k = 0; k < BUDGETS_PER_SAMPLE; k++) budgets.push(fill(new RetryBudget({ windowMs: 10_000 }), events));
    collect();
    collect();
    samples.push((retained() - before) / BUDGETS_PER_SAMPLE);
    kept.push(budgets);
  }
  if (kept.length !== BUDGET_SAMPLES) throw new Error('unreachable');
  samples.sort((a, b) => a - b);
  return Math.round(samples[Math.floor(BUDGET_SAMPLES / 2)] as number);
}

function fill(budget: RetryBudget, events: number): RetryBudget {
  for (let i = 0; i < events; i++) {
    const now = (i / events) * 9_000;
    budget.recordRequest(now);
    budget.tryRetry(now);
  }
  return budget;
}

const budgetArg = process.argv.find((a) => a.startsWith('--budget='));
if (budgetArg !== undefined) {
  process.stdout.write(`${budgetBytes(Number(budgetArg.slice('--budget='.length)))}\n`);
  process.exit(0);
}

const only = process.argv.find((a) => a.startsWith('--case='))?.slice('--case='.length);
if (only !== undefined) {
  const c = CASES[only];
  if (c === undefined) throw new Error(`unknown case ${only}`);
  process.stdout.write(`${JSON.stringify(await c.bytes())}\n`);
  process.exit(0);
}

const rows: Array<{ name: string; bytes: number; target?: number }> = [];
for (const [name, c] of Object.entries(CASES)) {
  const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1] as string, `--case=${name}`], {
    encoding: 'utf8',
  });
  const row: { name: string; bytes: number; target?: number } = { name: c.title, bytes: Number(out.trim()) };
  if (c.target !== undefined) row.target = c.target;
  rows.push(row);
}

const budgetRows: Array<{ events: number; bytes: number }> = [];
for (const events of BUDGET_EVENTS) {
  const out = execFileSync(process.execPath, [...process.execArgv, process.argv[1] as string, `--budget=${events}`], {
    encoding: 'utf8',
  });
  budgetRows.push({ events, bytes: Number(out.trim()) });
}

if (process.argv.includes('--json')) {
  process.stdout.write(
    `${JSON.stringify({ perObject: rows.map((r) => ({ ...r, bytes: Math.round(r.bytes) })), budget: budgetRows })}\n`,
  );
} else {
  console.log(`node ${process.version}; retained heap, ${N} objects per case, each case in a fresh process`);
  for (const r of rows) {
    const verdict =
      r.target === undefined ? '' : r.bytes <= r.target ? `  target ≤ ${r.target} met` : `  target ≤ ${r.target} MISSED`;
    console.log(`${r.name.padEnd(66)} ${String(Math.round(r.bytes)).padStart(7)} bytes${verdict}`);
  }
  for (const r of budgetRows)
    console.log(`one retry budget with ${String(r.events).padStart(9)} events in the window: ${r.bytes} bytes`);
}
