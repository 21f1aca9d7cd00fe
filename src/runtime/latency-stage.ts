import { ConcurrencyLimitError } from '../errors/errors.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  QUEUE,
  RESULT_FAILED,
  RESULT_OK,
  type Stage,
  type StageCall,
} from '../orchestration/stage.js';
import { type AttemptEnd, type LatencyLane, LIMIT_REJECTED } from './latency-lane.js';

/**
 * A lane's latency-driven policies as one pipeline stage, after the bulkhead: the adaptive
 * concurrency limit admits or refuses each attempt (a refusal never reached the callee,
 * reason `rejected`), the derived attempt timeout times it, and every attempt's latency is
 * reported once (see `LatencyLane.settle`). Each call deposits its share of a hedge.
 */
export class LatencyStage implements Stage {
  readonly name = 'latency';
  readonly observesSuccess = true;

  constructor(
    readonly lane: LatencyLane,
    private readonly options: { onLimited?: (limit: number, nowMs: number, partition: string | undefined) => void } = {},
  ) {}

  start(_call: StageCall, nowMs: number): void {
    this.lane.hedging?.recordRequest(nowMs);
  }

  enter(call: StageCall, nowMs: number): Admission {
    const slot = this.lane.admit(nowMs, call.partition);
    if (slot === LIMIT_REJECTED) {
      if (this.lane.queues) {
        // A bounded wait in line for a slot, within the deadline (like the bulkhead's); the
        // driver waits and hands the granted slot to `afterQueue`.
        const lane = this.lane;
        const partition = call.partition;
        call.queue = { acquire: (signal, maxWaitMs) => lane.wait(partition, signal, maxWaitMs) };
        call.queueWaitMs = call.deadline - call.attemptStart;
        return QUEUE;
      }
      const limit = this.lane.limit?.limit ?? 0;
      this.options.onLimited?.(limit, nowMs, call.partition);
      return call.refuse('rejected', () => new ConcurrencyLimitError(limit, 'at-limit', { downstream: call.name }), undefined);
    }
    call.token = slot;
    return ADMIT;
  }

  afterQueue(call: StageCall, _nowMs: number, slot: unknown): Admission {
    call.token = slot;
    return ADMIT;
  }

  attemptTimeoutMs(_call: StageCall, nowMs: number, baseMs: number): number {
    return this.lane.attemptTimeoutMs(nowMs, baseMs);
  }

  exit(call: StageCall, nowMs: number, result: AttemptResult): void {
    this.lane.settle(call.token as number, call.attemptStart, nowMs, attemptEnd(call, result), call.timeoutMs);
  }
}

/** What an attempt says about latency. */
function attemptEnd(call: StageCall, result: AttemptResult): AttemptEnd {
  if (result === RESULT_OK) return call.answerUnused ? 'abandoned' : 'ok';
  if (result === RESULT_FAILED) {
    const c = call.classification;
    if (c?.timeout) return 'timeout';
    if (c !== undefined && (c.throttled || c.status === 503 || c.hintMs !== undefined)) return 'overload';
    return 'ok';
  }
  return call.cutByOwnDeadline ? 'timeout' : 'abandoned';
}
