import { callHook } from '../errors/report-hook-error.js';
import { lanePipeline } from '../orchestration/downstream-plan.js';
import { built } from '../orchestration/optional-policies.js';
import type { Pipeline } from '../orchestration/pipeline.js';
import type { Stage } from '../orchestration/stage.js';
import type { BudgetLedger } from '../orchestration/stages/budget-stage.js';
import type { PaceBooker } from '../orchestration/stages/pacing-stage.js';
import type { BulkheadOptions } from '../policies/bulkhead-slots.js';
import { type BreakerState, CircuitBreaker, type CircuitBreakerOptions } from '../policies/circuit-breaker.js';
import { KeyedCache } from '../policies/keyed-cache.js';
import type { Pacer, PacerOptions } from '../policies/pacer.js';
import type { Random } from '../random/random.js';
import type { Clock } from '../time/clock.js';
import { Bulkhead } from './bulkhead.js';
import type { DownstreamPolicies } from './downstream-policies.js';
import type { LatencyLane, LatencyLaneOptions } from './latency-lane.js';

/**
 * The per-key protection state of one downstream: a circuit breaker, a bulkhead and a pacer
 * for each key (by default one key, the downstream's name; `fetchThrough` keys by host). Each
 * is optional. Lanes are created on first use and bounded in number.
 */
export interface Lane {
  readonly key: string;
  readonly breaker: CircuitBreaker | undefined;
  readonly bulkhead: Bulkhead | undefined;
  readonly pacer: Pacer | undefined;
  /** Adaptive concurrency limit, derived attempt timeout, hedging (any of them). */
  readonly latency: LatencyLane | undefined;
  /** The call pipeline for this key, in order: budget → breaker → pacing → bulkhead → concurrency limit. */
  readonly pipeline: Pipeline;
}

export interface LaneOptions {
  breaker: CircuitBreakerOptions | undefined;
  bulkhead: BulkheadOptions | undefined;
  pacing: PacerOptions | undefined;
  latency?: LatencyLaneOptions | undefined;
  /** Told of an attempt the adaptive concurrency limit refused. */
  onConcurrencyLimited?: (key: string, limit: number, nowMs: number, partition: string | undefined) => void;
  clock: Clock;
  random: Random;
  /** The downstream's budget stage, shared by every lane (first in each lane's stages). */
  budgetStage: Stage | undefined;
  /** The retry budgets hedges draw on. */
  budgetLedger?: BudgetLedger | undefined;
  /** Pace first attempts too. */
  paceFirstAttempts: boolean;
  /** The longest wait hint a pacer is told (the retry policy's `maxRetryAfterMs`). */
  maxPacingHintMs: number;
  /** Told of every wait a pacer imposes. */
  onPacingDelay: (pacer: Pacer, nowMs: number, delayMs: number) => void;
  /** Where a lane's pacer books its slots (a fleet store's shared queue). @default the pacer */
  paceBooker?: (key: string, pacer: Pacer) => PaceBooker;
  /** Told of every breaker state change. */
  onBreakerChange: (key: string, from: BreakerState, to: BreakerState, nowMs: number) => void;
  /** Most keys held at once; beyond it the least recently used droppable lane is evicted. */
  maxKeys: number;
  /** Told of each lane created (a fleet store links its breaker and pacer). */
  onCreate?: (lane: Lane) => void;
  /** What builds a lane's pacer and latency policies (and their stages). */
  policies: DownstreamPolicies;
}

/**
 * Whether `lane` must outlive the `maxKeys` bound: dropping it now would let through calls its
 * state holds back, or lose an answer that must reach it. Each reason ends by itself (work
 * settles, a break lasts at most `maxBreakMs`, a wait hint at most `maxRetryAfterMs`, throttling
 * `quietMs` after the last rejection), so lanes of keys never called again become droppable and
 * the count comes back to `maxKeys` — except an isolation by hand, which an operator ends.
 *
 * A breaker whose break is over is not a reason. Only a call moves it on from half-open, so a
 * host never called again (a crawler's, a webhook's) would hold its lane for good, and lanes
 * would grow with every dead host ever seen. Such a lane is held like any other, while it is
 * among the `maxKeys` most recently used; a host called again after it was dropped
 * gets a closed breaker, so up to `threshold` calls reach it instead of one probe, and its break
 * growth starts over — the loss LRU already imposes on a closed breaker's failure count, and
 * bounded, where keeping it is not.
 *
 * The breaker is read without `state()`, which turns an ended break half-open and would run the
 * user's `onStateChange` in the middle of a call to another key. A probe in flight keeps the
 * lane: its answer is reported to this breaker, and a new lane's breaker would let calls through
 * before it. A pacer's `throttling` ends a quiet throttling period when asked; it runs no hook.
 */
function keepLane(lane: Lane, nowMs: number): boolean {
  const { bulkhead, latency, breaker, pacer } = lane;
  if (bulkhead !== undefined && (bulkhead.active > 0 || bulkhead.queued > 0)) return true;
  if (latency !== undefined && latency.inFlight > 0) return true;
  if (breaker !== undefined && (breaker.isolated || breaker.probes > 0 || breaker.retryAfterMs(nowMs) !== undefined)) return true;
  // Throttling covers tickets still waiting for their slot and a callee's wait hint: a new
  // lane's pacer would send them all at once.
  return pacer?.throttling(nowMs) === true;
}

