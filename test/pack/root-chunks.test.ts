import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/**
 * The built root entry loads two files, itself and one chunk (scripts/merge-root-chunks.mjs):
 * with esbuild's split alone it loaded 17, and each file costs the ES module loader ~0.4 ms of
 * a cold import (docs/benchmarks.md, "Import"). Files are recorded by the loader hook the
 * import benchmark uses.
 *
 * Needs dist/ built (`npm test` builds first).
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const hooks = join(root, 'bench', 'import-hooks.mjs');

async function filesLoadedBy(entry: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'kindly-chunks-'));
  const log = join(dir, 'loaded.txt');
  try {
    const url = new URL(`../../dist/${entry}`, import.meta.url).href;
    await run(process.execPath, ['--import', hooks, '--input-type=module', '-e', `await import(${JSON.stringify(url)})`], {
      env: { ...process.env, KINDLY_IMPORT_LOG: log },
      timeout: 30_000,
    });
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.includes('/dist/'))
      .map((line) => line.slice(line.lastIndexOf('/') + 1));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('built ES modules', () => {
  it('the root entry loads itself and one chunk', async () => {
    const files = await filesLoadedBy('index.js');
    expect(files[0]).toBe('index.js');
    expect(files).toHaveLength(2);
  });

  it('a subpath shares that chunk instead of a copy of it', async () => {
    const [rootFiles, httpFiles] = await Promise.all([filesLoadedBy('index.js'), filesLoadedBy('http.js')]);
    expect(httpFiles).toContain(rootFiles[1]);
  });
});

/** The code of every package file importing `entry` loads. */
async function codeLoadedBy(entry: string): Promise<string> {
  const files = await filesLoadedBy(entry);
  return files.map((f) => readFileSync(fileURLToPath(new URL(`../../dist/${f}`, import.meta.url)), 'utf8')).join('\n');
}

const FLEET_LINK = /\bclass FleetLink\b|\bFleetLink = class\b/;

describe("what the root's chunk holds", () => {
  it('no fleet link: a store brings it, through its own entry', async () => {
    const [root, redis] = await Promise.all([codeLoadedBy('index.js'), codeLoadedBy('redis.js')]);
    expect(root).toMatch(/\bdownstream\b/);
    expect(root).not.toMatch(FLEET_LINK);
    expect(redis).toMatch(FLEET_LINK);
  });
});
