import type { Scenario } from '../sim/scenario.js';
import { SCENARIOS } from '../sim/scenarios.js';
import { COMMON_SIM_OPTIONS, commonOptionsOf } from './args.js';

function columns(rows: readonly (readonly [string, string])[], indent = 2): string[] {
  const w = Math.max(...rows.map(([a]) => a.length));
  return rows.map(([a, b]) => `${' '.repeat(indent)}${a.padEnd(w)}  ${b}`);
}

export function mainHelp(): string {
  return [
    'kindly — call other services without hurting them and without being hurt by them.',
    '',
    'Usage:',
    ...columns([
      ['kindly-calls sim <scenario> [options]', "run kindly's policies on a virtual clock (see kindly-calls sim --help)"],
      ['kindly-calls --version', 'print the version'],
      ['kindly-calls --help', 'show this help'],
    ]),
    '',
  ].join('\n');
}

export function simHelp(): string {
  return [
    'Usage: kindly-calls sim <scenario> [options]',
    '       kindly-calls sim ./my-scenario.ts [options]   (your own scenario module: see docs/simulator.md)',
    '',
    "Runs kindly's own policies against a simulated callee on a virtual clock with a seeded PRNG:",
    'the same options and seed give the same output, bit for bit.',
    '',
    'Scenarios:',
    ...columns(SCENARIOS.map((s) => [s.name, s.summary] as const)),
    '',
    "Options for every scenario (--config for those with retry rows: see each one's --help):",
    ...columns(COMMON_SIM_OPTIONS.map((o) => [o.value ? `${o.flag} ${o.value}` : o.flag, o.help] as const)),
    '',
    "Each scenario's own options and model: kindly-calls sim <scenario> --help",
    '',
  ].join('\n');
}

export function scenarioHelp(scenario: Scenario, invokedAs: string = scenario.name): string {
  const own = scenario.options.map((o) => {
    const what = o.kind === 'choice' ? 'NAME' : o.kind === 'integer' ? 'N' : 'X';
    const choices = o.kind === 'choice' ? `: ${(o.choices ?? []).join(', ')}` : '';
    return [`--${o.name} ${what}`, `${o.help}${choices} (default ${o.default})`] as const;
  });
  return [
    `Usage: kindly-calls sim ${invokedAs} [options]`,
    '',
    `${scenario.summary}.`,
    '',
    ...scenario.description,
    '',
    'Options:',
    ...columns([...own, ...commonOptionsOf(scenario).map((o) => [o.value ? `${o.flag} ${o.value}` : o.flag, o.help] as const)]),
    '',
  ].join('\n');
}
