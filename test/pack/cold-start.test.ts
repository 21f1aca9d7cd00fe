import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * What of Node itself a cold process loads when it imports the built root entry. Node's
 * `performance` global is a lazy getter whose first read loads `perf_hooks` (1–3 ms of a cold
 * start here): the real clock reads it at its first use, so that a process pays for it when it
 * first times something, not in `import 'kindly-calls'`.
 *
 * Needs dist/ built (`npm test` builds first).
 */
const run = promisify(execFile);

const script = (entry: string) => `
const perfLoaded = (before) => process.moduleLoadList.filter((m) => !before.has(m) && /perf/.test(m)).length;
const before = new Set(process.moduleLoadList);
const { downstream } = await import(${JSON.stringify(entry)});
const api = downstream('cold-start', {
  retry: { maxAttempts: 3, backoff: { baseMs: 1, capMs: 5 } },
  breaker: { threshold: 5, breakMs: 5_000 },
  pacing: {},
  attemptTimeoutMs: 1_000,
  totalTimeoutMs: 5_000,
});
const atImport = perfLoaded(before);
let attempts = 0;
const value = await api.call(async ({ signal }) => {
  attempts++;
  if (attempts === 1) throw Object.assign(new Error('reset'), { code: 'ECONNRESET' });
  return signal.aborted ? 'aborted' : 'ok';
});
process.stdout.write(JSON.stringify({ atImport, value, attempts, afterCall: perfLoaded(before) > 0 }));
`;

describe('a cold process', () => {
  it('imports the root and makes a downstream without loading perf_hooks; its first call (a retry, timeouts, a breaker, pacing) does', async () => {
    const entry = new URL('../../dist/index.js', import.meta.url).href;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script(entry)], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual({ atImport: 0, value: 'ok', attempts: 2, afterCall: true });
  });
});
