import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The built `kindly-calls` command as a user runs it, from a folder of their own: `--version`,
 * and `--config file.ts` without preloading anything (regression: it failed with "Unknown file
 * extension .ts" unless tsx was preloaded). On Node that strips types (22.18+, 24, 26) the file
 * is imported natively; on Node 20 through tsx, found here from this package's folder.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const bin = join(root, 'bin', 'kindly-calls.mjs');
const work = mkdtempSync(join(tmpdir(), 'kindly-ts-config-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const cli = (...args: string[]) => spawnSync(process.execPath, [bin, ...args], { cwd: work, encoding: 'utf8', timeout: 60_000 });

describe('kindly-calls from a user folder', () => {
  it('--version prints the package version', () => {
    const r = cli('--version');
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`${JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version}\n`);
    expect(r.status).toBe(0);
  });

  it('--config reads a TypeScript module with types, without a preloaded loader', () => {
    writeFileSync(
      join(work, 'retry.ts'),
      [
        "import type { RetryOptions } from 'kindly-calls';",
        'interface Mine { attempts: number }',
        'const mine: Mine = { attempts: 4 };',
        'export default { maxAttempts: mine.attempts, backoff: { baseMs: 50 } } satisfies RetryOptions;',
        '',
      ].join('\n'),
    );
    const r = cli('sim', 'herd', '--seeds', '1', '--clients', '10', '--strategy', 'full', '--config', 'retry.ts', '--json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const rows = (JSON.parse(r.stdout) as { strategies: Array<{ strategy: string }> }).strategies.map((s) => s.strategy);
    expect(rows).toEqual(['full', 'config']);
  });

  it('the options in a .ts config are checked like any other', () => {
    writeFileSync(
      join(work, 'bad.ts'),
      'const options: { maxAttempts: number } = { maxAttempts: 0 };\nexport default options;\n',
    );
    const r = cli('sim', 'herd', '--seeds', '1', '--config', 'bad.ts');
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('kindly: --config bad.ts: Expected `maxAttempts` to be an integer ≥ 1, got 0\n');
  });
});
