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
    expect(failed).toEqual({ code: 1, stdout: '', stderr: `kindly: sim ${failing}: run() failed: async boom\n` });
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
  it('a scenario file that exists but whose import fails: "cannot load" with the real reason, not "file not found"', async () => {
    const relative = file('imports-missing.mjs', `import x from './not-here.js';\n${scenarioWith('run() { return x; }')}`);
    const r = await runCli(['sim', relative]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toContain('file not found');
    expect(r.stderr).toMatch(/^kindly: sim .*imports-missing\.mjs: cannot load \(.*not-here\.js.*\)\n$/);
    // In a folder whose project does not have this package: say how to give it one.
    const elsewhere = file(
      'uses-package.mjs',
      `import { spread } from 'kindly-calls/sim';\n${scenarioWith('run() { return spread; }')}`,
    );
    const missing = await runCli(['sim', elsewhere]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("Cannot find package 'kindly-calls/sim'");
    expect(missing.stderr).toContain('npm i -D kindly-calls');
  });

  it("a scenario's help and hints name the file it was given as; -h works after it, and help wins over a bad option", async () => {
    const help = await runCli(['sim', OCC, '-h'], { cwd: root });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain(`Usage: kindly-calls sim ${OCC} [options]`);
    const first = await runCli(['sim', OCC, '--clients', '0', '--help'], { cwd: root });
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('--latency-ms');
    const stray = await runCli(['sim', OCC, 'extra'], { cwd: root });
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain(`(see kindly-calls sim ${OCC} --help)`);
  });

  it('a report the renderer cannot draw: exit 2, one line naming the scenario, not the file write', async () => {
    const bad = '{ title: "t", notes: [], parameters: [], tables: [{ title: "x", table: null }], charts: [] }';
    const path = file('bad-table.mjs', scenarioWith(`run() { return { json: {}, report: ${bad} }; }`));
    for (const extra of [[], ['--report', join(tmpdir(), `kindly-bad-${process.pid}.html`)]]) {
      const r = await runCli(['sim', path, ...extra]);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(/^kindly: sim .*bad-table\.mjs: the report that run\(\) returned cannot be drawn \(.*\)\n$/);
    }
  });
  it("a scenario's own options are checked: no name of the CLI's own, a default it would accept", async () => {
    const options = [
      '{ name: "json", kind: "integer", default: 1, help: "" }',
      '{ name: "n", kind: "integer", default: "abc", help: "" }',
      '{ name: "c", kind: "choice", default: "a", help: "" }',
      '{ name: "m", kind: "number", default: 5, min: 10, help: "" }',
      '{ name: "ok", kind: "choice", choices: ["a", "b"], default: "b", help: "" }',
    ];
    const path = file(
      'options.mjs',
      `export default { name: "o", summary: "s", description: [], options: [${options.join(', ')}], run() {} };`,
    );
    const r = await runCli(['sim', path]);
    expect(r.code).toBe(2);
    for (const fragment of [
      "options[0] (--json): --json is the CLI's own",
      'options[1] (--n): `default` must be a whole finite number, got "abc"',
      'options[2] (--c): a choice needs `choices`',
      'options[3] (--m): `default` 5 is outside its own min/max',
    ])
      expect(r.stderr).toContain(fragment);
    expect(r.stderr).not.toContain('options[4]');
  });
});
