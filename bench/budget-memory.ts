/**
 * Memory held by one retry budget after 1,000 / 100,000 / 1,000,000 requests in its window
 * (run with --expose-gc; `npm run bench:memory` does). A bucketed budget holds the same few counters
 * whatever the rate; a budget that kept a timestamp per request would grow linearly.
 */
import { RetryBudget } from '../dist/index.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

const retained: Array<{ events: number; bytes: number }> = [];
const keep: RetryBudget[] = [];
for (const events of [1_000, 100_000, 1_000_000]) {
  gc();
  const before = process.memoryUsage().heapUsed;
  const budget = new RetryBudget({ windowMs: 10_000 });
  for (let i = 0; i < events; i++) {
    const now = (i / events) * 9_000;
    budget.recordRequest(now);
    budget.tryRetry(now);
  }
  keep.push(budget);
  gc();
  retained.push({ events, bytes: process.memoryUsage().heapUsed - before });
}
if (keep.length !== 3) throw new Error('unreachable');
if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(retained)}\n`);
else
  for (const r of retained)
    console.log(`budget memory with ${String(r.events).padStart(9)} events in the window: ${r.bytes} bytes`);
