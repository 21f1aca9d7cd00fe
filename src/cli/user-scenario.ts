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
  let mod: unknown;
  try {
    mod = await importUserModule(path, cwd);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ERR_MODULE_NOT_FOUND' || code === 'ENOENT') throw new UsageError(`sim ${file}: file not found`);
    throw error;
  }
  const exports = mod as { default?: unknown; scenario?: unknown };
  const candidate = exports.scenario ?? exports.default;
  const problems = scenarioProblems(candidate);
  if (problems.length > 0) {
    throw new UsageError(`sim ${file}: the default export is not a scenario (${problems.join('; ')})`);
  }
  return candidate as Scenario;
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
  else
    (s.options as ScenarioOption[]).forEach((o, i) => {
      if (o === null || typeof o !== 'object' || typeof o.name !== 'string') problems.push(`options[${i}] needs a \`name\``);
      else if (!['integer', 'number', 'choice'].includes(o.kind))
        problems.push(`options[${i}].kind must be integer, number or choice`);
    });
  if (typeof s.run !== 'function') problems.push('`run(params, context)` must be a function');
  return problems;
}
