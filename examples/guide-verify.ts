/**
 * A non-idempotent call and the `verify` hook (docs/guide.md, "Non-idempotent calls"): after
 * an attempt whose outcome is `unknown`, kindly asks "did it take effect?" before retrying.
 *
 * Run: npx tsx examples/guide-verify.ts
 */
// #region readme
import { downstream, isGiveUpError } from 'kindly-calls';

// Stand-ins for your own code:
// A payment service stand-in: the first POST is applied but the connection resets before the answer.
const applied = new Set<string>();
let posts = 0;
async function postPayment(id: string): Promise<string> {
  posts++;
  applied.add(id);
  if (posts === 1) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
  return `${id} paid`;
}
async function paymentExists(id: string): Promise<boolean> {
  return applied.has(id);
}

const payments = downstream('payments', { retry: { backoff: { baseMs: 10 } } });

try {
  const receipt = await payments.call(() => postPayment('pay_1'), {
    idempotent: false, // a POST: never repeat it blindly after an `unknown` outcome
    verify: ({ attempt }) => {
      console.log(`attempt ${attempt} ended unknown; checking before a retry`);
      return paymentExists('pay_1'); // true: it took effect, so don't send it again
    },
  });
  console.log(receipt);
} catch (error) {
  if (isGiveUpError(error) && error.reason === 'verified-applied') console.log('pay_1 went through on attempt', error.attempts);
  else throw error;
}
// #endregion
console.log(`the payment service saw ${posts} POST`);
