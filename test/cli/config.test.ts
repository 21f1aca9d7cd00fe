import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRetryConfig } from '../../src/cli/config.js';
import { UsageError } from '../../src/cli/usage-error.js';

function file(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kindly-config-'));
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

describe('loadRetryConfig', () => {
  it('reads RetryOptions from JSON, with "Infinity" standing for maxAttempts: Infinity', async () => {
    const options = await loadRetryConfig(file('a.json', '{"maxAttempts":"Infinity","maxElapsedMs":1000}'));
    expect(options).toEqual({ maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 1000 });
  });

  it('reads the default export of a JavaScript module', async () => {
    const options = await loadRetryConfig(file('a.mjs', 'export default { maxAttempts: 5, backoff: { jitter: "none" } };'));
    expect(options).toEqual({ maxAttempts: 5, backoff: { jitter: 'none' } });
  });

  it('refuses what RetryPolicy refuses, on one line', async () => {
    await expect(loadRetryConfig(file('b.json', '{"maxAttempts":"Infinity"}'))).rejects.toThrow(/maxElapsedMs/);
    await expect(loadRetryConfig(file('c.json', '[1,2]'))).rejects.toThrow(UsageError);
    await expect(loadRetryConfig(file('d.json', 'null'))).rejects.toThrow(/expected an object/);
    const error = await loadRetryConfig(file('e.json', '{"maxAttempts":-1,"hintJitter":7}')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).not.toContain('\n');
    expect((error as Error).message).toMatch(/maxAttempts.*hintJitter/);
  });

  it('reports a module that fails to load', async () => {
    await expect(loadRetryConfig(file('f.mjs', 'throw new Error("boom\\nline two")'))).rejects.toThrow(
      /cannot load \(boom line two\)/,
    );
  });
});
