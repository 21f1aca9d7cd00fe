/**
 * Adaptive pacing (docs/guide.md, "Adaptive pacing"): 40 callers at once against a callee
 * that serves 5 requests per 100 ms and answers 429 to the rest. No rate is configured:
 * kindly learns it from the answers and releases retries at that rate.
 *
 * Run: npx tsx examples/guide-pacing.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream } from 'kindly-calls';

// Stand-ins for your own code:
// The callee: a fixed-window limiter, 5 per 100 ms slot, answering after 50 ms.
const origin = performance.now();
const served = new Map<number, number>();
let received = 0;
async function lookUp(id: number): Promise<number> {
  received++;
  const slot = Math.floor((performance.now() - origin) / 100);
  const used = served.get(slot) ?? 0;
  if (used < 5) served.set(slot, used + 1);
  await sleep(50);
  if (used >= 5) throw Object.assign(new Error('HTTP 429'), { status: 429 });
  return id;
}

const geo = downstream('geo', {
  retry: { maxAttempts: 20, backoff: { baseMs: 50, capMs: 1_000 } },
  totalTimeoutMs: 5_000,
  budget: false, // this demo retries far beyond a 20% budget on purpose
  pacing: {}, // defaults; no rate anywhere
});
let paced = 0;
geo.on('pacing-delay', () => paced++);

const started = performance.now();
await Promise.allSettled(Array.from({ length: 40 }, (_, id) => geo.call(() => lookUp(id))));
const { successes, attempts, pacingDelays } = geo.stats();
console.log(
  `${successes}/40 calls, ${attempts} attempts, ${pacingDelays} paced, done in ${Math.round(performance.now() - started)} ms`,
);
// e.g. 40/40 calls, 100 attempts, 60 paced, done in 820 ms — capacity alone needs 800 ms;
// without `pacing`, each retry sleeping its own backoff: about 150 attempts and 1.3 s
// #endregion
console.log(`the callee received ${received} requests; pacing-delay events: ${paced}`);
