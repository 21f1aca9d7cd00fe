import type { Scenario, ScenarioOption } from '../sim/scenario.js';
import { UsageError } from './usage-error.js';

/** The options every `kindly-calls sim <scenario>` accepts besides its own. */
export const COMMON_SIM_OPTIONS: readonly { flag: string; value: string | undefined; help: string }[] = [
  { flag: '--json', value: undefined, help: 'print one JSON document instead of the table' },
  { flag: '--report', value: 'FILE', help: 'also write a self-contained HTML report with charts' },
  {
    flag: '--config',
    value: 'FILE',
    help: 'simulate your own retry options (RetryOptions in .json, .js or .ts) as an extra row',
  },
  { flag: '--help', value: undefined, help: 'show this help' },
];

/** The common options that apply to `scenario` (`--config` only where it has retry rows). */
export function commonOptionsOf(scenario: Scenario): typeof COMMON_SIM_OPTIONS {
  return scenario.retryConfig === false ? COMMON_SIM_OPTIONS.filter((o) => o.flag !== '--config') : COMMON_SIM_OPTIONS;
}

export interface SimArgs {
  json: boolean;
  help: boolean;
  report: string | undefined;
  config: string | undefined;
  /** Values of the scenario's own options that were given (defaults not filled in). */
  params: Record<string, number | string>;
}

// Digits with optional `_` separators, optional fraction and exponent: 1_000_000, 0.5, 1e6.
const NUMBER = /^[+-]?(\d(_?\d)*(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/** Parses one option value per its declaration; throws `UsageError` naming the option. */
export function parseOptionValue(option: ScenarioOption, raw: string, command: string): number | string {
  const flag = `--${option.name}`;
  if (option.kind === 'choice') {
    const choices = option.choices ?? [];
    if (!choices.includes(raw)) throw new UsageError(`${command}: ${flag} must be one of ${choices.join(', ')}, got "${raw}"`);
    return raw;
  }
  const value = NUMBER.test(raw) ? Number(raw.replace(/_/g, '')) : Number.NaN;
  if (!Number.isFinite(value)) throw new UsageError(`${command}: ${flag} expects a number, got "${raw}"`);
  if (option.kind === 'integer' && !Number.isInteger(value)) {
    throw new UsageError(`${command}: ${flag} expects a whole number, got "${raw}"`);
  }
  if (option.min !== undefined && value < option.min)
    throw new UsageError(`${command}: ${flag} must be ≥ ${option.min}, got ${raw}`);
  if (option.max !== undefined && value > option.max)
    throw new UsageError(`${command}: ${flag} must be ≤ ${option.max}, got ${raw}`);
  return value;
}

/**
 * Parses `kindly-calls sim <scenario>`'s arguments: `--name value` or `--name=value`, flags without
 * a value for `--json` and `--help`. Unknown options, missing or malformed values, an option
 * given twice and stray arguments are `UsageError`s.
 */
export function parseSimArgs(scenario: Scenario, argv: readonly string[], invokedAs: string = scenario.name): SimArgs {
  const command = `sim ${invokedAs}`;
  const see = `see kindly-calls sim ${invokedAs} --help`;
  const out: SimArgs = { json: false, help: false, report: undefined, config: undefined, params: {} };
  const seen = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--') || arg === '--') {
      throw new UsageError(`${command}: unexpected argument "${arg}" (${see})`);
    }
    const eq = arg.indexOf('=');
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    if (seen.has(name)) throw new UsageError(`${command}: --${name} given twice`);
    seen.add(name);

    if (name === 'json' || name === 'help') {
      if (inline !== undefined) throw new UsageError(`${command}: --${name} takes no value`);
      out[name] = true;
      continue;
    }
    const option = scenario.options.find((o) => o.name === name);
    if (option === undefined && name !== 'report' && name !== 'config') {
      throw new UsageError(`${command}: unknown option --${name} (${see})`);
    }
    let value = inline;
    if (value === undefined) {
      const next = argv[i + 1];
      // A following "--flag" means the value is missing; "-5" is a (negative) value.
      if (next === undefined || next.startsWith('--')) throw new UsageError(`${command}: --${name} needs a value`);
      value = next;
      i++;
    }
    if (name === 'report' || name === 'config') {
      if (value === '') throw new UsageError(`${command}: --${name} needs a file name`);
      if (name === 'config' && scenario.retryConfig === false) {
        throw new UsageError(`${command}: --config does not apply here: this scenario has no retry rows to add yours beside`);
      }
      out[name] = value;
      continue;
    }
    out.params[name] = parseOptionValue(option!, value, command);
  }
  return out;
}
