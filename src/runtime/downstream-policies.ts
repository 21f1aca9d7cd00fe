import { ALL_OPTIONAL_POLICIES } from '../orchestration/all-optional-policies.js';
import { LITE_POLICIES, type OptionalPolicies } from '../orchestration/optional-policies.js';
import type { Random } from '../random/random.js';
import type { Clock } from '../time/clock.js';
import { LatencyLane, type LatencyLaneOptions } from './latency-lane.js';

/**
 * What a downstream builds beyond its core (`OptionalPolicies`: adaptive pacing, the latency
 * policies), with the runtime's own part of the latency policies: a lane's, which waits on the
 * clock and on signals for a slot of the adaptive limit.
 */
export interface DownstreamPolicies {
  readonly optional: OptionalPolicies;
  /** One lane's latency policies; `undefined` where they are left out. */
  readonly latencyLane: ((options: LatencyLaneOptions, clock: Clock, random: Random) => LatencyLane) | undefined;
}

/** The root entry's `downstream()`: everything. */
export const ALL_DOWNSTREAM_POLICIES: DownstreamPolicies = {
  optional: ALL_OPTIONAL_POLICIES,
  latencyLane: (options, clock, random) => new LatencyLane(options, clock, random),
};

/** `kindly-calls/lite`'s `downstream()`: neither adaptive pacing nor the latency policies. */
export const LITE_DOWNSTREAM_POLICIES: DownstreamPolicies = { optional: LITE_POLICIES, latencyLane: undefined };
