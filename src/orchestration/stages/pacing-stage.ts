import type { Pacer, PacerSignal } from '../../policies/pacer.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  RESULT_FAILED,
  RESULT_OK,
  type Stage,
  type StageCall,
  WAIT,
} from '../stage.js';

/**
 * Adaptive pacing: while the callee is throttling us, attempts leave at the learned rate.
 * A slot whose wait would not end in time for an attempt is given back and the call ends
 * with reason `deadline`. Every answer is reported with its attempt's send time.
 */
export class PacingStage implements Stage {
  readonly name = 'pacing';
  readonly observesSuccess = true;

  constructor(
    readonly pacer: Pacer,
    private readonly options: {
      /** Pace first attempts too (by default only retries wait for the pacer). */
      paceFirstAttempts?: boolean;
      /** Told of every wait the pacer imposes. */
      onDelay?: (nowMs: number, delayMs: number) => void;
    } = {},
  ) {}

  enter(call: StageCall, nowMs: number): Admission {
    if (call.attempt === 1 && this.options.paceFirstAttempts !== true) return ADMIT;
    const wait = this.pacer.reserve(nowMs);
    if (wait <= 0) return ADMIT;
    if (nowMs + wait > call.deadline - call.minAttemptTime) {
      this.pacer.cancelLastReservation();
      return call.refuse('deadline', undefined, undefined);
    }
    this.options.onDelay?.(nowMs, wait);
    call.waitMs = wait;
    return WAIT;
  }

  exit(call: StageCall, nowMs: number, result: AttemptResult): void {
    if (result === RESULT_OK) {
      this.pacer.onResult(nowMs, 'ok', undefined, call.attemptStart);
    } else if (result === RESULT_FAILED) {
      const c = call.classification;
      if (c === undefined) return;
      const signal: PacerSignal | undefined = c.throttled ? 'rejected' : c.timeout ? 'timeout' : undefined;
      if (signal !== undefined || c.hintMs !== undefined)
        this.pacer.onResult(nowMs, signal ?? 'rejected', c.hintMs, call.attemptStart);
    }
  }

  /**
   * While pacing, the pacer (not each caller's own backoff) decides when retries leave: its
   * queue releases them at the learned rate, wait hints included. The zero delay still
   * yields, so that every answer that arrived together is reported to the pacer before any
   * of those callers books its slot.
   */
  retryDelay(_call: StageCall, nowMs: number): number {
    return this.pacer.throttling(nowMs) ? 0 : -1;
  }
}
