import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Every runnable example (examples/*.ts) runs to completion and exits 0 by itself — no
 * server, socket or timer left behind; test/docs checks that every doc snippet is copied from
 * one (so the docs cannot drift from code that runs). examples/demo*.ts (`npm run demo`,
 * `npm run demo:fleet`) are excluded: they are long-running and checked on their own.
 */
const dir = fileURLToPath(new URL('../examples/', import.meta.url));
const tsx = fileURLToPath(new URL('../node_modules/.bin/tsx', import.meta.url));
const examples = readdirSync(dir)
  .filter((name) => name.endsWith('.ts') && !name.startsWith('demo'))
  .sort();

function run(file: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(tsx, [file], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 25_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('examples run', () => {
  it('finds the examples', () => {
    expect(examples).toEqual(
      expect.arrayContaining([
        'axios.ts',
        'http-fetch.ts',
        'server-node-http.ts',
        'server-express.ts',
        'server-fastify.ts',
        'tanstack-query.ts',
      ]),
    );
  });

  // One at a time: each starts its own Node process with tsx, heavy on a 2-core machine.
  it.each(examples)('%s prints a result and exits 0', async (name) => {
    const result = await run(name);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().length).toBeGreaterThan(0);
    expect(result.code).toBe(0);
  });

  it('every TypeScript snippet in docs/observability.md is copied verbatim from an example', () => {
    const sources = examples.map((name) => readFileSync(`${dir}${name}`, 'utf8'));
    const docs = readFileSync(fileURLToPath(new URL('../docs/observability.md', import.meta.url)), 'utf8');
    const blocks = [...docs.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] as string);
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    for (const block of blocks)
      expect({ block, copied: sources.some((source) => source.includes(block)) }).toEqual({ block, copied: true });
  });
});
