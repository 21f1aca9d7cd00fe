/**
 * A bulkhead (docs/guide.md, "Bulkhead"): at most `maxConcurrent` attempts run at once, a
 * bounded queue waits for a slot, and a full queue rejects at once.
 *
 * Run: npx tsx examples/guide-bulkhead.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream } from 'kindly-calls';

// Stand-ins for your own code:
async function render(name: string): Promise<string> {
  await sleep(50);
  return `${name} rendered`;
}

const renderer = downstream('renderer', {
  bulkhead: { maxConcurrent: 1, maxQueue: 1, queueTimeoutMs: 1_000 },
});
renderer.on('bulkhead-rejected', (e) => console.log(`rejected: ${e.why}`));

const results = Promise.allSettled([
  renderer.call(() => render('a')), // runs at once
  renderer.call(() => render('b')), // waits in the queue for a's slot
  renderer.call(() => render('c')), // queue full: rejected at once, outcome `failed`
]);
console.log('waiting for a slot:', renderer.stats().queueDepth); // waiting for a slot: 1, then rejected: queue-full
for (const r of await results) console.log(r.status === 'fulfilled' ? r.value : `${r.reason.reason} (${r.reason.cause.why})`);
// a rendered, b rendered, rejected (queue-full)
// #endregion
