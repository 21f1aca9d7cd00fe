import { describe, expect, it } from 'vitest';
import { ADMIT, QUEUE } from '../../../src/orchestration/stage.js';
import { BulkheadStage } from '../../../src/orchestration/stages/bulkhead-stage.js';
import { stageCall } from './stage-call.js';

/** A counting limiter: `limit` slots, no line of its own. */
function slots(limit: number) {
  return {
    held: 0,
    tryAcquire() {
      if (this.held >= limit) return false;
      this.held++;
      return true;
    },
    release() {
      this.held--;
    },
    acquire: () => Promise.reject(new Error('no line')),
  };
}

describe('BulkheadStage', () => {
  it('admits while a slot is free, gives it back on exit', () => {
    const limiter = slots(1);
    const stage = new BulkheadStage(limiter);
    const call = stageCall();
    expect(stage.enter(call)).toBe(ADMIT);
    expect(limiter.held).toBe(1);
    stage.exit(call);
    expect(limiter.held).toBe(0);
  });

  it('an operation still running after its attempt ended keeps its slot until it settles', () => {
    const limiter = slots(1);
    const stage = new BulkheadStage(limiter);
    const call = stageCall({ pendingReleases: [] });
    stage.enter(call);
    stage.exit(call);
    expect(limiter.held).toBe(1);
    for (const release of call.pendingReleases ?? []) release();
    expect(limiter.held).toBe(0);
  });

  it('when full, asks the driver to wait in line for at most the time left before the deadline', () => {
    const limiter = slots(0);
    const stage = new BulkheadStage(limiter);
    const call = stageCall({ attemptStart: 40, deadline: 100 });
    expect(stage.enter(call)).toBe(QUEUE);
    expect(call.queue).toBe(limiter);
    expect(call.queueWaitMs).toBe(60);
  });
});
