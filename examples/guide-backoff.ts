/**
 * Backoff schedules (docs/guide.md, "Backoff and jitter"): the delay after the n-th failure
 * for each jitter, drawn from a seeded PRNG so the output is the same on every run.
 *
 * Run: npx tsx examples/guide-backoff.ts
 */
// #region readme
import type { Jitter } from 'kindly-calls';
import { Backoff } from 'kindly-calls/policies';
import { SeededRandom } from 'kindly-calls/testing';

for (const jitter of ['none', 'full', 'equal', 'decorrelated'] as Jitter[]) {
  const backoff = new Backoff({ shape: 'exponential', baseMs: 100, factor: 2, capMs: 1_000, floorMs: 50, jitter });
  const random = new SeededRandom(42); // the same seed gives the same schedule, on every platform
  const delays: number[] = [];
  let previous: number | undefined;
  for (let failures = 1; failures <= 6; failures++) {
    previous = backoff.delay(failures, random, previous); // decorrelated reads `previous`
    delays.push(Math.round(previous));
  }
  console.log(jitter.padEnd(12), delays.join(', '));
}
// none         100, 200, 400, 800, 1000, 1000     c(n) = min(cap, base × factor^(n−1))
// full         62, 138, 83, 199, 475, 844         uniform in [floor, max(c(n), 2 × floor)]
// equal        81, 169, 241, 500, 737, 922        uniform in the upper half of that window
// decorrelated 148, 301, 175, 184, 303, 775       uniform in [max(base, floor), min(cap, 3 × previous)]
// #endregion

// The invariant floor ≤ delay ≤ cap, checked over many draws.
const random = new SeededRandom(7);
for (const jitter of ['none', 'full', 'equal', 'decorrelated'] as Jitter[]) {
  const backoff = new Backoff({ baseMs: 100, capMs: 1_000, floorMs: 50, jitter });
  let previous: number | undefined;
  for (let n = 1; n <= 1_000; n++) {
    previous = backoff.delay(n, random, previous);
    if (!(previous >= 50 && previous <= 1_000)) throw new Error(`${jitter}: ${previous} outside [50, 1000]`);
  }
}
console.log('floor ≤ delay ≤ cap held for 4,000 draws');
