import { Bulkhead, type BulkheadOptions } from '../policies/bulkhead.js';
import { type BreakerState, CircuitBreaker, type CircuitBreakerOptions } from '../policies/circuit-breaker.js';
import { Pacer, type PacerOptions } from '../policies/pacer.js';
import type { Random } from '../random/random.js';
import type { Clock } from '../time/clock.js';
import { LatencyLane, type LatencyLaneOptions } from './latency-lane.js';

/**
 * The per-key protection state of one downstream: a circuit breaker, a bulkhead and a pacer
 * for each key (by default one key, the downstream's name; `.fetch()` keys by host). Each
 * is optional. Lanes are created on first use and bounded in number.
 */
export interface Lane {
  readonly key: string;
  readonly breaker: CircuitBreaker | undefined;
  readonly bulkhead: Bulkhead | undefined;
  readonly pacer: Pacer | undefined;
  /** Adaptive concurrency limit, derived attempt timeout, hedging (any of them). */
  readonly latency: LatencyLane | undefined;
}

export interface LaneOptions {
  breaker: CircuitBreakerOptions | undefined;
  bulkhead: BulkheadOptions | undefined;
  pacing: PacerOptions | undefined;
  latency?: LatencyLaneOptions | undefined;
  clock: Clock;
  random: Random;
  /** Told of every breaker state change. */
  onBreakerChange: (key: string, from: BreakerState, to: BreakerState, nowMs: number) => void;
  /** Most keys held at once; the least recently created idle lane is dropped beyond it. */
  maxKeys: number;
  /** Told of each lane created (a fleet store links its breaker and pacer). */
  onCreate?: (lane: Lane) => void;
}

export class Lanes {
  private readonly lanes = new Map<string, Lane>();
  private last: Lane | undefined;

  constructor(private readonly options: LaneOptions) {}

  /** Whether any per-key policy is configured at all (when not, lanes are skipped entirely). */
  get enabled(): boolean {
    const o = this.options;
    return o.breaker !== undefined || o.bulkhead !== undefined || o.pacing !== undefined || o.latency !== undefined;
  }

  /** Whether lanes have a circuit breaker. */
  get hasBreaker(): boolean {
    return this.options.breaker !== undefined;
  }

  get(key: string): Lane {
    const last = this.last;
    if (last !== undefined && last.key === key) return last;
    let lane = this.lanes.get(key);
    if (lane === undefined) {
      lane = this.create(key);
      this.options.onCreate?.(lane);
      if (this.lanes.size >= this.options.maxKeys) this.evictOne();
      this.lanes.set(key, lane);
    }
    this.last = lane;
    return lane;
  }

  /** The lane of `key` if it exists, without creating it. */
  find(key: string): Lane | undefined {
    return this.lanes.get(key);
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
    return {
      key,
      breaker:
        o.breaker === undefined
          ? undefined
          : new CircuitBreaker(
              {
                ...o.breaker,
                onStateChange: (from, to, now) => {
                  o.breaker?.onStateChange?.(from, to, now);
                  o.onBreakerChange(key, from, to, now);
                },
              },
              o.random,
            ),
      bulkhead: o.bulkhead === undefined ? undefined : new Bulkhead(o.bulkhead, o.clock),
      pacer: o.pacing === undefined ? undefined : new Pacer(o.pacing),
      latency: o.latency === undefined ? undefined : new LatencyLane(o.latency, o.clock),
    };
  }

  /** Drops the oldest lane with nothing running or queued (its state is forgotten). */
  private evictOne(): void {
    for (const [key, lane] of this.lanes) {
      if ((lane.bulkhead?.active ?? 0) === 0 && (lane.bulkhead?.queued ?? 0) === 0 && (lane.latency?.inFlight ?? 0) === 0) {
        this.lanes.delete(key);
        if (this.last === lane) this.last = undefined;
        return;
      }
    }
  }
}
