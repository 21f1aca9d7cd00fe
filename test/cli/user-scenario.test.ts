import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isScenarioFile } from '../../src/cli/user-scenario.js';
import { runCli } from './helpers.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const OCC = 'examples/scenarios/occ-contention.ts';

function file(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kindly-scenario-'));
  writeFileSync(join(dir, name), text);
  return join(dir, name);
}

describe('kindly-calls sim ./my-scenario.ts (your own scenario)', () => {
  it('tells a scenario file from a built-in name', () => {
    expect(['./x.ts', 'x.mjs', 'dir/x', '/abs/x.js'].map(isScenarioFile)).toEqual([true, true, true, true]);
    expect(['herd', 'budget'].map(isScenarioFile)).toEqual([false, false]);
  });

  it('runs the shipped OCC example with --json and its own options, deterministic per seed', async () => {
    const argv = ['sim', OCC, '--json', '--clients', '12', '--seeds', '5', '--latency-ms', '4'];
    const first = await runCli(argv, { cwd: root });
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const json = JSON.parse(first.stdout) as {
      parameters: { clients: number; seeds: number };
      strategies: Array<{ name: string; calls: { min: number; median: number; max: number } }>;
    };
    expect(json.parameters).toMatchObject({ clients: 12, seeds: 5 });
    expect(json.strategies.map((s) => s.name)).toEqual(['no jitter', 'full jitter', 'equal jitter', 'decorrelated']);
    // Every client commits once, so each needs at least one call; contention adds more.
    for (const s of json.strategies) expect(s.calls.min).toBeGreaterThanOrEqual(12);
    expect(Math.max(...json.strategies.map((s) => s.calls.max))).toBeGreaterThan(12);
    expect((await runCli(argv, { cwd: root })).stdout).toBe(first.stdout);
  });

  it('--help shows the file’s own options; a bad option is a usage error', async () => {
    const help = await runCli(['sim', OCC, '--help'], { cwd: root });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--latency-ms');
    const bad = await runCli(['sim', OCC, '--clients', '0'], { cwd: root });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--clients');
  });

  it('a module that is not a scenario: exit 2, every problem named', async () => {
    const path = file('not-a-scenario.mjs', 'export default { name: "", options: [{ kind: "x" }] };');
    const result = await runCli(['sim', path]);
    expect(result.code).toBe(2);
    for (const fragment of ['`name`', '`summary`', '`description`', 'options[0]', '`run(params, context)`'])
      expect(result.stderr).toContain(fragment);
    const missing = await runCli(['sim', './no-such-scenario.mjs'], { cwd: tmpdir() });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('not found');
  });

  const REPORT = '{ title: "t", notes: ["a note"], parameters: [], tables: [], charts: [] }';
  const scenarioWith = (run: string) => `export default { name: "x", summary: "s", description: [], options: [], ${run} };`;

  it('awaits an async run(): its result is printed; its rejection is one line, exit 1, no stack', async () => {
    const ok = file('async-ok.mjs', scenarioWith(`async run() { return { json: { done: true }, report: ${REPORT} }; }`));
    const printed = await runCli(['sim', ok, '--json']);
    expect(printed).toEqual({ code: 0, stdout: '{\n  "done": true\n}\n', stderr: '' });

    const failing = file('async-boom.mjs', scenarioWith('async run() { throw new Error("async boom"); }'));
    const failed = await runCli(['sim', failing]);
    expect(failed).toEqual({ code: 1, stdout: '', stderr: 'kindly: async boom\n' });
  });

  it('a run() that does not return { json, report }: exit 2, one line naming what is wrong', async () => {
    const nothing = await runCli(['sim', file('undefined.mjs', scenarioWith('run() { return undefined; }'))]);
    expect(nothing.code).toBe(2);
    expect(nothing.stdout).toBe('');
    expect(nothing.stderr).toMatch(
      /^kindly: sim .*undefined\.mjs: run\(params, context\) must return \{ json, report \} \(got undefined\)\n$/,
    );

    const partial = await runCli([
      'sim',
      file('partial.mjs', scenarioWith('run() { return { json: [], report: { title: 1 } }; }')),
    ]);
    expect(partial.code).toBe(2);
    expect(partial.stderr.split('\n')).toHaveLength(2);
    for (const fragment of [
      '`json` must be an object, got an array',
      '`report.title` must be a string',
      '`report.charts` must be an array',
    ])
      expect(partial.stderr).toContain(fragment);
  });

  it('--json of a json that cannot be serialised (a BigInt): exit 2, one line', async () => {
    const path = file('bigint.mjs', scenarioWith(`run() { return { json: { n: 1n }, report: ${REPORT} }; }`));
    const result = await runCli(['sim', path, '--json']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^kindly: sim .*bigint\.mjs: the `json` that run\(\) returned cannot be written as JSON \(.*BigInt.*\)\n$/,
    );
  });
});
