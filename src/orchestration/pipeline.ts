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
  /** Whether every stage takes a coarse start (`Stage.coarseStart`); true for no stage. */
  readonly coarseStart: boolean;
  /** Gates that may observe a success (`observesSuccess` a getter, or `true`). */
  private readonly successObservers: readonly Stage[];

  constructor(stages: readonly Stage[]) {
    this.stages = compact(stages);
    this.starters = compact(stages.filter((s) => s.start !== undefined));
    this.gates = compact(stages.filter((s) => s.enter !== undefined || s.exit !== undefined));
    this.retryAdmitters = compact(stages.filter((s) => s.admitRetry !== undefined).reverse());
    this.retryTimers = compact(stages.filter((s) => s.retryDelay !== undefined).reverse());
    this.timer = stages.filter((s) => s.attemptTimeoutMs !== undefined).at(-1);
    this.hedgeGates = compact(stages.filter((s) => s.enterHedge !== undefined || s.exitHedge !== undefined).reverse());
    this.hedger = stages.find((s) => s.hedgeDelayMs !== undefined);
    this.successObservers = compact(this.gates.filter((s) => !neverObservesSuccess(s)));
    this.coarseStart = stages.every((s) => s.coarseStart === true);
  }

  /**
   * Whether a success must be reported with a real `now`: some gate observes it at this
   * moment (a closed consecutive-mode breaker does not, so the common success skips a clock
   * read, ~45 ns on Node 20).
   */
  get successNeedsClock(): boolean {
    const observers = this.successObservers;
    for (let i = 0; i < observers.length; i++) if (observers[i]!.observesSuccess) return true;
    return false;
  }
}

/** `observesSuccess` is an own data property set to `false`: fixed, never true (see `Stage`). */
function neverObservesSuccess(stage: Stage): boolean {
  const own = Object.getOwnPropertyDescriptor(stage, 'observesSuccess');
  return own !== undefined && 'value' in own && own.value === false;
}
