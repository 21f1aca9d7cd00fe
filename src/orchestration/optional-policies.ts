import type { OptionsValidator } from '../options/validate.js';
import type { AdaptiveConcurrencyOptions } from '../policies/adaptive-concurrency.js';
import type { DerivedTimeoutOptions } from '../policies/derived-timeout.js';
import type { HedgingOptions, HedgingPolicy } from '../policies/hedging.js';
import type { LatencyPolicies } from '../policies/latency-policies.js';
import type { Pacer, PacerOptions } from '../policies/pacer.js';
import type { Random } from '../random/random.js';
import type { Queue, Stage } from './stage.js';
import type { BudgetLedger } from './stages/budget-stage.js';
import type { PaceBooker } from './stages/pacing-stage.js';

/**
 * The policies a downstream builds only when its options ask for them — adaptive pacing, and
 * the latency policies (adaptive concurrency limit, derived attempt timeout, hedging) — reached
 * through this one seam rather than imported where a downstream is built. Together they are
 * about 40 % of the code a browser app bundles with `downstream()`, and a bundler can only
 * leave out code nothing imports: `kindly-calls/lite` builds its downstreams without them
 * (`LITE_POLICIES`), the root entry and the simulator with both (`ALL_OPTIONAL_POLICIES`). The
 * runtime adds the one part that waits on timers and signals, a lane's latency policies
 * (`DownstreamPolicies`, src/runtime/downstream-policies.ts).
 */
export interface OptionalPolicies {
  /** Adaptive pacing (`pacing`), or `undefined` where it is left out. */
  readonly pacing: PacingKit | undefined;
  /** The latency policies (`concurrency`, `hedging`, `attemptTimeoutMs: { … }`), or `undefined`. */
  readonly latency: LatencyKit | undefined;
  /** The entry whose `downstream()` builds from these, named in the error for an option that needs one left out. */
  readonly entry: string;
}

/** How a lane's pacer is used: first attempts paced too, told of each wait, where slots are booked. */
export interface PacingUse {
  paceFirstAttempts?: boolean;
  maxHintMs?: number;
  onDelay?: (nowMs: number, delayMs: number) => void;
  booker?: PaceBooker | undefined;
}

/** How the latency stage reports a refusal and where an attempt waits for a slot of the limit. */
export interface LimitUse {
  onLimited?: (limit: number, nowMs: number, partition: string | undefined) => void;
  line?: (partition: string | undefined) => Queue;
}

/** What adaptive pacing adds to a downstream. */
export interface PacingKit {
  /** A pacer (built from the options to check them too: it throws on bad ones). */
  pacer(options: PacerOptions): Pacer;
  /** The pipeline stage that holds attempts to the pacer's slots. */
  stage(pacer: Pacer, use: PacingUse | undefined): Stage;
}

/** What the latency policies add to a downstream (their lane part is the runtime's: `DownstreamPolicies`). */
export interface LatencyKit {
  /** Each builds the policy to check its options (it throws on bad ones). */
  checkDerivedTimeout(options: DerivedTimeoutOptions): void;
  checkConcurrency(options: AdaptiveConcurrencyOptions, random: Random): void;
  checkHedging(options: HedgingOptions): void;
  /** The stage that holds attempts to the adaptive limit and times them. */
  stage(policies: LatencyPolicies, use: LimitUse | undefined): Stage;
  /** The stage that decides when to hedge and grants each hedge (drawing on `budget`). */
  hedgingStage(policy: HedgingPolicy, budget: BudgetLedger | undefined): Stage;
}

/** What each optional part is called in the message for an option that needs it. */
const PART_NAMES = { pacing: 'adaptive pacing', latency: 'the latency policies' } as const;

/**
 * Checks `option` by `check` on the `part` of `policies` it needs, or records on `v` that this
 * build of `downstream()` leaves that part out (`shown`: the option as the message names it).
 */
export function checkOptional<P extends keyof typeof PART_NAMES>(
  v: OptionsValidator,
  policies: OptionalPolicies,
  part: P,
  option: string,
  check: (kit: NonNullable<OptionalPolicies[P]>) => unknown,
  shown = option,
): void {
  const kit = policies[part];
  if (kit === undefined) {
    v.check(
      false,
      `\`${shown}\` needs ${PART_NAMES[part]}, which ${policies.entry} leaves out: import downstream from 'kindly-calls' instead`,
    );
  } else v.nested(option, () => check(kit as NonNullable<OptionalPolicies[P]>));
}

/**
 * `kit`, which a lane with `part` needs. The options' checks turn down a downstream whose
 * options ask for a part its policies leave out (`checkOptional`), so this throws only for a lane
 * built around them.
 */
export function built<T>(kit: T | undefined, part: string): T {
  if (kit === undefined) throw new Error(`kindly-calls: a lane has ${part}, which its downstream was built without`);
  return kit;
}

/** `kindly-calls/lite`: neither adaptive pacing nor the latency policies. */
export const LITE_POLICIES: OptionalPolicies = { pacing: undefined, latency: undefined, entry: 'kindly-calls/lite' };
