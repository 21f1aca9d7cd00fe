import type { BuiltinScenario } from './scenario.js';
import { amplification } from './scenarios/amplification.js';
import { budget } from './scenarios/budget.js';
import { deadDependency } from './scenarios/dead-dependency.js';
import { fleet } from './scenarios/fleet.js';
import { hedging } from './scenarios/hedging.js';
import { herd } from './scenarios/herd.js';
import { latencySpike } from './scenarios/latency-spike.js';
import { queueing } from './scenarios/queueing.js';
import { uniform } from './scenarios/uniform.js';

/** The built-in scenarios, in the order `kindly-calls sim --help` lists them. */
export const SCENARIOS: readonly BuiltinScenario[] = [
  herd,
  uniform,
  amplification,
  deadDependency,
  budget,
  queueing,
  hedging,
  latencySpike,
  fleet,
];

export function findScenario(name: string): BuiltinScenario | undefined {
  return SCENARIOS.find((s) => s.name === name);
}
