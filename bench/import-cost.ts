/**
 * What `import 'kindly-calls'` costs a process that starts cold: a fresh Node process per
 * sample imports the built root entry and reports how long the `import()` took, which of
 * the package's files it loaded, and how many modules (the package's, and Node built-ins)
 * were loaded by it. The root entry must not load HTTP, simulator, adapter or fleet-link
 * code: a file is counted as such when it defines one of the marker names below, which only
 * those parts define.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, type Row, round } from './stats.js';

const root = new URL('../dist/index.js', import.meta.url).href;
const HOOKS = new URL('./import-hooks.mjs', import.meta.url).href;
/**
 * Names only the HTTP, simulator and adapter code define (checked against the build), and the
 * fleet link, which a store brings with its own entry.
 */
const MARKERS: Record<string, RegExp> = {
  http: definitions('fetchThrough', 'AttemptSignal', 'connectTimeoutFetch'),
  sim: definitions('EventQueue', 'Simulation', 'SlotServer'),
  adapters: definitions('axiosInterceptors', 'queryRetry', 'attemptFromFailureCount'),
  'fleet link': definitions('FleetLink', 'BudgetLease'),
};

/** A definition of any of `names` as the bundler writes it (`function X`, `class X`, `var X = class`). */
function definitions(...names: string[]): RegExp {
  const alt = names.join('|');
  return new RegExp(`\\b(?:function|class)\\s+(?:${alt})\\b|\\b(?:var|let|const)\\s+(?:${alt})\\s*=`);
}

// Timed with `process.hrtime`, not `performance.now()`: on Node the `performance` global's
// first read loads `perf_hooks`, which would take that load out of the import's time.
const childFor = (target: string) => `
const before = new Set(process.moduleLoadList);
const t0 = process.hrtime.bigint();
await import(${JSON.stringify(target)});
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const builtins = process.moduleLoadList.filter((m) => !before.has(m)).length;
process.stdout.write(JSON.stringify({ ms, builtins }));
`;

interface Sample {
  ms: number;
  builtins: number;
}

const child = childFor(root);
/**
 * The same import of a one-line module from a file, in a package scope of its own: what any
 * file import costs a cold process here (on Node 20 the first one loads the file loader's own
 * code, ~8 ms on a machine where a `data:` URL module takes ~2 ms).
 */
function oneLineFileChild(dir: string): string {
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  writeFileSync(join(dir, 'one-line.js'), 'export default 1;\n');
  return childFor(pathToFileURL(join(dir, 'one-line.js')).href);
}

function sample(script = child): Sample {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out) as Sample;
}

/** The files one import loads, recorded by a loader hook in a process of its own. */
function loadedFiles(): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'kindly-import-'));
  const log = join(dir, 'loaded.txt');
  try {
    writeFileSync(log, '');
    execFileSync(process.execPath, ['--import', HOOKS, '--input-type=module', '-e', child], {
      encoding: 'utf8',
      env: { ...process.env, KINDLY_IMPORT_LOG: log },
    });
    return readFileSync(log, 'utf8')
      .split('\n')
      .filter((line) => line.length > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const IMPORT_TARGET_MS = 15;

export function runImportCost(options: { samples: number }): { rows: Row[]; loaded: string[]; offending: string[] } {
  const ms: number[] = [];
  const empty: number[] = [];
  let builtins = 0;
  const referenceDir = mkdtempSync(join(tmpdir(), 'kindly-import-reference-'));
  try {
    const reference = oneLineFileChild(referenceDir);
    // Root and reference swap places every sample: a process started right after another
    // can find more of Node's files in the CPU's caches (a reference run after the root read
    // 0.7–2.1 ms faster on Node 20 than one run after a reference).
    for (let i = 0; i < options.samples; i++) {
      const first = i % 2 === 0 ? undefined : sample(reference).ms;
      const s = sample();
      ms.push(s.ms);
      builtins = s.builtins;
      empty.push(first ?? sample(reference).ms);
    }
  } finally {
    rmSync(referenceDir, { recursive: true, force: true });
  }
  // A separate process with a loader hook lists the files (the hook would skew the timing).
  const loaded = loadedFiles().filter((f) => f.includes('/dist/'));
  const offending: string[] = [];
  for (const file of loaded) {
    const text = readFileSync(new URL(file), 'utf8');
    for (const [part, marker] of Object.entries(MARKERS)) if (marker.test(text)) offending.push(`${file} (${part})`);
  }
  const rows: Row[] = [
    { suite: 'import', name: 'root entry, cold', value: round(median(ms), 2), unit: 'ms', runs: ms.map((x) => round(x, 2)) },
    {
      suite: 'import',
      name: 'a one-line file module, cold (reference)',
      value: round(median(empty), 2),
      unit: 'ms',
      runs: empty.map((x) => round(x, 2)),
    },
    {
      // Each root sample and its reference sample ran back to back: their difference is what the
      // package's own files cost, apart from what the loader costs any file import.
      suite: 'import',
      name: 'root over the reference, pairwise',
      value: round(median(ms.map((x, i) => x - (empty[i] ?? Number.NaN))), 2),
      unit: 'ms',
      runs: ms.map((x, i) => round(x - (empty[i] ?? Number.NaN), 2)),
    },
    { suite: 'import', name: 'package modules loaded', value: loaded.length, unit: 'modules', runs: [loaded.length] },
    { suite: 'import', name: 'node built-ins loaded', value: builtins, unit: 'modules', runs: [builtins] },
  ];
  return { rows, loaded, offending };
}
