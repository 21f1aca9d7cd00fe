/**
 * Latency-derived attempt timeouts (docs/latency.md, "Attempt timeouts from latency"): each
 * attempt's timeout is a percentile of recent successful latency × a factor, clamped.
 *
 * Run: npx tsx examples/guide-derived-timeout.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream, isAttemptTimeoutError, isGiveUpError } from 'kindly-calls';

async function lookup(ms: number, signal: AbortSignal): Promise<number> {
  await sleep(ms, undefined, { signal });
  return ms;
}

const profiles = downstream('profiles', {
  retry: false,
  // p99 of recent latency × 3, never under 50 ms nor over 2 s; 2 s until 10 latencies are known.
  attemptTimeoutMs: { percentile: 0.99, factor: 3, floorMs: 50, ceilingMs: 2_000, minSamples: 10 },
});

for (let i = 0; i < 20; i++) await profiles.call(({ signal }) => lookup(20, signal));
const learned = profiles.stats().attemptTimeoutMs ?? 0;
console.log(`learned: ${learned < 1_000 ? 'well under the 2 s ceiling' : 'still the ceiling'}`); // learned: well under the 2 s ceiling

try {
  await profiles.call(({ signal }) => lookup(1_000, signal)); // a stuck attempt
} catch (error) {
  if (isGiveUpError(error) && isAttemptTimeoutError(error.cause)) console.log('cut at the learned timeout');
}
// #endregion
