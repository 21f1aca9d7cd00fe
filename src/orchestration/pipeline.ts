import type { Stage } from './stage.js';

/**
 * `list` without spare capacity. An array grown by `push` (or made by `filter`) keeps room
 * for 17 elements, ~150 B; a pipeline per lane holds five of them. (A copy, not one shared
 * empty array: an empty literal has another elements kind, which would make the call loops
 * over these lists polymorphic.)
 */
function compact(list: readonly Stage[]): readonly Stage[] {
  return list.slice();
}

export class Pipeline {
  static readonly EMPTY = new Pipeline([]);

  /** Every stage, in pipeline order. */
  readonly stages: readonly Stage[];
  /** Stages told when a call starts, in order. */
  readonly starters: readonly Stage[];
  /** Stages around each attempt (`enter` and/or `exit`), in order. */
  readonly gates: readonly Stage[];
  /** Stages asked before a retry, innermost first. */
  readonly retryAdmitters: readonly Stage[];
  /** Stages that may replace a retry's delay, innermost first. */
  readonly retryTimers: readonly Stage[];
  /** The stage that sets attempt timeouts, if any (the last one that offers to). */
  readonly timer: Stage | undefined;
  /** Stages that take part in admitting hedges, innermost first. */
  readonly hedgeGates: readonly Stage[];
  /** The stage that says when to hedge, if any. */
  readonly hedger: Stage | undefined;

  constructor(stages: readonly Stage[]) {
    this.stages = compact(stages);
    this.starters = compact(stages.filter((s) => s.start !== undefined));
    this.gates = compact(stages.filter((s) => s.enter !== undefined || s.exit !== undefined));
    this.retryAdmitters = compact(stages.filter((s) => s.admitRetry !== undefined).reverse());
    this.retryTimers = compact(stages.filter((s) => s.retryDelay !== undefined).reverse());
    this.timer = stages.filter((s) => s.attemptTimeoutMs !== undefined).at(-1);
    this.hedgeGates = compact(stages.filter((s) => s.enterHedge !== undefined || s.exitHedge !== undefined).reverse());
    this.hedger = stages.find((s) => s.hedgeDelayMs !== undefined);
  }

  /**
   * Whether a success must be reported with a real `now`: some gate observes it at this
   * moment (a closed consecutive-mode breaker does not, so the common success skips a clock
   * read, ~45 ns on Node 20).
   */
  get successNeedsClock(): boolean {
    const gates = this.gates;
    for (let i = 0; i < gates.length; i++) if (gates[i]!.observesSuccess) return true;
    return false;
  }
}
