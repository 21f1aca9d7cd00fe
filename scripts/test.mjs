#!/usr/bin/env node
// `npm test`: type-check, lint, then every test (unit, property, integration against real
// loopback servers and headless Chromium, runnable examples), ending with one plain line
// "N passed, N failed" that CI reads.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const bin = (name) => join(root, 'node_modules', '.bin', name);
const steps = [];
const QUIET = 'test/**/*.quiet.test.ts';
const QUIET_FILTER = '.quiet.test.ts';

function step(name, command, args) {
  process.stdout.write(`\n▶ ${name}\n`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: process.env });
  steps.push({ name, ok: result.status === 0 });
  return result.status === 0;
}

console.log(`node ${process.version}`);
// Build first: the CLI tests, examples and benchmarks run the package as users get it.
step('build', bin('tsup'), ['--silent']);
step('type-check', bin('tsc'), ['--noEmit', '-p', 'tsconfig.json']);
step('lint', bin('biome'), ['check', '.']);

mkdirSync(join(root, '.tmp'), { recursive: true });
const reports = [
  join(root, '.tmp', `vitest-${process.version}.json`),
  join(root, '.tmp', `vitest-quiet-${process.version}.json`),
];
for (const report of reports) rmSync(report, { force: true });
const json = (report) => ['--reporter=default', '--reporter=json', `--outputFile.json=${report}`];
// Files named *.quiet.test.ts time real herds across a path whose delays are timers of this
// process: with the other test files running beside them on two cores those timers run late,
// and what the herd measures is the machine's load. They run after the rest, one at a time.
// Each herd also reads what other processes did meanwhile, and one that shared the machine
// is run again, a few times at most (test/support/machine-load.ts).
step('tests', bin('vitest'), ['run', '--exclude', QUIET, ...json(reports[0])]);
step('tests on a quiet machine', bin('vitest'), ['run', '--no-file-parallelism', QUIET_FILTER, ...json(reports[1])]);
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
for (const report of reports) {
  try {
    const result = JSON.parse(readFileSync(report, 'utf8'));
    passed += result.numPassedTests;
    failed += result.numFailedTests;
    skipped += result.numPendingTests + (result.numTodoTests ?? 0);
    failures.push(...failedTests(result));
  } catch {
    failed += 1;
    failures.push(`${report}: no report (the run died before writing it)`);
  }
}
// Named again here, next to the count: a CI log is often read from its end, and vitest's own
// account of a failure may have scrolled far above it. A message's further lines (a herd's
// timeline, say) follow it, each marked "  | ", its stack left out.
for (const failure of failures) {
  const [first, ...rest] = failure.split('\n');
  console.log(`FAILED ${first}`);
  for (const line of rest) console.log(`  | ${line}`);
}
// A failing non-test step (types, lint, build) counts as one failed check.
for (const s of steps) if (!s.ok && !s.name.startsWith('tests')) failed += 1;
const broken = steps.filter((s) => !s.ok).map((s) => s.name);
if (broken.length > 0) console.log(`\nfailed steps: ${broken.join(', ')}`);
console.log(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed > 0 || broken.length > 0 ? 1 : 0;

function failedTests(result) {
  const names = [];
  for (const file of result.testResults ?? []) {
    const where = file.name.startsWith(root) ? file.name.slice(root.length) : file.name;
    const failedAssertions = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    if (failedAssertions.length === 0 && file.status === 'failed') names.push(`${where}: ${message(file.message)}`);
    for (const a of failedAssertions) {
      names.push(`${where} > ${a.fullName}: ${message(a.failureMessages?.[0])}`);
    }
  }
  return names;
}

// A failure's message without its stack: its lines up to the first "    at …" frame (at most
// 60, each cut at 300 characters).
function message(text) {
  const lines = String(text ?? '').split('\n');
  const stack = lines.findIndex((line) => /^\s+at /.test(line));
  return (stack === -1 ? lines : lines.slice(0, stack))
    .slice(0, 60)
    .map((line) => line.slice(0, 300))
    .join('\n')
    .trimEnd();
}
