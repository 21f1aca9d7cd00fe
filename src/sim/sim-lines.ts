import { BulkheadRejectedError, ConcurrencyLimitError } from '../errors/errors.js';
import type { LineWaiter, VirtualLine } from '../orchestration/stage.js';
import { type BulkheadOptions, BulkheadSlots } from '../policies/bulkhead-slots.js';
import type { LatencyPolicies, LimitWaiter } from '../policies/latency-policies.js';
import type { EventKind, Simulation } from './engine.js';

/** Runs closures as events on virtual time (events carry integers: the closures wait here). */
class Later {
  private readonly pending: ((() => void) | undefined)[] = [];
  private readonly free: number[] = [];
  private readonly kind: EventKind;

  constructor(private readonly sim: Simulation) {
    this.kind = sim.on((i) => {
      const run = this.pending[i];
      this.pending[i] = undefined;
      this.free.push(i);
      run?.();
    });
  }

  /** Runs `run` at `atMs` (now at the earliest, after the events already due now). */
  at(atMs: number, run: () => void): number {
    const i = this.free.pop() ?? this.pending.length;
    this.pending[i] = run;
    this.sim.at(atMs, this.kind, i);
    return i;
  }

  /** Drops a closure not yet run (its event still fires, and finds nothing). */
  cancel(i: number): void {
    this.pending[i] = undefined;
  }
}

/**
 * A bulkhead on virtual time: `BulkheadSlots`' accounting (the runtime's `Bulkhead` stands on
 * the same) and a FIFO line whose waits end by events — a slot freed goes to the longest
 * waiter, a wait longer than `min(queueTimeoutMs, maxWaitMs)` is refused (`queue-timeout`).
 */
export class SimBulkhead extends BulkheadSlots implements VirtualLine {
  private readonly later: Later;
  private readonly line: { waiter: LineWaiter; timer: number | undefined }[] = [];

  constructor(sim: Simulation, options: BulkheadOptions) {
    super(options);
    this.later = new Later(sim);
    this.now = () => sim.now;
  }

  private readonly now: () => number;

  join(waiter: LineWaiter, nowMs: number, maxWaitMs: number): unknown {
    if (this.tryAcquire()) {
      this.later.at(nowMs, () => waiter.granted(this.now(), undefined));
      return undefined;
    }
    const waitMs = this.waitAllowance(maxWaitMs);
    if (typeof waitMs !== 'number') return new BulkheadRejectedError(waitMs);
    const entry = { waiter, timer: undefined as number | undefined };
    this.line.push(entry);
    this.joined();
    if (waitMs !== Number.POSITIVE_INFINITY) {
      entry.timer = this.later.at(nowMs + waitMs, () => {
        this.line.splice(this.line.indexOf(entry), 1);
        this.left(true);
        waiter.refused(this.now(), new BulkheadRejectedError('queue-timeout'));
      });
    }
    return undefined;
  }

  /** Gives a slot back; the longest waiter takes it (told by an event at once). */
  override release(): boolean {
    const entry = this.line.shift();
    if (entry === undefined) return super.release();
    this.left(false);
    if (entry.timer !== undefined) this.later.cancel(entry.timer);
    const now = this.now();
    this.later.at(now, () => entry.waiter.granted(now, undefined));
    return true;
  }
}

/**
 * The line of the adaptive concurrency limit on virtual time: `LatencyPolicies` keeps the
 * waiters and hands them freed slots; this times their waits out and tells them by events.
 */
export class SimLimitLine {
  private readonly later: Later;

  constructor(
    private readonly sim: Simulation,
    private readonly policies: LatencyPolicies,
  ) {
    this.later = new Later(sim);
  }

  /** The line an attempt of `partition` waits in. */
  of(partition: string | undefined): VirtualLine {
    return { join: (waiter, nowMs, maxWaitMs) => this.join(partition, waiter, nowMs, maxWaitMs) };
  }

  private join(partition: string | undefined, waiter: LineWaiter, nowMs: number, maxWaitMs: number): unknown {
    const policies = this.policies;
    const limit = policies.limit?.limit ?? 0;
    const waitMs = policies.waitAllowance(maxWaitMs);
    if (typeof waitMs !== 'number') return new ConcurrencyLimitError(limit, waitMs);
    let timer: number | undefined;
    const w: LimitWaiter = {
      partition: policies.partitionIndex(partition),
      granted: (slot, now) => {
        if (timer !== undefined) this.later.cancel(timer);
        this.later.at(now, () => waiter.granted(now, slot));
      },
    };
    policies.join(w);
    if (waitMs !== Number.POSITIVE_INFINITY) {
      timer = this.later.at(nowMs + waitMs, () => {
        policies.leave(w);
        waiter.refused(this.sim.now, new ConcurrencyLimitError(limit, 'queue-timeout'));
      });
    }
    return undefined;
  }
}
