/**
 * Wait hints in the retry loop (docs/guide.md, "Wait hints"): a hint is a minimum wait with a
 * small upward jitter; a hint longer than the time left ends the call at once, and the error
 * says when to come back.
 *
 * Run: npx tsx examples/guide-wait-hint.ts
 */
// #region readme
import { downstream, isGiveUpError } from 'kindly-calls';

// Stand-ins for your own code:
/** What an HTTP client would throw for a 429: kindly reads `status` and `headers`. */
function tooManyRequests(headers: Record<string, string>): Error {
  return Object.assign(new Error('HTTP 429'), { status: 429, headers });
}
let searches = 0;
async function search(): Promise<string[]> {
  if (++searches === 1) throw tooManyRequests({ 'grpc-retry-pushback-ms': '150' });
  return ['result'];
}
async function exportAll(): Promise<string> {
  throw tooManyRequests({ 'retry-after': '120' });
}

const api = downstream('search-api', { retry: { backoff: { baseMs: 10 }, maxRetryAfterMs: 5_000 } });
api.on('retry-scheduled', (e) =>
  console.log(`retry in ${Math.round(e.delayMs)} ms, ${e.hintSource}, backoff ${Math.round(e.backoffMs)} ms`),
);

console.log(await api.call(() => search())); // retry in 150…180 ms, grpc-retry-pushback-ms, backoff 0…10 ms; [ 'result' ]

try {
  await api.call(() => exportAll()); // 429 with Retry-After: 120 — longer than maxRetryAfterMs
} catch (error) {
  if (!isGiveUpError(error)) throw error;
  console.log(error.reason, error.attempts, error.retryAfterMs); // hint-too-long 1 120000 — no pointless sleep
}
// #endregion
