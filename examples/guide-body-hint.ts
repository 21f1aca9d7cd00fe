/**
 * Adding a body-hint extractor (docs/guide.md, "Hints in error bodies"): an API that writes
 * `{ "cooldown": { "seconds": 0.2 } }` in its 429 body instead of sending Retry-After.
 *
 * Run: npx tsx examples/guide-body-hint.ts
 */
// #region readme
import { downstream } from 'kindly-calls';
import { classifyError } from 'kindly-calls/classify';
import { type BodyHintExtractor, DEFAULT_BODY_HINT_EXTRACTORS } from 'kindly-calls/hints';

// Stand-ins for your own code:
/** An axios-style error: the parsed body is `response.data`. */
function cooldownError(seconds: number): Error {
  return Object.assign(new Error('HTTP 429'), { response: { status: 429, headers: {}, data: { cooldown: { seconds } } } });
}
let attempts = 0;
async function listInvoices(): Promise<string[]> {
  if (++attempts === 1) throw cooldownError(0.2);
  return ['inv_1'];
}

// Return ms to wait, or undefined. Throwing or returning garbage is safe: the next extractor is tried.
const cooldown: BodyHintExtractor = (body) => {
  const seconds = (body as { cooldown?: { seconds?: unknown } } | null)?.cooldown?.seconds;
  return typeof seconds === 'number' ? seconds * 1000 : undefined;
};
const bodyHintExtractors = [cooldown, ...DEFAULT_BODY_HINT_EXTRACTORS];

const billing = downstream('billing', {
  classify: (error, nowMs) => classifyError(error, nowMs, { bodyHintExtractors }),
});
billing.on('hint', (e) => console.log(`hint ${e.hintMs} ms from ${e.source}, honoured: ${e.honoured}`));
console.log(await billing.call(() => listInvoices())); // hint 200 ms from body, honoured: true; [ 'inv_1' ]
// #endregion
