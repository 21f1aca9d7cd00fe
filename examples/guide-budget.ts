/**
 * A retry budget (docs/guide.md, "Retry budget"): during an outage, retries stay within
 * ratio × requests + reserve, per budget key, instead of multiplying the load.
 *
 * Run: npx tsx examples/guide-budget.ts
 */
// #region readme
import { downstream } from 'kindly-calls';

// Stand-ins for your own code:
/** A dead dependency: every attempt is refused. */
async function readStock(): Promise<number> {
  throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
}

const stock = downstream('stock', {
  retry: { maxAttempts: 3, backoff: { baseMs: 1, capMs: 5 } },
  // retries ≤ 0.1 × requests + 0.1/s × 10 s over a 10 s window
  budget: { ratio: 0.1, windowMs: 10_000, reservePerSecond: 0.1 },
});
let exhausted = 0;
stock.on('budget-exhausted', () => exhausted++);

const reasons = new Map<string, number>();
for (let i = 0; i < 10; i++) {
  // `budgetKey` picks the budget: reads and writes could draw on separate ones.
  await stock
    .call(() => readStock(), { budgetKey: 'stock:read' })
    .catch((error) => {
      reasons.set(error.reason, (reasons.get(error.reason) ?? 0) + 1);
    });
}
const { requests, attempts, retries, budgetRejections } = stock.stats();
console.log(JSON.stringify({ requests, attempts, retries, budgetRejections, exhausted }), reasons);
// {"requests":10,"attempts":12,"retries":2,"budgetRejections":10,"exhausted":10} Map(1) { 'budget' => 10 }
// Without the budget: 30 attempts, 20 of them retries.
// #endregion
