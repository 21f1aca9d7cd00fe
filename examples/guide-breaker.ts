/**
 * A circuit breaker (docs/guide.md, "Circuit breaker"): three failures in a row open it,
 * calls then fail fast with `retryAfterMs`, and after the break one probe closes it again.
 *
 * Run: npx tsx examples/guide-breaker.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream, isGiveUpError } from 'kindly-calls';

// Stand-ins for your own code:
let down = true;
let reached = 0;
async function getProfile(): Promise<string> {
  reached++;
  if (down) throw Object.assign(new Error('HTTP 503'), { status: 503 });
  return 'Ada';
}

const profiles = downstream('profiles', {
  retry: false, // one attempt per call, to count plainly
  breaker: { mode: 'consecutive', threshold: 3, breakMs: 100, breakJitter: 0 },
});
profiles.on('breaker-state', (e) => console.log(`breaker ${e.key}: ${e.from} → ${e.to}`));

for (let i = 0; i < 4; i++) {
  await profiles
    .call(() => getProfile())
    .catch((error) => {
      if (isGiveUpError(error)) console.log(error.reason, Math.round(error.retryAfterMs ?? 0));
    });
}
// max-attempts 0   ×3 (503, one attempt each); "breaker profiles: closed → open" after the third;
// circuit-open 100 — the 4th call failed fast without reaching the callee

down = false;
await sleep(110); // the break ends; the next call is the half-open probe
console.log(await profiles.call(() => getProfile())); // breaker profiles: open → half-open, half-open → closed; Ada
// #endregion
console.log(`the callee was reached ${reached} times for 5 calls`);
