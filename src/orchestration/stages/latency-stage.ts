import { ConcurrencyLimitError } from '../../errors/errors.js';
import { type AttemptEnd, type LatencyPolicies, LIMIT_REJECTED } from '../../policies/latency-policies.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  type HedgeCall,
  QUEUE,
  type Queue,
  RESULT_FAILED,
  RESULT_OK,
  type Stage,
  type StageCall,
} from '../stage.js';

/**
 * A lane's latency-driven policies as one pipeline stage, after the bulkhead: the adaptive
 * concurrency limit admits or refuses each attempt and each hedge (a refusal never reached the
 * callee, reason `rejected`), the derived attempt timeout times them, and every attempt's
 * latency is reported once (see `LatencyPolicies.settle`).
 */
export class LatencyStage implements Stage {
  readonly name = 'latency';
  readonly observesSuccess = true;

  constructor(
    readonly policies: LatencyPolicies,
    private readonly options: {
      /** Told of an attempt the limit refused at once. */
      onLimited?: (limit: number, nowMs: number, partition: string | undefined) => void;
      /**
       * The line an attempt of `partition` waits in when the limit queues (`maxQueue` > 0): the
       * runtime's promise of a slot, or the simulator's line on virtual time. It resolves to the slot.
       */
      line?: (partition: string | undefined) => Queue;
    } = {},
  ) {}

  enter(call: StageCall, nowMs: number): Admission {
    const policies = this.policies;
    const slot = policies.admit(nowMs, call.partition);
    if (slot !== LIMIT_REJECTED) {
      call.token = slot;
      return ADMIT;
    }
    const line = this.options.line;
    if (policies.queues && line !== undefined) {
      // A bounded wait in line for a slot, within the deadline (like the bulkhead's); the
      // driver waits and hands the granted slot to `afterQueue`.
      call.queue = line(call.partition);
      call.queueWaitMs = call.deadline - call.attemptStart;
      return QUEUE;
    }
    const limit = policies.limit?.limit ?? 0;
    this.options.onLimited?.(limit, nowMs, call.partition);
    return call.refuse('rejected', () => new ConcurrencyLimitError(limit, 'at-limit', { downstream: call.name }), undefined);
  }

  afterQueue(call: StageCall, _nowMs: number, slot: unknown): Admission {
    call.token = slot;
    return ADMIT;
  }

  attemptTimeoutMs(_call: StageCall, nowMs: number, baseMs: number): number {
    return this.policies.attemptTimeoutMs(nowMs, baseMs);
  }

  exit(call: StageCall, nowMs: number, result: AttemptResult): void {
    const slot = call.token as number;
    const end = attemptEnd(call, result);
    if (end === undefined) this.policies.giveBack(slot, nowMs);
    else this.policies.settle(slot, call.attemptStart, nowMs, end, call.timeoutMs);
  }

  /** A hedge takes a slot of the limit without waiting: no free slot, no hedge. */
  enterHedge(hedge: HedgeCall, nowMs: number): boolean {
    const slot = this.policies.admit(nowMs, hedge.partition);
    if (slot === LIMIT_REJECTED) return false;
    hedge.token = slot;
    return true;
  }

  exitHedge(hedge: HedgeCall, nowMs: number, result: AttemptResult): void {
    this.exit(hedge, nowMs, result);
  }
}

/** What an attempt says about latency; `undefined` for one that never started (its slot is given back). */
function attemptEnd(call: StageCall, result: AttemptResult): AttemptEnd | undefined {
  if (result === RESULT_OK) return call.answerUnused ? 'abandoned' : 'ok';
  if (result === RESULT_FAILED) {
    const c = call.classification;
    if (c?.timeout) return 'timeout';
    if (c !== undefined && (c.throttled || c.status === 503 || c.hintMs !== undefined)) return 'overload';
    return 'ok';
  }
  if (call.cutByOwnDeadline) return 'timeout';
  return call.inAttempt ? 'abandoned' : undefined;
}
