/**
 * Fallback (docs/guide.md, "Fallback"): a value to use when the call gives up or is rejected
 * fast, instead of an error.
 *
 * Run: npx tsx examples/guide-fallback.ts
 */
// #region readme
import { downstream } from 'kindly-calls';

// Stand-ins for your own code:
async function fetchRecommendations(): Promise<string[]> {
  throw Object.assign(new Error('HTTP 503'), { status: 503 });
}

const recommendations = downstream('recommendations', {
  retry: { maxAttempts: 2, backoff: { baseMs: 5 } },
  // For every call of this downstream; receives { reason, error, attempts }.
  fallback: ({ reason, attempts }) => {
    console.log(`fallback after ${attempts} attempts (${reason})`);
    return [];
  },
});

const list = await recommendations.call(() => fetchRecommendations(), {
  fallback: () => ['bestsellers'], // per call: wins over the downstream's
});
console.log(list, recommendations.stats().fallbacks); // [ 'bestsellers' ] 1
// #endregion
