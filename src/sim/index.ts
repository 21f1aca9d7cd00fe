// The simulator's public surface: the engine and models for writing a scenario, the built-in
// scenarios, and the renderers. The `kindly-calls sim` command (src/cli) is built on exactly this.
export { BucketCounter } from './bucket-counter.js';
export {
  ANSWER_HANG,
  ANSWER_OK,
  ANSWER_REFUSED,
  type Answer,
  Dependency,
  type DependencyOptions,
  REFUSED,
  TIMED_OUT,
} from './dependency.js';
export {
  exponential,
  LATENCY_DISTRIBUTIONS,
  type Latency,
  type LatencyDistribution,
  lognormal,
  normal,
  sampleLatency,
} from './distributions.js';
export { type EventHandler, type EventKind, type ScheduledEvent, Simulation } from './engine.js';
export { EventQueue } from './event-queue.js';
export { ADAPTIVE_HERD_STRATEGY, adaptiveStrategy } from './herd-adaptive.js';
export {
  type DelayedClients,
  delayedClients,
  type HerdClients,
  type HerdRun,
  type HerdSetup,
  type HerdStrategy,
  type HerdWire,
  herdLowerBound,
  REJECTED,
  runHerd,
} from './herd-run.js';
export { HERD_RETRY_OPTIONS, RETRY_HERD_STRATEGIES, retryStrategy } from './herd-strategies.js';
export { LayerChain, type LayerChainOptions } from './layer-chain.js';
export { workConservingFinish } from './models/concurrency.js';
export {
  arrivalRandom,
  buildServer,
  networkRandom,
  SERVER_MODELS,
  type ServerModel,
  type ServerSpec,
  serverLowerBound,
} from './models/index.js';
export { renderHtml } from './report/html.js';
export type { Chart, Marker, Report, Series, Table } from './report/model.js';
export { renderTable, renderText } from './report/text.js';
export { GIVE_UP, RetryState } from './retry-state.js';
export type { BuiltinScenario, Scenario, ScenarioContext, ScenarioOption, ScenarioParams, ScenarioResult } from './scenario.js';
export { num, str, withDefaults } from './scenario.js';
export {
  type DeadDependencySetup,
  type DeadDependencyVariant,
  runDeadDependency,
  type VariantPolicies,
} from './scenarios/dead-dependency.js';
export {
  type DownstreamFactory,
  type RuntimeVariant,
  runDeadDependencyOnDownstream,
} from './scenarios/dead-dependency-runtime.js';
export { HERD_STRATEGIES, HERD_STRATEGY_NAMES } from './scenarios/herd.js';
export { findScenario, SCENARIOS } from './scenarios.js';
export {
  type SimCallEnd,
  type SimCallee,
  SimDownstream,
  type SimDownstreamOptions,
} from './sim-downstream.js';
export { type SlotResponse, SlotServer, type SlotServerOptions } from './slot-server.js';
export { SteadyArrivals, type SteadyArrivalsOptions } from './steady-arrivals.js';
export { type Spread, spread } from './summary.js';
