/**
 * Hedging (docs/latency.md, "Hedging"): a call that has not answered after the delay gets a
 * second attempt, the first answer wins and the slow one is aborted.
 *
 * Run: npx tsx examples/guide-hedging.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream } from 'kindly-calls';

// A stand-in for a replica set where one request in a while hits a slow replica.
let calls = 0;
async function search(query: string, signal: AbortSignal): Promise<string> {
  const slow = calls++ === 20;
  await sleep(slow ? 2_000 : 20, undefined, { signal }); // the loser is aborted: it stops here
  return `results for ${query}`;
}

const searchApi = downstream('search', {
  // Fixed delay here; without `delayMs` it is the learned p95 of this lane's latency.
  hedging: { delayMs: 100 },
});
searchApi.on('hedge', (e) => console.log(`hedge sent after ${e.delayMs} ms`));

// Hedges are earned by traffic: each call deposits `maxExtraLoad` (5 %) of one, so 20 calls
// pay for a hedge and hedging can never add more than 5 % to the callee's load.
for (let i = 0; i < 20; i++) await searchApi.call(({ signal }) => search('warm-up', signal));
const answer = await searchApi.call(({ signal }) => search('kindly', signal)); // this one is slow
console.log(answer); // results for kindly (from the hedge, ~120 ms instead of 2 s)
const { hedges, hedgeWins, hedgeRatio } = searchApi.stats();
console.log({ hedges, hedgeWins, hedgeRatio }); // { hedges: 1, hedgeWins: 1, hedgeRatio: 0.047… }
// Non-idempotent calls are never hedged: searchApi.call(op, { idempotent: false }).
// #endregion
