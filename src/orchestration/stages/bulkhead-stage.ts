import { ADMIT, type Admission, type HedgeCall, QUEUE, type Stage, type StageCall, type VirtualLine } from '../stage.js';

/**
 * A concurrency limit as the orchestration sees it: a slot now, or a line to wait in — the
 * runtime's (`acquire`, a promise) or the simulator's (`join`, on virtual time).
 */
export type SlotLimiter = {
  /** Takes a slot if one is free now. */
  tryAcquire(): boolean;
  /** Gives a slot back. */
  release(): void;
} & (
  | {
      /** Waits in line for a slot, at most `maxWaitMs`; rejects when refused or aborted. */
      acquire(signal: AbortSignal | undefined, maxWaitMs: number): PromiseLike<unknown>;
    }
  | VirtualLine
);

/**
 * The bulkhead: a free slot admits the attempt at once; otherwise the driver waits in the
 * limiter's line (`QUEUE`), bounded by the time left before the deadline.
 *
 * A bulkhead bounds running work, so the slot is held until the operation settles — not
 * merely until the attempt ends: an operation that ignores its abort signal after a timeout
 * or a caller's abort keeps its slot while it runs (and one that never settles keeps it
 * for good).
 */
export class BulkheadStage implements Stage {
  readonly name = 'bulkhead';
  /** It reads no time (its line waits until the call's deadline; a call with one starts on the clock). */
  readonly coarseStart = true;
  readonly observesSuccess = false;

  constructor(readonly slots: SlotLimiter) {}

  enter(call: StageCall): Admission {
    if (this.slots.tryAcquire()) return ADMIT;
    call.queue = this.slots;
    call.queueWaitMs = call.deadline - call.attemptStart;
    return QUEUE;
  }

  exit(call: StageCall): void {
    call.whenSettled(this.release);
  }

  /** A hedge takes a free slot or does not go: it never waits in line. */
  enterHedge(_hedge: HedgeCall): boolean {
    return this.slots.tryAcquire();
  }

  exitHedge(hedge: HedgeCall): void {
    hedge.whenSettled(this.release);
  }

  private readonly release = (): void => this.slots.release();
}
