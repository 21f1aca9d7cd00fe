/**
 * Reading wait hints (docs/guide.md, "Wait hints"): `parseRetryAfter` and `readWaitHint` are
 * pure functions of the header values and `now`.
 *
 * Run: npx tsx examples/guide-retry-after.ts
 */
// #region readme
import { parseRetryAfter, readWaitHint } from 'kindly-calls/hints';

const now = Date.UTC(2025, 0, 1, 12, 0, 0); // any epoch-ms "now"
console.log(parseRetryAfter('120', now)); // 120000 (delay-seconds)
console.log(parseRetryAfter('Wed, 01 Jan 2025 12:00:30 GMT', now)); // 30000 (IMF-fixdate)
console.log(parseRetryAfter('Wednesday, 01-Jan-25 12:00:30 GMT', now)); // 30000 (RFC 850)
console.log(parseRetryAfter('Wed Jan  1 12:00:30 2025', now)); // 30000 (asctime)
console.log(parseRetryAfter('Tue, 31 Dec 2024 23:00:00 GMT', now)); // 0 (in the past: now)
console.log(parseRetryAfter('1.5', now), parseRetryAfter('soon', now)); // undefined undefined — never 0

// Every header at once: the first field that yields a wait wins.
console.log(readWaitHint({ 'Retry-After': 'soon', RateLimit: '"default";r=0;t=7', 'X-RateLimit-Reset': '60' }, now));
// { ms: 7000, source: 'ratelimit' } — Retry-After was unusable, so the next field decided
// #endregion
