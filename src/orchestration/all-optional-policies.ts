import { AdaptiveConcurrencyLimit } from '../policies/adaptive-concurrency.js';
import { DerivedTimeout } from '../policies/derived-timeout.js';
import { HedgingPolicy } from '../policies/hedging.js';
import { Pacer } from '../policies/pacer.js';
import type { OptionalPolicies } from './optional-policies.js';
import { HedgingStage } from './stages/hedging-stage.js';
import { LatencyStage } from './stages/latency-stage.js';
import { PacingStage } from './stages/pacing-stage.js';

/** Adaptive pacing and the latency policies: what the root entry's `downstream()` builds from. */
export const ALL_OPTIONAL_POLICIES: OptionalPolicies = {
  pacing: {
    pacer: (options) => new Pacer(options),
    stage: (pacer, use) => new PacingStage(pacer, use),
  },
  latency: {
    checkDerivedTimeout: (options) => void new DerivedTimeout(options),
    checkConcurrency: (options, random) => void new AdaptiveConcurrencyLimit(options, random),
    checkHedging: (options) => void new HedgingPolicy(options),
    stage: (policies, use) => new LatencyStage(policies, use),
    hedgingStage: (policy, budget) => new HedgingStage(policy, { budget }),
  },
  entry: 'kindly-calls',
};
