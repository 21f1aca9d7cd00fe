import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;

function kindly(args: string[]) {
  return spawnSync('npx', ['tsx', 'src/cli/main.ts', ...args], { cwd: root, encoding: 'utf8', timeout: 60_000 });
}

describe('kindly as a process', () => {
  it('runs when executed directly and exits 0', () => {
    const r = kindly(['sim', 'herd', '--strategy', 'exponential', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout).strategies[0].allSucceededMs.median).toBe(27_200);
  });

  it('exits 2 with one line on stderr for a bad option', () => {
    const r = kindly(['sim', 'herd', '--clients', 'lots']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toEqual(['kindly: sim herd: --clients expects a number, got "lots"']);
  });

  it('a reader that closes the pipe early is not an error (kindly-calls sim … | head)', () => {
    const r = spawnSync('sh', ['-c', 'npx tsx src/cli/main.ts sim herd --seeds 20 --json | true'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(0);
    expect(r.stderr).not.toContain('EPIPE');
  });
  it('a scenario whose run() never settles: said, exit 1 (not a silent exit 0)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kindly-never-'));
    const path = join(dir, 'never.mjs');
    writeFileSync(
      path,
      'export default { name: "never", summary: "s", description: [], options: [], run: () => new Promise(() => {}) };',
    );
    const r = kindly(['sim', path, '--json']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe("kindly: the simulation never finished: a promise it waited for (its run()'s) never settled\n");
  });
});
