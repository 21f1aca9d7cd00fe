/**
 * The layers of src/, innermost first. A module may import from its own layer or an inner
 * one, never an outer one — so the root entry never loads HTTP code, the simulator runs
 * the policies and the orchestration without the async runtime, and nothing reaches the CLI.
 *
 *   time, random, options, hints ← errors, classify, backoff ← policies ← orchestration
 *     ← runtime, telemetry, store ← http, adapters, grpc, chaos ← cli
 *   sim: policies and orchestration (and what they stand on), and the fleet store's shared
 *   state (store/) to model a fleet — never the async runtime, HTTP or the CLI.
 *
 * What is checked is what loads what: value imports and re-exports. A type-only import
 * (`import type`, or every binding marked `type`) vanishes at build time and is allowed —
 * e.g. a fleet policy naming the store's message types.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

const LAYER: Record<string, number> = {
  time: 0,
  random: 0,
  options: 0,
  hints: 0,
  // The testing entry re-exports the clock and the random source.
  testing: 0,
  errors: 1,
  classify: 1,
  backoff: 1,
  policies: 2,
  orchestration: 3,
  sim: 4,
  runtime: 4,
  telemetry: 4,
  store: 4,
  http: 5,
  adapters: 5,
  grpc: 5,
  // Fault injection wraps the runtime's calls and the simulator's dependencies.
  chaos: 5,
  cli: 6,
};
/** What the simulator may stand on besides its own files. */
const SIM_MAY_IMPORT = new Set([
  'time',
  'random',
  'options',
  'hints',
  'errors',
  'classify',
  'backoff',
  'policies',
  'orchestration',
  'store',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Whether an import or export statement loads code (not `import type`, not only `type` bindings). */
function loadsCode(statement: string): boolean {
  if (/^\s*(?:import|export)\s+type\s/.test(statement)) return false;
  const braces = /\{([^}]*)\}/.exec(statement);
  if (braces === null) return true; // `import x from`, `import * as`, `export * from`
  if (/^\s*import\s+[\w$]+\s*,/.test(statement)) return true; // a default binding beside the braces
  const bindings = (braces[1] as string)
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
  return bindings.length === 0 || bindings.some((b) => !b.startsWith('type '));
}

/** Every relative import or re-export of a file that loads code. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*((?:import|export)\s[^;]*?from\s+'(\.[^']+)')/g)]
    .filter((m) => loadsCode(m[1] as string))
    .map((m) => resolve(dirname(file), (m[2] as string).replace(/\.js$/, '.ts')));
}

/** The top folder of src/ a file belongs to (`index` for src/index.ts). */
function areaOf(file: string): string {
  const rel = relative(SRC, file);
  return rel.includes('/') ? (rel.split('/')[0] as string) : 'index';
}

/** Whether a module of folder `from` may import one of folder `to`. */
function allowed(from: string, to: string): boolean {
  if (from === to || from === 'index') return true;
  if (from === 'sim') return SIM_MAY_IMPORT.has(to);
  // Only the CLI stands on the simulator.
  if (to === 'sim') return from === 'cli';
  const f = LAYER[from];
  const t = LAYER[to];
  return f !== undefined && t !== undefined && t <= f;
}

/** Wrong-direction imports in `files`, as `from → to` lines. */
function wrongDirection(files: string[]): string[] {
  const problems: string[] = [];
  for (const file of files) {
    for (const target of importsOf(file)) {
      if (!allowed(areaOf(file), areaOf(target))) problems.push(`${relative(SRC, file)} → ${relative(SRC, target)}`);
    }
  }
  return problems;
}

/** Every file the module graph of `entry` loads (value and type imports alike). */
function reachable(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...importsOf(file));
  }
  return seen;
}

describe('import direction', () => {
  const files = sourceFiles(SRC);

  it('every folder of src/ has a layer', () => {
    const areas = new Set(files.map(areaOf));
    areas.delete('index');
    expect([...areas].filter((a) => LAYER[a] === undefined)).toEqual([]);
  });

  it('no module imports from an outer layer; the simulator stands on policies and orchestration only', () => {
    expect(wrongDirection(files)).toEqual([]);
  });

  it('the root entry loads no HTTP, adapter, simulator or CLI code', () => {
    const loaded = [...reachable(join(SRC, 'index.ts'))].map((f) => relative(SRC, f));
    expect(loaded.filter((f) => /^(http|adapters|sim|cli)\//.test(f))).toEqual([]);
  });

  it('type-only imports do not count; any value binding does', () => {
    expect(loadsCode("import type { A } from './a.js'")).toBe(false);
    expect(loadsCode("import { type A, type B } from './a.js'")).toBe(false);
    expect(loadsCode("import { type A, b } from './a.js'")).toBe(true);
    expect(loadsCode("export * from './a.js'")).toBe(true);
    expect(loadsCode("import x, { type A } from './a.js'")).toBe(true);
  });

  it('the rule refuses the imports it exists to stop', () => {
    expect(allowed('runtime', 'http')).toBe(false);
    expect(allowed('policies', 'runtime')).toBe(false);
    expect(allowed('sim', 'runtime')).toBe(false);
    expect(allowed('http', 'cli')).toBe(false);
    expect(allowed('runtime', 'sim')).toBe(false);
    expect(allowed('http', 'runtime')).toBe(true);
    expect(allowed('sim', 'orchestration')).toBe(true);
    expect(allowed('cli', 'sim')).toBe(true);
  });
});
