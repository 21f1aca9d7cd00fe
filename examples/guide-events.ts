/**
 * Events and stats (docs/guide.md, "Events and stats"): typed events for every decision,
 * subscriptions that return their unsubscribe function, and a `stats()` snapshot.
 *
 * Run: npx tsx examples/guide-events.ts
 */
// #region readme
import { downstream, EVENTS, type KindlyEvent } from 'kindly-calls';

// Stand-ins for your own code:
let n = 0;
async function ping(): Promise<string> {
  if (++n % 2 === 1) throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  return 'pong';
}

const api = downstream('status-api', { retry: { backoff: { baseMs: 5 } } });

const log = (e: KindlyEvent) => console.log(e.downstream, e.type, e.type === 'attempt-end' ? e.outcome : '');
const stopLogging = api.onAny(log); // every event
const stopGiveUps = api.on(EVENTS.giveUp, (e) => console.log(`gave up: ${e.reason}`)); // one type, typed fields

await api.call(() => ping());
// status-api attempt-start / status-api attempt-end unknown / status-api retry-scheduled /
// status-api attempt-start / status-api attempt-end ok
stopLogging(); // unsubscribe; calling it again is harmless
stopGiveUps();

await api.call(() => ping()); // no listener: no event object is even built
const s = api.stats();
console.log(s.requests, s.attempts, s.retries, s.retryRatio, s.retrySuccessRate, s.timeouts); // 2 4 2 1 1 0
// #endregion
