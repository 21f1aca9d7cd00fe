/**
 * Errors (docs/guide.md, "Errors"): bad options fail at construction with every problem
 * listed; kindly's errors are recognised with brand guards, not `instanceof`.
 *
 * Run: npx tsx examples/guide-errors.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream, InvalidOptionsError, isAttemptTimeoutError, isGiveUpError, type RetryOptions } from 'kindly-calls';

// Stand-ins for your own code:

try {
  downstream('typos', {
    retry: { maxAttempts: 0, backoff: { baseMs: -1, floorMs: 500, capMs: 100 }, maxElapsd: 1_000 } as RetryOptions,
    attemptTimeoutMs: Number.NaN,
  });
} catch (error) {
  if (!(error instanceof InvalidOptionsError)) throw error;
  console.log(error.code, error.problems.length); // ERR_KINDLY_INVALID_OPTIONS 5
  console.log(error.message);
  // Invalid downstream 'typos' options:
  //   - Expected `attemptTimeoutMs` to be a number of milliseconds, got NaN
  //   - retry: Unknown option `maxElapsd` (known: maxAttempts, maxElapsedMs, backoff, …)
  //   - retry: Expected `maxAttempts` to be an integer ≥ 1, got 0
  //   - retry: backoff: Expected `baseMs` ≥ 0, got -1
  //   - retry: backoff: Expected `floorMs` ≤ `capMs`, got floorMs 500 > capMs 100
}

const slow = downstream('slow', { retry: { maxAttempts: 2, backoff: { baseMs: 1 } }, attemptTimeoutMs: 20 });
try {
  await slow.call(({ signal }) => sleep(1_000, 'too late', { signal })); // aborted by the 20 ms attempt timeout
} catch (error) {
  // Brand guards work across two copies of kindly in one process, where `instanceof` does not.
  if (isGiveUpError(error) && isAttemptTimeoutError(error.cause)) {
    console.log(error.reason, error.outcome, error.cause.code, error.cause.timeoutMs); // max-attempts unknown ERR_KINDLY_ATTEMPT_TIMEOUT 20
  }
}
// #endregion
