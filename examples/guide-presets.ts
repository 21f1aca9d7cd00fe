/**
 * Retry presets (docs/guide.md, "Presets"): plain, frozen `RetryOptions` objects.
 *
 * Run: npx tsx examples/guide-presets.ts
 */
// #region readme
import { background, downstream, interactive } from 'kindly-calls';

const search = downstream('search', { retry: interactive });
const exporter = downstream('exporter', { retry: { ...background, maxAttempts: 20 } });
console.log(search.retry.maxAttempts, exporter.retry.maxAttempts); // 3 20
// #endregion
