import { RATE_SHARE, type RateKindCode } from '../../../src/store/fleet-store.js';

/**
 * Requests to a fleet store as one process of a fleet sends them, with ordinary options: what
 * the store tests spread and change a field of.
 */

/** A breaker sync, without who asks (`owner`, `generation`, `report`). */
export const BREAKER_REPORT = {
  breakMs: 1_000,
  breakGrowth: 2,
  maxBreakMs: 60_000,
  breakJitter: 0,
  u: 0.5,
  wantProbe: false,
  probeLeaseMs: 10_000,
  ttlMs: 70_000,
};

/** Process `a` syncing its breaker, with nothing to report. */
export const BREAKER_REQUEST = { owner: 'a', generation: -1, report: 'none' as const, ...BREAKER_REPORT };

/** Process `a` asking its budget for 5 tokens, with nothing new to count. */
export const BUDGET_REQUEST = {
  owner: 'a',
  bucketMs: 1_000,
  windowBuckets: 10,
  ratio: 0.2,
  reserve: 10,
  requests: 0,
  returned: 0,
  returnBucket: 0,
  spent: 0,
  want: 5,
};

/** Process `a` pacing at 50/s (its share), throttling, no wait hint. */
export const PACE_REQUEST = {
  owner: 'a',
  rate: 0.05,
  kind: RATE_SHARE as RateKindCode,
  contributionMs: 2_000,
  minRate: 0.001,
  active: true,
  quietMs: 2_000,
  hintMs: 0,
  ttlMs: 60_000,
};
