import { CircuitOpenError, type GiveUpReason } from '../../errors/errors.js';
import { BREAKER_ALLOWED, BREAKER_REJECTED, type CircuitBreaker } from '../../policies/circuit-breaker.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  type HedgeCall,
  RESULT_FAILED,
  RESULT_OK,
  type Stage,
  type StageCall,
} from '../stage.js';

/**
 * The circuit breaker: an open circuit fails the attempt fast, before it reaches the callee.
 * The permit taken in `enter` is given back in `exit` (a success, a counted failure, or
 * neutral — which frees a half-open probe slot without counting anything).
 */
export class BreakerStage implements Stage {
  readonly name = 'breaker';
  /** Its windows and cool-down are seconds long; a start a few ms old changes none of them. */
  readonly coarseStart = true;
  constructor(readonly breaker: CircuitBreaker) {}

  /** A breaker that is not closed means trouble: no hedges (it hears nothing of them). */
  enterHedge(_hedge: HedgeCall, nowMs: number): boolean {
    return this.breaker.state(nowMs) === 'closed';
  }

  /** Only a success the breaker files by time (ratio mode, or while it is not closed). */
  get observesSuccess(): boolean {
    return this.breaker.successNeedsTime;
  }

  enter(call: StageCall, nowMs: number): Admission {
    const permit = this.breaker.tryAcquire(nowMs);
    if (permit === BREAKER_REJECTED) {
      const retryAfterMs = this.breaker.retryAfterMs(nowMs);
      return call.refuse(
        'circuit-open',
        () => new CircuitOpenError({ attempts: 0, downstream: call.name, retryAfterMs }),
        retryAfterMs,
      );
    }
    // The common permit (an ordinary call while closed) is no token: the call then keeps no
    // token array (one allocation per call fewer); `exit` reads its absence as that permit.
    call.token = permit === BREAKER_ALLOWED ? undefined : permit;
    return ADMIT;
  }

  exit(call: StageCall, nowMs: number, result: AttemptResult): void {
    const permit = (call.token as number | undefined) ?? BREAKER_ALLOWED;
    if (result === RESULT_OK) this.breaker.onSuccess(nowMs, permit);
    else if (result === RESULT_FAILED) this.breaker.onError(nowMs, permit, call.classification ?? NO_CLASSIFICATION);
    else this.breaker.onNeutral(nowMs, permit);
  }

  admitRetry(call: StageCall, nowMs: number): GiveUpReason | undefined {
    if (this.breaker.state(nowMs) !== 'open') return undefined;
    call.retryAfterMs = this.breaker.retryAfterMs(nowMs);
    return 'circuit-open';
  }
}

const NO_CLASSIFICATION = Object.freeze({ outcome: 'failed', retryable: false } as const);
