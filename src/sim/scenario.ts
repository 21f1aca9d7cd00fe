import type { RetryOptions } from '../policies/retry-decision.js';
import type { Report } from './report/model.js';

/** One command-line option of a scenario (`--name value`). */
export interface ScenarioOption {
  /** The flag without dashes, e.g. `clients`. */
  name: string;
  kind: 'integer' | 'number' | 'choice';
  /** Smallest allowed value (integer / number). */
  min?: number;
  /** Largest allowed value (integer / number). */
  max?: number;
  /** Allowed values (choice). */
  choices?: readonly string[];
  default: number | string;
  /** One line for `--help`, including the unit. */
  help: string;
}

/** Parsed option values by name; every declared option is present (defaults filled in). */
export type ScenarioParams = Readonly<Record<string, number | string>>;

export interface ScenarioContext {
  /**
   * The user's own retry options (`--config`), already validated by `RetryPolicy`: simulated
   * as an extra row named `config` beside the built-in ones.
   */
  retry?: RetryOptions;
  /** Called now and then during long runs with work done so far out of `total`. */
  onProgress?: (done: number, total: number) => void;
}

export interface ScenarioResult {
  /** The `--json` document. Plain data only: numbers are finite or `null`. */
  json: Record<string, unknown>;
  /** Tables, charts and notes for the terminal and the `--report` page. */
  report: Report;
}

/**
 * A simulation the CLI runs (`kindly-calls sim <name>` or `kindly-calls sim ./file.ts`): it
 * derives the options, help and output from it. `run` may return its result or a promise of
 * it (a scenario that reads a data file first, say); the CLI awaits either.
 */
export interface Scenario {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The documented parameters and model, printed by `kindly-calls sim <name> --help`. */
  description: readonly string[];
  options: readonly ScenarioOption[];
  /**
   * Whether the scenario simulates the user's `--config` retry options as a row of its own
   * (`context.retry`). `false`: the CLI refuses `--config` for it rather than ignore it.
   * @default true
   */
  retryConfig?: boolean;
  run(params: ScenarioParams, context: ScenarioContext): ScenarioResult | Promise<ScenarioResult>;
}

/**
 * A built-in simulation: synchronous, so that the library and tests read its result at once.
 * Adding one is one file exporting a `BuiltinScenario` plus one line in the registry
 * (`scenarios.ts`).
 */
export interface BuiltinScenario extends Scenario {
  run(params: ScenarioParams, context: ScenarioContext): ScenarioResult;
}

/** Reads a numeric option (the CLI has already checked its kind and range). */
export function num(params: ScenarioParams, name: string): number {
  const v = params[name];
  if (typeof v !== 'number') throw new TypeError(`Option --${name} is not a number: ${String(v)}`);
  return v;
}

/** Reads a choice option. */
export function str(params: ScenarioParams, name: string): string {
  const v = params[name];
  if (typeof v !== 'string') throw new TypeError(`Option --${name} is not a string: ${String(v)}`);
  return v;
}

/** Fills in defaults for options not given. */
export function withDefaults(scenario: Scenario, given: ScenarioParams = {}): ScenarioParams {
  const out: Record<string, number | string> = {};
  for (const o of scenario.options) out[o.name] = given[o.name] ?? o.default;
  return out;
}
