/**
 * Testing code that uses kindly (docs/guide.md, "Testing your own code"): inject a
 * `VirtualClock` and a `SeededRandom`, then move time by hand — no real waiting, no fake
 * global timers, the same result on every run.
 *
 * Run: npx tsx examples/guide-testing.ts
 */
// #region readme
import assert from 'node:assert/strict';
import { downstream, isGiveUpError } from 'kindly-calls';
import { SeededRandom, VirtualClock } from 'kindly-calls/testing';

const clock = new VirtualClock(); // starts at 0 ms; moves only when told
const api = downstream('under-test', {
  clock,
  random: new SeededRandom(1), // jitter draws are reproducible too
  retry: { maxAttempts: 3, backoff: { baseMs: 1_000, jitter: 'none' } },
  attemptTimeoutMs: 5_000,
});

const starts: number[] = [];
const call = api.call(() => {
  starts.push(clock.monotonic());
  if (starts.length < 3) throw Object.assign(new Error('HTTP 503'), { status: 503 });
  return 'ok';
});
await clock.advance(999);
assert.deepEqual(starts, [0]); // the first retry waits 1 s of virtual time…
await clock.advance(1);
assert.deepEqual(starts, [0, 1_000]); // …and starts exactly then
await clock.advance(2_000); // the second waits 2 s (base × 2)
assert.equal(await call, 'ok');
assert.deepEqual(starts, [0, 1_000, 3_000]);

// An attempt that never answers: the 5 s attempt timeout fires in virtual time.
const hung = api.call(() => new Promise<never>(() => {})).catch((e: unknown) => e);
await clock.advance(5_000 + 1_000 + 5_000 + 2_000 + 5_000);
const error = await hung;
assert.ok(isGiveUpError(error) && error.reason === 'max-attempts' && error.elapsedMs === 18_000);
console.log('virtual time now', clock.monotonic(), 'ms; real time spent: a few ms');
// #endregion
