// kindly-calls/chaos: fault injection for staging and tests. Never enabled by default.
export { ChaosFaultError } from './fault.js';
export { CHAOS_ENV, type ChaosOptions, enableChaos } from './inject.js';
export {
  type ChaosFault,
  type ChaosFaultKind,
  type ChaosKeyMatch,
  type ChaosLatency,
  ChaosPlan,
  type ChaosPlanOptions,
  type DrawnFault,
} from './plan.js';
export { ChaosDependency } from './sim.js';
