import { describe, expect, it } from 'vitest';
import { isConcurrencyLimitError } from '../../../src/errors/errors.js';
import { ADMIT, QUEUE, REFUSE, RESULT_NEUTRAL, RESULT_OK } from '../../../src/orchestration/stage.js';
import { LatencyStage } from '../../../src/orchestration/stages/latency-stage.js';
import { LatencyPolicies } from '../../../src/policies/latency-policies.js';
import { SeededRandom } from '../../../src/random/random.js';
import { stageCall } from './stage-call.js';

/** A limit of `n` (it starts by measuring the no-load latency at `probeConcurrency`). */
function policies(n = 1, maxQueue = 0) {
  return new LatencyPolicies(
    { concurrency: { initialLimit: n, probeConcurrency: n, maxQueue }, attemptTimeoutMs: undefined, hedging: { delayMs: 5 } },
    new SeededRandom(1),
  );
}

describe('LatencyStage', () => {
  it('admits while the limit allows; refuses at once beyond it (reason rejected) without a line', () => {
    const p = policies();
    const limited: number[] = [];
    const stage = new LatencyStage(p, { onLimited: (limit) => limited.push(limit) });
    const first = stageCall();
    expect(stage.enter(first, 0)).toBe(ADMIT);
    const second = stageCall();
    expect(stage.enter(second, 0)).toBe(REFUSE);
    expect(second.refused?.reason).toBe('rejected');
    expect(isConcurrencyLimitError(second.refused?.cause)).toBe(true);
    expect(limited).toEqual([1]);
  });

  it('with maxQueue, a refused attempt waits in the line the driver gave, bounded by the deadline', () => {
    const p = policies(1, 1);
    const line = { join: () => undefined };
    const stage = new LatencyStage(p, { line: () => line });
    expect(stage.enter(stageCall(), 0)).toBe(ADMIT);
    const waiting = stageCall({ deadline: 300, attemptStart: 100 });
    expect(stage.enter(waiting, 100)).toBe(QUEUE);
    expect([waiting.queue, waiting.queueWaitMs]).toEqual([line, 200]);
  });

  it('an attempt unwound before it started gives its slot back and teaches nothing', () => {
    const p = policies();
    const stage = new LatencyStage(p);
    const call = stageCall();
    stage.enter(call, 0);
    expect(p.limit?.inFlight).toBe(1);
    stage.exit(call, 40, RESULT_NEUTRAL);
    expect(p.limit?.inFlight).toBe(0);
    expect(p.hedging?.latency.weight(40)).toBe(0);
  });

  it('an abandoned attempt that ran is a lower bound for the hedge delay only', () => {
    const p = policies();
    const stage = new LatencyStage(p);
    const call = stageCall({ inAttempt: true });
    stage.enter(call, 0);
    stage.exit(call, 40, RESULT_NEUTRAL);
    expect([p.limit?.inFlight, p.hedging?.latency.weight(40)]).toEqual([0, 1]);
  });

  it('a hedge takes a free slot or does not go; its end is settled like an attempt', () => {
    const p = policies(2);
    const stage = new LatencyStage(p);
    const hedge = { ...stageCall({ inAttempt: true, attemptStart: 10 }), hedge: 1 };
    stage.enter(stageCall(), 0);
    expect(stage.enterHedge(hedge, 10)).toBe(true);
    expect(stage.enterHedge({ ...stageCall(), hedge: 1 }, 10)).toBe(false);
    stage.exitHedge(hedge, 25, RESULT_OK);
    expect(p.limit?.inFlight).toBe(1);
    expect(p.hedging?.latency.weight(25)).toBe(1);
  });
});
