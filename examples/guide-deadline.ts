/**
 * Deadlines (docs/guide.md, "Timeouts and deadlines"): a total timeout on one call becomes
 * the deadline of every kindly call made inside it, through AsyncLocalStorage on Node.
 *
 * Run: npx tsx examples/guide-deadline.ts
 */
// #region readme
import { setTimeout as sleep } from 'node:timers/promises';
import { downstream, isGiveUpError, runWithDeadline } from 'kindly-calls';
import { systemClock } from 'kindly-calls/testing';

// Stand-ins for your own code:
/** A slow stand-in for a stock lookup; it stops when its signal aborts. */
async function lookUpStock(sku: string, signal: AbortSignal): Promise<number> {
  await sleep(sku === 'slow' ? 1_000 : 20, undefined, { signal });
  return 7;
}

const inventory = downstream('inventory'); // no timeout of its own
const orders = downstream('orders', { totalTimeoutMs: 1_000 }); // the whole call, sleeps included

await orders.call(async (outer) => {
  // A nested call inherits the outer deadline: no parameter to thread through. Passing the
  // outer attempt's signal also stops it if that attempt times out or is aborted.
  const stock = await inventory.call(
    (inner) => {
      console.log(inner.deadline === outer.deadline, inner.timeLeft() <= 1_000); // true true
      return lookUpStock('book', inner.signal);
    },
    { signal: outer.signal },
  );
  console.log('stock', stock);
});

// A deadline for any piece of work, e.g. one job of a queue consumer (monotonic ms of the clock).
await runWithDeadline({ deadline: systemClock.monotonic() + 100 }, async () => {
  try {
    await inventory.call(({ signal }) => lookUpStock('slow', signal));
  } catch (error) {
    // The deadline passed during the attempt: the attempt ends (its signal aborts) and the
    // call gives up with reason `deadline`; the cause is the DeadlineExceededError.
    if (isGiveUpError(error)) console.log(error.reason, error.outcome, (error.cause as Error).name); // deadline unknown DeadlineExceededError
  }
});

// Without AsyncLocalStorage (browsers), pass the limit explicitly: `deadline` or `timeout`.
await inventory.call(({ signal }) => lookUpStock('book', signal), { deadline: inventory.clock.monotonic() + 1_000 });
// #endregion
console.log('done');
