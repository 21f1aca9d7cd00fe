import { ADMIT, type Admission, QUEUE, type Stage, type StageCall } from '../stage.js';

/** A concurrency limit as the orchestration sees it: a slot now, or a line to wait in. */
export interface SlotLimiter {
  /** Takes a slot if one is free now. */
  tryAcquire(): boolean;
  /** Gives a slot back. */
  release(): void;
  /** Waits in line for a slot, at most `maxWaitMs`; rejects when refused or aborted. */
  acquire(signal: AbortSignal | undefined, maxWaitMs: number): PromiseLike<void>;
}

/**
 * The bulkhead: a free slot admits the attempt at once; otherwise the driver waits in the
 * limiter's line (`QUEUE`), bounded by the time left before the deadline. The slot is given
 * back in `exit`.
 */
export class BulkheadStage implements Stage {
  readonly name = 'bulkhead';
  readonly observesSuccess = false;

  constructor(readonly slots: SlotLimiter) {}

  enter(call: StageCall): Admission {
    if (this.slots.tryAcquire()) return ADMIT;
    call.queue = this.slots;
    call.queueWaitMs = call.deadline - call.attemptStart;
    return QUEUE;
  }

  exit(): void {
    this.slots.release();
  }
}
