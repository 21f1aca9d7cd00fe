import { RetryBudget } from '../dist/policies.js';
import type { BenchCase } from './cases.js';

/**
 * Retry-budget bookkeeping cost with 1,000 / 100,000 / 1,000,000 events already in the
 * sliding window: a bucketed budget costs the same at any rate, and holds the same memory.
 * Each measured operation is one deposit (a first attempt) and one withdrawal attempt.
 */
export const budgetCases: BenchCase[] = [1_000, 100_000, 1_000_000].map((events) => ({
  name: `budget:${events}-in-window`,
  sync: true,
  setup: () => {
    const budget = new RetryBudget({ ratio: 0.2, windowMs: 10_000, reservePerSecond: 10 });
    // Spread `events` requests over the first 9 s of the 10 s window.
    for (let i = 0; i < events; i++) budget.recordRequest((i / events) * 9_000);
    let now = 9_000;
    return () => {
      // Advance a little per operation but stay inside the window being measured.
      now = now >= 9_999 ? 9_000 : now + 0.001;
      budget.recordRequest(now);
      return budget.tryRetry(now) ? 42 : 42;
    };
  },
}));
