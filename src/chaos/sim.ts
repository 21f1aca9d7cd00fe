import type { Answer, Dependency } from '../sim/dependency.js';
import { ChaosPlan, type ChaosPlanOptions } from './plan.js';

// The simulator's answer codes (sim/dependency.ts), restated: chaos sits beside the
// simulator, and only types may cross between them.
const ANSWER_OK: Answer = 0;
const ANSWER_REFUSED: Answer = 1;
const ANSWER_HANG: Answer = 2;

/**
 * A simulated dependency with the same faults `enableChaos` injects at run time, drawn by
 * the same `ChaosPlan`: `refused` for `error: failed`, a `status` answer and `reset`; a hang
 * for `timeout`, and for `error: unknown` (the caller never hears back); extra latency for
 * `latency`. The simulator's answers have no room for a status or its hint headers, so a
 * `status` fault is a fast refusal there.
 */
export class ChaosDependency {
  readonly plan: ChaosPlan;
  /** Faults injected so far. */
  injected = 0;

  constructor(
    readonly dependency: Dependency,
    options: ChaosPlanOptions,
    /** The lane key the plan draws for. @default 'sim' */
    readonly key = 'sim',
  ) {
    this.plan = new ChaosPlan(options);
  }

  /** A call arrives now: what it gets, and any latency the fault adds before the answer. */
  call(now: number): { answer: Answer; extraMs: number } {
    const fault = this.plan.decide(this.key);
    const answer = this.dependency.call(now);
    if (fault === undefined) return { answer, extraMs: 0 };
    this.injected++;
    switch (fault.kind) {
      case 'latency':
        return { answer, extraMs: fault.ms };
      case 'timeout':
        return { answer: ANSWER_HANG, extraMs: 0 };
      case 'error':
        return { answer: fault.outcome === 'failed' ? ANSWER_REFUSED : ANSWER_HANG, extraMs: 0 };
      case 'status':
      case 'reset':
        return { answer: answer === ANSWER_OK ? ANSWER_REFUSED : answer, extraMs: 0 };
    }
  }
}
