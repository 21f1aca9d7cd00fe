import { statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import type { Scenario, ScenarioOption } from '../sim/scenario.js';
import { importUserModule } from './load-module.js';
import { UsageError } from './usage-error.js';

const MODULE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts']);

/** Whether `sim`'s argument names a file (a path or a module name) rather than a built-in scenario. */
export function isScenarioFile(name: string): boolean {
  return name.includes('/') || name.includes('\\') || MODULE_EXTENSIONS.has(extname(name));
}

/**
 * Loads a user's scenario module for `kindly-calls sim ./my-scenario.ts`: its default export
 * (or an export named `scenario`) is a `Scenario` — the same shape as the built-ins, so it
 * gets the same `--json`, `--report`, `--seeds`-style options, `--help` and progress.
 */
export async function loadUserScenario(file: string, cwd: string): Promise<Scenario> {
  if (!MODULE_EXTENSIONS.has(extname(file))) {
    throw new UsageError(`sim ${file}: a scenario file must be .js, .mjs, .cjs, .ts, .mts or .cts`);
  }
  const path = resolve(cwd, file);
  if (!isFile(path)) throw new UsageError(`sim ${file}: file not found`);
  let mod: unknown;
  try {
    mod = await importUserModule(path, cwd);
  } catch (error) {
    throw new Error(`sim ${file}: cannot load (${loadFailure(error)})`);
  }
  const exports = mod as { default?: unknown; scenario?: unknown };
  const candidate = exports.scenario ?? exports.default;
  const problems = scenarioProblems(candidate);
  if (problems.length > 0) {
    throw new UsageError(`sim ${file}: the default export is not a scenario (${problems.join('; ')})`);
  }
  return candidate as Scenario;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * Why a scenario module did not load, in one line. The commonest: it imports this package
 * from a folder whose project does not have it (`npx kindly-calls sim ./s.ts` elsewhere).
 */
function loadFailure(error: unknown): string {
  const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /['"]kindly-calls(\/[^'"]*)?['"]/.test(message)) {
    return `${message}; install kindly-calls in the scenario's project (npm i -D kindly-calls) so that its imports resolve`;
  }
  return message;
}

/** Every way `value` falls short of a `Scenario`, so the user fixes them all at once. */
function scenarioProblems(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [`expected an object, got ${value === null ? 'null' : typeof value}`];
  const s = value as Partial<Record<keyof Scenario, unknown>>;
  const problems: string[] = [];
  if (typeof s.name !== 'string' || s.name.length === 0) problems.push('`name` must be a non-empty string');
  if (typeof s.summary !== 'string') problems.push('`summary` must be a string');
  if (!Array.isArray(s.description) || !s.description.every((l) => typeof l === 'string'))
    problems.push('`description` must be an array of strings');
  if (!Array.isArray(s.options)) problems.push('`options` must be an array');
  else for (const [i, o] of (s.options as ScenarioOption[]).entries()) problems.push(...optionProblems(o, i));
  if (typeof s.run !== 'function') problems.push('`run(params, context)` must be a function');
  return problems;
}

/** Flags every scenario has already: an option of the same name could never be set. */
const RESERVED = new Set(['json', 'report', 'config', 'help', 'h']);

/** Every way one declared option falls short: its default must be one it would accept. */
function optionProblems(o: ScenarioOption, i: number): string[] {
  if (o === null || typeof o !== 'object' || typeof o.name !== 'string' || o.name.length === 0)
    return [`options[${i}] needs a \`name\``];
  const at = `options[${i}] (--${o.name})`;
  if (RESERVED.has(o.name)) return [`${at}: --${o.name} is the CLI's own; choose another name`];
  if (o.kind === 'choice') {
    if (!Array.isArray(o.choices) || o.choices.length === 0 || !o.choices.every((c) => typeof c === 'string'))
      return [`${at}: a choice needs \`choices\`, a non-empty array of strings`];
    return o.choices.includes(o.default as string)
      ? []
      : [`${at}: \`default\` must be one of its choices, got ${JSON.stringify(o.default)}`];
  }
  if (o.kind !== 'integer' && o.kind !== 'number') return [`${at}: \`kind\` must be integer, number or choice`];
  const d = o.default;
  if (typeof d !== 'number' || !Number.isFinite(d) || (o.kind === 'integer' && !Number.isInteger(d)))
    return [`${at}: \`default\` must be a${o.kind === 'integer' ? ' whole' : ''} finite number, got ${JSON.stringify(d)}`];
  if ((o.min !== undefined && d < o.min) || (o.max !== undefined && d > o.max))
    return [`${at}: \`default\` ${d} is outside its own min/max`];
  return [];
}

/**
 * Every way what a scenario's `run()` returned falls short of `{ json, report }`, checked
 * before anything is printed so that a user's mistake is one line naming it rather than a
 * renderer's TypeError.
 */
export function scenarioResultProblems(value: unknown): string[] {
  if (value === null || typeof value !== 'object') return [`got ${describeValue(value)}`];
  const r = value as Record<string, unknown>;
  const problems: string[] = [];
  if (r.json === null || typeof r.json !== 'object' || Array.isArray(r.json))
    problems.push(`\`json\` must be an object, got ${describeValue(r.json)}`);
  const report = r.report;
  if (report === null || typeof report !== 'object') problems.push(`\`report\` must be an object, got ${describeValue(report)}`);
  else {
    const rep = report as Record<string, unknown>;
    if (typeof rep.title !== 'string') problems.push('`report.title` must be a string');
    for (const key of ['notes', 'parameters', 'tables', 'charts'])
      if (!Array.isArray(rep[key])) problems.push(`\`report.${key}\` must be an array`);
  }
  return problems;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`;
}