export class Lanes {
  private readonly lanes: KeyedCache<Lane>;
  private last: Lane | undefined;

  constructor(private readonly options: LaneOptions) {
    this.lanes = new KeyedCache({
      maxKeys: options.maxKeys,
      create: (key) => {
        const lane = this.create(key);
        options.onCreate?.(lane);
        return lane;
      },
      keep: (lane) => keepLane(lane, options.clock.monotonic()),
    });
  }

  /** Whether any per-key policy is configured at all (when not, lanes are skipped entirely). */
  get enabled(): boolean {
    const o = this.options;
    return o.breaker !== undefined || o.bulkhead !== undefined || o.pacing !== undefined || o.latency !== undefined;
  }

  /** Whether lanes have a circuit breaker. */
  get hasBreaker(): boolean {
    return this.options.breaker !== undefined;
  }

  /**
   * The lane of `key`, created on first use. Lanes are held least recently used first; beyond
   * `maxKeys` the oldest droppable one is evicted in O(1) — never one with work in flight, a
   * breaker still in its break or probing, or a pacer throttling (see `keepLane`, `KeyedCache`).
   */
  get(key: string): Lane {
    const last = this.last;
    if (last !== undefined && last.key === key) return last;
    const lane = this.lanes.get(key);
    this.last = lane;
    return lane;
  }

  /** The lane of `key` if it exists, without creating it. */
  find(key: string): Lane | undefined {
    return this.lanes.find(key);
  }

  /** How many lanes are held. */
  get size(): number {
    return this.lanes.size;
  }

  /** Calls waiting for a bulkhead slot or a slot of the adaptive limit, over all keys. */
  get queued(): number {
    let n = 0;
    for (const lane of this.lanes.values()) n += (lane.bulkhead?.queued ?? 0) + (lane.latency?.queued ?? 0);
    return n;
  }

  /**
   * For stats: the adaptive limits summed over lanes (the concurrency the callee is allowed in
   * all) and the longest derived attempt timeout now in force; `undefined` when not configured.
   */
  latencySummary(nowMs: number): { concurrencyLimit: number | undefined; attemptTimeoutMs: number | undefined } {
    if (this.options.latency === undefined) return { concurrencyLimit: undefined, attemptTimeoutMs: undefined };
    let limit: number | undefined;
    let timeout: number | undefined;
    for (const lane of this.lanes.values()) {
      const l = lane.latency;
      if (l?.limit !== undefined) limit = (limit ?? 0) + l.limit.limit;
      if (l?.timeouts !== undefined) timeout = Math.max(timeout ?? 0, l.timeouts.timeoutMs(nowMs));
    }
    return { concurrencyLimit: limit, attemptTimeoutMs: timeout };
  }

  /** Every lane, for stats. */
  values(): IterableIterator<Lane> {
    return this.lanes.values();
  }

  private create(key: string): Lane {
    const o = this.options;
    const breaker =
      o.breaker === undefined
        ? undefined
        : new CircuitBreaker(
            {
              ...o.breaker,
              // kindly's own bookkeeping first; the caller's hook cannot undo it (its error is reported).
              onStateChange: (from, to, now) => {
                o.onBreakerChange(key, from, to, now);
                callHook(o.breaker?.onStateChange, from, to, now);
              },
            },
            o.random,
          );
    const bulkhead = o.bulkhead === undefined ? undefined : new Bulkhead(o.bulkhead, o.clock);
    const { optional, latencyLane } = o.policies;
    const pacer = o.pacing === undefined ? undefined : built(optional.pacing, 'pacing').pacer(o.pacing);
    const latency = o.latency === undefined ? undefined : built(latencyLane, 'latency policies')(o.latency, o.clock, o.random);
    const pipeline = lanePipeline({
      optional,
      budget: o.budgetStage,
      breaker,
      pacer,
      pacing:
        pacer === undefined
          ? undefined
          : {
              paceFirstAttempts: o.paceFirstAttempts,
              maxHintMs: o.maxPacingHintMs,
              onDelay: (nowMs, delayMs) => o.onPacingDelay(pacer, nowMs, delayMs),
              booker: o.paceBooker?.(key, pacer),
            },
      bulkhead,
      latency,
      limit:
        latency === undefined
          ? undefined
          : {
              onLimited: (limit, nowMs, partition) => o.onConcurrencyLimited?.(key, limit, nowMs, partition),
              line: (partition) => ({ acquire: (signal, maxWaitMs) => latency.wait(partition, signal, maxWaitMs) }),
            },
      hedgeBudget: o.budgetLedger,
    });
    // One literal with every field: a spread of a half-built lane plus `pipeline` gave each
    // lane a hidden class of its own (~270 B per lane, Node 20).
    return { key, breaker, bulkhead, pacer, latency, pipeline };
  }
}
