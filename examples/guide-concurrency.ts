/**
 * The adaptive concurrency limit (docs/latency.md, "Adaptive concurrency limit"): learns how
 * many attempts the callee can usefully run at once from latency, with no number configured,
 * and shares it between classes of callers.
 *
 * Run: npx tsx examples/guide-concurrency.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream, isGiveUpError } from 'kindly-calls';

// A stand-in callee: 4 workers, 10 ms each, everything else waits in its queue.
let busy = 0;
const queue: (() => void)[] = [];
async function render(): Promise<string> {
  if (busy >= 4) await new Promise<void>((resolve) => queue.push(resolve));
  busy++;
  await sleep(10);
  busy--;
  queue.shift()?.();
  return 'page';
}

const renderer = downstream('renderer', {
  retry: false,
  concurrency: { partitions: { interactive: 0.8, background: 0.2 } },
});

let served = 0;
let refused = 0;
const until = performance.now() + 1_500;
async function caller(partition: 'interactive' | 'background') {
  while (performance.now() < until) {
    try {
      await renderer.call(render, { partition });
      served++;
    } catch (error) {
      if (!isGiveUpError(error) || error.reason !== 'rejected') throw error;
      refused++; // a real caller would serve a fallback here
      await sleep(5);
    }
  }
}
// 30 interactive and 10 background callers against a callee that can serve 4 at once.
await Promise.all([
  ...Array.from({ length: 30 }, () => caller('interactive')),
  ...Array.from({ length: 10 }, () => caller('background')),
]);
const { concurrencyLimit } = renderer.stats();
console.log(`learned limit: ${concurrencyLimit !== undefined && concurrencyLimit < 20 ? 'close to 4' : 'too high'}`);
console.log(`served and refused: ${served > 0 && refused > 0}`); // served and refused: true
// #endregion
