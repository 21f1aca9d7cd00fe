/**
 * Unbounded retrying must be written out (docs/guide.md, "Stop conditions"): `maxAttempts:
 * Infinity` is accepted only with a `maxElapsedMs` (or a downstream `totalTimeoutMs`).
 *
 * Run: npx tsx examples/guide-unbounded.ts
 */
// #region readme
import { downstream, isInvalidOptionsError } from 'kindly-calls';

const poller = downstream('poller', { retry: { maxAttempts: Infinity, maxElapsedMs: 60_000 } });
console.log(poller.retry.maxAttempts); // Infinity, bounded by maxElapsedMs

try {
  downstream('forever', { retry: { maxAttempts: Infinity } });
} catch (error) {
  if (isInvalidOptionsError(error)) console.log(error.problems); // refused: no maxElapsedMs
}
// #endregion
