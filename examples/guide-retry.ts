/**
 * Retrying any async operation with `.call()` (docs/guide.md, "Retry"): a callee that fails
 * twice with 503 and then answers, and one that always fails, which ends in a `GiveUpError`.
 *
 * Run: npx tsx examples/guide-retry.ts
 */
// #region readme
import { downstream, isGiveUpError } from 'kindly-calls';

// Stand-ins for your own code:
/** What an HTTP client would throw: kindly reads `status` (and `headers`) from it. */
function httpError(status: number): Error {
  return Object.assign(new Error(`HTTP ${status}`), { status });
}
let calls = 0;
async function getQuote(signal: AbortSignal): Promise<{ price: number }> {
  if (signal.aborted) throw signal.reason;
  calls++;
  if (calls <= 2) throw httpError(503); // busy twice, then fine
  return { price: 42 };
}
async function getReport(): Promise<string> {
  throw httpError(502); // always failing
}

const quotes = downstream('quotes', {
  retry: { maxAttempts: 4, maxElapsedMs: 2_000, backoff: { baseMs: 20, capMs: 200 } },
  attemptTimeoutMs: 500,
});

// The operation gets { signal, attempt, retriesLeft, deadline, timeLeft() } on every attempt.
const quote = await quotes.call(({ signal, attempt }) => {
  console.log(`attempt ${attempt}`);
  return getQuote(signal);
});
console.log(quote); // { price: 42 } on the third attempt

try {
  await quotes.call(() => getReport());
} catch (error) {
  if (!isGiveUpError(error)) throw error;
  console.log(error.reason, error.attempts, error.outcome, error.code); // max-attempts 4 unknown ERR_KINDLY_GIVE_UP
  console.log(error.message); // quotes: gave up after 4 attempt(s) in 97 ms (max-attempts): HTTP 502
}
// #endregion
console.log(quotes.stats().retries, 'retries in total');
