import type { Classification } from '../classify/outcome.js';
import { OptionsValidator, show } from '../options/validate.js';

/** What a call to a `Dependency` gets. */
export const ANSWER_OK = 0;
/** Connection refused (or an explicit failure response): fast, the call never ran. */
export const ANSWER_REFUSED = 1;
/** No answer at all: the caller's attempt timeout decides when it learns. */
export const ANSWER_HANG = 2;
export type Answer = typeof ANSWER_OK | typeof ANSWER_REFUSED | typeof ANSWER_HANG;

/** How a caller classifies a refusal: outcome `failed` (never processed), retryable. */
export const REFUSED: Readonly<Classification> = Object.freeze({ outcome: 'failed', retryable: true });
/** How a caller classifies its own attempt timeout: outcome `unknown`, retryable. */
export const TIMED_OUT: Readonly<Classification> = Object.freeze({ outcome: 'unknown', retryable: true, timeout: true });

export interface DependencyOptions {
  /** Time to answer while up, ms. @default 10 */
  latencyMs?: number;
  /** Time to refuse while down, ms (a refused connection is fast). @default 1 */
  refuseMs?: number;
  /** What a call gets while down. @default 'refuse' */
  whenDown?: 'refuse' | 'hang';
  /** Periods `[fromMs, untilMs)` when it is down (`untilMs` may be `Infinity`). @default [] (always up) */
  down?: readonly { fromMs: number; untilMs: number }[];
}

export const DEPENDENCY_DEFAULTS = {
  latencyMs: 10,
  refuseMs: 1,
  whenDown: 'refuse',
} as const satisfies DependencyOptions;

/**
 * A callee that is up or down according to a schedule: up, it answers after `latencyMs`;
 * down, it refuses fast or never answers (the caller's timeout decides). "Always times out"
 * is `{ whenDown: 'hang', down: [{ fromMs: 0, untilMs: Infinity }] }`.
 */
export class Dependency {
  readonly latencyMs: number;
  readonly refuseMs: number;
  readonly whenDown: 'refuse' | 'hang';
  private readonly down: readonly { fromMs: number; untilMs: number }[];
  /** Calls received. */
  calls = 0;
  /** Calls received while down. */
  callsWhileDown = 0;

  constructor(options: DependencyOptions = {}) {
    const v = new OptionsValidator('dependency');
    v.knownKeys(options, ['latencyMs', 'refuseMs', 'whenDown', 'down'])
      .duration('latencyMs', options.latencyMs)
      .duration('refuseMs', options.refuseMs)
      .oneOf('whenDown', options.whenDown, ['refuse', 'hang']);
    const down = options.down ?? [];
    if (!Array.isArray(down)) v.check(false, `Expected \`down\` to be an array of periods, got ${show(down)}`);
    else {
      down.forEach((p: { fromMs: number; untilMs: number }, i: number) => {
        const ok = typeof p === 'object' && p !== null && p.fromMs >= 0 && Number.isFinite(p.fromMs) && p.untilMs >= p.fromMs;
        v.check(ok, `Expected \`down[${i}]\` to be { fromMs ≥ 0, untilMs ≥ fromMs }, got ${show(p)}`);
      });
    }
    v.done();
    this.latencyMs = options.latencyMs ?? DEPENDENCY_DEFAULTS.latencyMs;
    this.refuseMs = options.refuseMs ?? DEPENDENCY_DEFAULTS.refuseMs;
    this.whenDown = options.whenDown ?? DEPENDENCY_DEFAULTS.whenDown;
    this.down = down;
  }

  isUp(now: number): boolean {
    for (const p of this.down) if (now >= p.fromMs && now < p.untilMs) return false;
    return true;
  }

  /** A call arrives now: counts it and says what it gets. */
  call(now: number): Answer {
    this.calls++;
    if (this.isUp(now)) return ANSWER_OK;
    this.callsWhileDown++;
    return this.whenDown === 'refuse' ? ANSWER_REFUSED : ANSWER_HANG;
  }

  /**
   * What the caller sees, given its attempt timeout: an answer slower than the timeout is a
   * timeout (`ANSWER_HANG`) to the caller.
   */
  seenAs(answer: Answer, attemptTimeoutMs: number): Answer {
    if (answer === ANSWER_OK) return this.latencyMs > attemptTimeoutMs ? ANSWER_HANG : ANSWER_OK;
    if (answer === ANSWER_REFUSED) return this.refuseMs > attemptTimeoutMs ? ANSWER_HANG : ANSWER_REFUSED;
    return ANSWER_HANG;
  }

  /** How long after the call its caller learns what it sees (`seenAs`). */
  answerDelay(answer: Answer, attemptTimeoutMs: number): number {
    const seen = this.seenAs(answer, attemptTimeoutMs);
    return seen === ANSWER_OK ? this.latencyMs : seen === ANSWER_REFUSED ? this.refuseMs : attemptTimeoutMs;
  }
}
