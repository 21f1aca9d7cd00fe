// Regression test: one deadline context across the ESM and CommonJS
// builds, and across two copies of the package. Runs the built package (dist/, built by
// `npm test` before the tests) in a child process.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { currentDeadlineScope, DEADLINE_STORAGE_KEY, runWithDeadline } from '../../src/runtime/deadline-context.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fixture = fileURLToPath(new URL('../fixtures/mixed-formats-server.cjs', import.meta.url));

function run(esmEntry: string) {
  if (!existsSync(join(root, 'dist/http.cjs'))) throw new Error('dist/ is missing: `npm run build` first (npm test does)');
  const result = spawnSync(process.execPath, [fixture, esmEntry], { encoding: 'utf8', timeout: 15_000 });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '{}') as {
    status: number;
    exhausted: string | null;
    budgets: number[];
  };
}

describe('deadline context (regression)', () => {
  it('lives on globalThis under a versioned Symbol.for key, so every copy of the module shares it', () => {
    expect(DEADLINE_STORAGE_KEY).toBe(Symbol.for('kindly-calls.deadline-scope.v1'));
    const shared = (globalThis as Record<symbol, { getStore(): unknown }>)[DEADLINE_STORAGE_KEY];
    expect(shared).toBeDefined();
    runWithDeadline({ deadline: 42 }, () => {
      expect(shared?.getStore()).toEqual({ deadline: 42 });
      expect(currentDeadlineScope()?.deadline).toBe(42);
    });
  });

  it('a CommonJS nodeHttpHandler server calling an ESM downstream: the inner call inherits ~700 ms and the give-up is marked', () => {
    const r = run(join(root, 'dist/index.js'));
    console.log(
      `[figure] CJS server → ESM downstream: budgets sent ${r.budgets.join(', ')} ms, status ${r.status}, x-retry-exhausted ${r.exhausted}`,
    );
    expect(r.budgets).toHaveLength(2);
    for (const ms of r.budgets) {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(700);
    }
    expect(r.status).toBe(503);
    expect(r.exhausted).toBe('1');
  });

  it('…and with the ESM downstream loaded from a second copy of the package', () => {
    const copy = mkdtempSync(join(tmpdir(), 'kindly-copy-'));
    try {
      cpSync(join(root, 'dist'), join(copy, 'dist'), { recursive: true });
      writeFileSync(join(copy, 'package.json'), JSON.stringify({ name: 'kindly-calls', type: 'module' }));
      const r = run(join(copy, 'dist/index.js'));
      console.log(
        `[figure] CJS server → ESM downstream (second copy): budgets sent ${r.budgets.join(', ')} ms, x-retry-exhausted ${r.exhausted}`,
      );
      for (const ms of r.budgets) expect(ms).toBeLessThanOrEqual(700);
      expect(r.exhausted).toBe('1');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
