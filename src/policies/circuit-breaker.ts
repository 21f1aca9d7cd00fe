import type { Classification } from '../classify/outcome.js';
import { callHook, reportHookError } from '../errors/report-hook-error.js';
import { MAX_WINDOW_BUCKETS, OptionsValidator } from '../options/validate.js';
import type { Random } from '../random/random.js';
import { BucketWindow } from './bucket-window.js';

export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * When the breaker opens:
 * - `consecutive`: after `threshold` failures in a row (a success resets the count);
 * - `ratio`: when, over the sliding window, `calls ≥ minThroughput` and
 *   `failures / calls ≥ failureRatio` (calls = successes + failures; neutral ones don't count).
 */
export type BreakerMode = 'consecutive' | 'ratio';

export interface CircuitBreakerOptions {
  /** @default 'consecutive' */
  mode?: BreakerMode;
  /** `consecutive` mode: failures in a row that open the breaker. @default 5 */
  threshold?: number;
  /** `ratio` mode: failure ratio in (0, 1] that opens it. @default 0.5 */
  failureRatio?: number;
  /** `ratio` mode: sliding window length in ms. @default 10_000 */
  windowMs?: number;
  /** `ratio` mode: buckets the window is split into. @default 10 */
  buckets?: number;
  /** `ratio` mode: calls needed in the window before the ratio is judged. @default 20 */
  minThroughput?: number;
  /** Probes admitted at once while half-open; the rest fail fast. @default 1 */
  halfOpenProbes?: number;
  /** Successful probes needed to close again. @default 1 */
  successesToClose?: number;
  /** First break duration in ms (open → half-open). @default 5_000 */
  breakMs?: number;
  /** Each consecutive opening multiplies the break by this, ≥ 1. @default 2 */
  breakGrowth?: number;
  /** No break is longer, jitter included. @default 60_000 */
  maxBreakMs?: number;
  /** Break jitter as a fraction in [0, 1]: duration × (1 ± jitter). @default 0.1 */
  breakJitter?: number;
  /**
   * Which errors count as failures (the others are neutral). Used by `onError`.
   * @default DEFAULT_BREAKER_FAILURE_PREDICATE
   */
  isFailure?: (classification: Classification) => boolean;
  /**
   * Told of every state change. For open → half-open, which happens when the break ends and
   * is noticed on the next call, `nowMs` is the end of the break. Must not throw.
   */
  onStateChange?: (from: BreakerState, to: BreakerState, nowMs: number) => void;
}

/**
 * The default failure predicate: attempt timeouts and retryable errors count
 * (5xx such as 500/502/503/504, connection refused/reset, …); no 4xx counts — neither the
 * caller's mistakes (400, 404, 409, …) nor 408/429, which say the callee is alive and
 * protecting itself: rate limiting is the pacer's business, and opening the breaker
 * on it would cut a throttled callee off entirely. Non-retryable errors without a status
 * (TLS, unknown host) do not count either: the breaker measures the callee's health.
 */
export const DEFAULT_BREAKER_FAILURE_PREDICATE = (c: Classification): boolean => {
  if (c.timeout === true) return true;
  if (c.status !== undefined && c.status >= 400 && c.status < 500) return false;
  return c.retryable;
};

export const CIRCUIT_BREAKER_DEFAULTS = {
  mode: 'consecutive',
  threshold: 5,
  failureRatio: 0.5,
  windowMs: 10_000,
  buckets: 10,
  minThroughput: 20,
  halfOpenProbes: 1,
  successesToClose: 1,
  breakMs: 5_000,
  breakGrowth: 2,
  maxBreakMs: 60_000,
  breakJitter: 0.1,
  isFailure: DEFAULT_BREAKER_FAILURE_PREDICATE,
} as const satisfies CircuitBreakerOptions;

/**
 * A breaker's state as plain JSON, with times relative to when it was taken, so it can be
 * saved by one process and restored by the next (monotonic clocks do not survive a restart).
 * What is restored: open or closed, how long the break has left, openings in a row (so the
 * next break keeps growing), consecutive failures, and an isolation. Ratio-mode window counts
 * are not kept: they age out within one window anyway.
 */
export interface CircuitBreakerSnapshot {
  /** `half-open` is saved as open with no break left: the next call is a probe. */
  state: 'closed' | 'open';
  /** Open: ms of the break left (0: the next call probes). */
  breakLeftMs: number;
  /** Openings in a row; the next break is `breakMs × breakGrowth^opensInRow`, capped. */
  opensInRow: number;
  consecutiveFailures: number;
  /** Opened by hand with `isolate` and held open until `close`. */
  isolated: boolean;
}

/** `tryAcquire` refused: the breaker is open, or half-open with every probe slot taken. */
export const BREAKER_REJECTED = -1;
/** `tryAcquire` admitted an ordinary call (breaker closed). Any value > 0 is a probe. */
export const BREAKER_ALLOWED = 0;

const KEYS = [
  'mode',
  'threshold',
  'failureRatio',
  'windowMs',
  'buckets',
  'minThroughput',
  'halfOpenProbes',
  'successesToClose',
  'breakMs',
  'breakGrowth',
  'maxBreakMs',
  'breakJitter',
  'isFailure',
  'onStateChange',
] as const;

const CLOSED = 0;
const OPEN = 1;
const HALF_OPEN = 2;
const NAMES: readonly BreakerState[] = ['closed', 'open', 'half-open'];

// Ratio-mode counters.
const CALLS = 0;
const FAILURES = 1;

/**
 * A circuit breaker, sans-IO: every method takes `nowMs` (monotonic ms).
 *
 * Protocol, allocation-free on the closed path:
 *
 *     const permit = breaker.tryAcquire(now);
 *     if (permit === BREAKER_REJECTED) fail fast with breaker.retryAfterMs(now);
 *     … run the attempt …
 *     breaker.onSuccess(now, permit) | breaker.onError(now, permit, classification)
 *       (or onFailure / onNeutral directly)
 *
 * A permit is `BREAKER_ALLOWED` (0) for an ordinary call, or a positive probe ticket while
 * half-open. Passing it back lets the breaker tell a probe's result from the late result of
 * a call admitted before it opened, and a probe of this half-open period from one of an
 * earlier period: only current probes move a half-open breaker, and late results are ignored
 * while it is not closed.
 *
 * States: closed → (trip) → open for `d(k)` → half-open → `successesToClose` probe
 * successes → closed; a probe failure re-opens it with k + 1. With k the number of openings
 * in a row (reset on closing) and u uniform in [0, 1) from the injected `Random`:
 *
 *     d(k) = min(maxBreakMs, min(maxBreakMs, breakMs × breakGrowth^(k − 1)) × (1 + breakJitter × (2u − 1)))
 *
 * The open → half-open move happens lazily, on the first call at or after the break's end.
 */
export class CircuitBreaker {
  readonly mode: BreakerMode;
  readonly threshold: number;
  readonly failureRatio: number;
  readonly minThroughput: number;
  readonly halfOpenProbes: number;
  readonly successesToClose: number;
  readonly breakMs: number;
  readonly breakGrowth: number;
  readonly maxBreakMs: number;
  readonly breakJitter: number;
  readonly isFailure: (classification: Classification) => boolean;
  private readonly onStateChange: CircuitBreakerOptions['onStateChange'];
  private readonly random: Random;
  private readonly window: BucketWindow | undefined;

  private st = CLOSED;
  private consecutiveFailures = 0;
  private openUntil = 0;
  private opensInRow = 0;
  private generation = 0;
  private probesInFlight = 0;
  private probeSuccesses = 0;
  private openCount = 0;
  private rejectedCount = 0;
  private lastBreak = 0;
  private isolatedByHand = false;

  constructor(options: CircuitBreakerOptions, random: Random) {
    const v = new OptionsValidator('circuit breaker');
    v.knownKeys(options, KEYS)
      .oneOf('mode', options?.mode, ['consecutive', 'ratio'])
      .integer('threshold', options?.threshold, 1)
      .number('failureRatio', options?.failureRatio, 0, 1)
      .check(options?.failureRatio !== 0, 'Expected `failureRatio` > 0 (a breaker that opens on no failure), got 0')
      .duration('windowMs', options?.windowMs, { min: 1 })
      .integer('buckets', options?.buckets, 1, { max: MAX_WINDOW_BUCKETS })
      .integer('minThroughput', options?.minThroughput, 1)
      .integer('halfOpenProbes', options?.halfOpenProbes, 1)
      .integer('successesToClose', options?.successesToClose, 1)
      .duration('breakMs', options?.breakMs)
      .number('breakGrowth', options?.breakGrowth, 1, 1000)
      .duration('maxBreakMs', options?.maxBreakMs)
      .number('breakJitter', options?.breakJitter, 0, 1)
      .func('isFailure', options?.isFailure)
      .func('onStateChange', options?.onStateChange)
      .check(
        typeof random === 'object' && random !== null && typeof random.next === 'function',
        `Expected a Random (an object with next()), got ${typeof random}`,
      );
    const breakMs = options?.breakMs ?? CIRCUIT_BREAKER_DEFAULTS.breakMs;
    const maxBreakMs = options?.maxBreakMs ?? CIRCUIT_BREAKER_DEFAULTS.maxBreakMs;
    v.check(
      !(typeof breakMs === 'number' && typeof maxBreakMs === 'number' && breakMs > maxBreakMs),
      `Expected \`breakMs\` ≤ \`maxBreakMs\`, got breakMs ${breakMs} > maxBreakMs ${maxBreakMs}`,
    );
    v.done();
    const d = CIRCUIT_BREAKER_DEFAULTS;
    this.mode = options.mode ?? d.mode;
    this.threshold = options.threshold ?? d.threshold;
    this.failureRatio = options.failureRatio ?? d.failureRatio;
    this.minThroughput = options.minThroughput ?? d.minThroughput;
    this.halfOpenProbes = options.halfOpenProbes ?? d.halfOpenProbes;
    this.successesToClose = options.successesToClose ?? d.successesToClose;
    this.breakMs = breakMs;
    this.breakGrowth = options.breakGrowth ?? d.breakGrowth;
    this.maxBreakMs = maxBreakMs;
    this.breakJitter = options.breakJitter ?? d.breakJitter;
    this.isFailure = options.isFailure ?? d.isFailure;
    // Guarded: a transition happens inside a call, or on a timer; a throwing hook must break neither.
    const hook = options.onStateChange;
    this.onStateChange = hook === undefined ? undefined : (from, to, nowMs) => callHook(hook, from, to, nowMs);
    this.random = random;
    this.window =
      this.mode === 'ratio' ? new BucketWindow(options.windowMs ?? d.windowMs, options.buckets ?? d.buckets, 2) : undefined;
  }

  /**
   * Asks to make a call now: `BREAKER_ALLOWED` (closed), a probe ticket > 0 (half-open, a
   * probe slot was free and is now taken), or `BREAKER_REJECTED`.
   */
  tryAcquire(nowMs: number): number {
    const st = this.st;
    if (st === CLOSED) return BREAKER_ALLOWED;
    if (st === OPEN) {
      if (nowMs < this.openUntil || this.isolatedByHand) {
        this.rejectedCount++;
        return BREAKER_REJECTED;
      }
      this.toHalfOpen();
    }
    if (this.probesInFlight < this.halfOpenProbes) {
      this.probesInFlight++;
      return this.generation;
    }
    this.rejectedCount++;
    return BREAKER_REJECTED;
  }

  /** The call admitted with `permit` succeeded. */
  /**
   * Whether `onSuccess` would read its `nowMs` now: a ratio-mode window files it by time, a
   * probe may close the breaker; a closed consecutive-mode breaker only resets its count.
   */
  get successNeedsTime(): boolean {
    return this.window !== undefined || this.st !== CLOSED;
  }

  onSuccess(nowMs: number, permit: number): void {
    if (permit > 0) {
      if (this.st !== HALF_OPEN || permit !== this.generation) return;
      this.probesInFlight--;
      if (++this.probeSuccesses >= this.successesToClose) this.closeNow(nowMs);
      return;
    }
    if (this.st !== CLOSED) return;
    const w = this.window;
    if (w === undefined) this.consecutiveFailures = 0;
    else w.add(nowMs, CALLS, 1);
  }

  /** The call admitted with `permit` failed in a way that counts against the callee. */
  onFailure(nowMs: number, permit: number): void {
    if (permit > 0) {
      if (this.st === HALF_OPEN && permit === this.generation) this.trip(nowMs);
      return;
    }
    if (this.st !== CLOSED) return;
    const w = this.window;
    if (w === undefined) {
      if (++this.consecutiveFailures >= this.threshold) this.trip(nowMs);
      return;
    }
    w.add(nowMs, CALLS, 1);
    w.add(nowMs, FAILURES, 1);
    const calls = w.sum(nowMs, CALLS);
    if (calls >= this.minThroughput && w.sum(nowMs, FAILURES) >= this.failureRatio * calls) this.trip(nowMs);
  }

  /**
   * The call admitted with `permit` ended in a way that says nothing about the callee's
   * health (a 404, a caller abort): no count changes, and a probe's slot is released.
   */
  onNeutral(_nowMs: number, permit: number): void {
    if (permit > 0 && this.st === HALF_OPEN && permit === this.generation) this.probesInFlight--;
  }

  /**
   * The call failed with `classification`: `onFailure` if `isFailure` says it counts,
   * `onNeutral` otherwise. Returns whether it counted.
   */
  onError(nowMs: number, permit: number, classification: Classification): boolean {
    if (this.counts(classification)) {
      this.onFailure(nowMs, permit);
      return true;
    }
    this.onNeutral(nowMs, permit);
    return false;
  }

  /**
   * `isFailure`, guarded: a hook that throws must not leave a half-open probe's slot taken for
   * good (every later call refused, circuit-open). The default predicate decides, and the
   * hook's error is reported.
   */
  private counts(classification: Classification): boolean {
    try {
      return this.isFailure(classification) === true;
    } catch (error) {
      reportHookError(error);
      return DEFAULT_BREAKER_FAILURE_PREDICATE(classification);
    }
  }

  /** State at `nowMs` (an open breaker whose break has ended reads, and becomes, half-open). */
  state(nowMs: number): BreakerState {
    if (this.st === OPEN && nowMs >= this.openUntil && !this.isolatedByHand) this.toHalfOpen();
    return NAMES[this.st]!;
  }

  /**
   * For a rejected call: ms until the breaker turns half-open, while open; `undefined` while
   * half-open (a probe is in flight and its result decides) or closed.
   */
  retryAfterMs(nowMs: number): number | undefined {
    if (this.st !== OPEN || this.isolatedByHand) return undefined;
    const left = this.openUntil - nowMs;
    return left > 0 ? left : undefined;
  }

  /**
   * Holds the breaker open until `untilMs` on another's word (a fleet: another process saw
   * the callee dead, or holds the probe lease). Extends an open breaker's break, never
   * shortens it; probes of a half-open period in flight no longer count. Unlike a trip it
   * does not lengthen the next break.
   */
  holdOpen(nowMs: number, untilMs: number): void {
    const from = this.st;
    if (from === OPEN) {
      if (untilMs > this.openUntil) this.openUntil = untilMs;
      return;
    }
    this.st = OPEN;
    this.openUntil = untilMs;
    this.lastBreak = Math.max(0, untilMs - nowMs);
    this.probesInFlight = 0;
    this.consecutiveFailures = 0;
    this.window?.reset();
    if (from === CLOSED) this.openCount++;
    this.onStateChange?.(NAMES[from]!, 'open', nowMs);
  }

  /** Ends an open breaker's break now (a fleet granted this process the probe lease): half-open. */
  endBreak(nowMs: number): void {
    if (this.st !== OPEN || this.isolatedByHand) return; // an isolation by hand ends only by hand
    this.openUntil = nowMs;
    this.toHalfOpen();
  }

  /** Closes the breaker on another's word (a fleet's probe succeeded elsewhere). */
  release(nowMs: number): void {
    if (this.st !== CLOSED && !this.isolatedByHand) this.closeNow(nowMs);
  }

  /** Times the breaker opened since creation ("breaker opens"). */
  get opens(): number {
    return this.openCount;
  }

  /** Calls refused by `tryAcquire` since creation. */
  get rejected(): number {
    return this.rejectedCount;
  }

  /** Duration of the latest break in ms (0 before the first opening). */
  get lastBreakMs(): number {
    return this.lastBreak;
  }

  /** Probes currently admitted and not yet reported (half-open only). */
  get probes(): number {
    return this.st === HALF_OPEN ? this.probesInFlight : 0;
  }

  /** Whether the breaker was opened by hand (`isolate`) and stays open until `close`. */
  get isolated(): boolean {
    return this.isolatedByHand;
  }

  /**
   * Opens the breaker by hand and holds it open — every call fails fast — until `close`
   * (an operator taking a dependency out of rotation; Polly's `Isolate`, opossum's `open()`).
   * Not counted in `opens`.
   */
  isolate(nowMs: number): void {
    const from = this.st;
    this.isolatedByHand = true;
    this.st = OPEN;
    this.openUntil = Number.POSITIVE_INFINITY;
    this.probesInFlight = 0;
    if (from !== OPEN) this.onStateChange?.(NAMES[from]!, 'open', nowMs);
  }

  /**
   * Closes the breaker by hand, now: ends an isolation or a break, and forgets failures and
   * openings in a row. Calls admitted before are ignored when they report (their permits are
   * from an earlier period).
   */
  close(nowMs: number): void {
    this.isolatedByHand = false;
    if (this.st === CLOSED) {
      this.consecutiveFailures = 0;
      this.window?.reset();
      return;
    }
    this.generation++;
    this.closeNow(nowMs);
  }

  /** The state as plain JSON, times relative to `nowMs` (see {@link CircuitBreakerSnapshot}). */
  snapshot(nowMs: number): CircuitBreakerSnapshot {
    const open = this.st !== CLOSED;
    return {
      state: open ? 'open' : 'closed',
      breakLeftMs: open && !this.isolatedByHand ? Math.max(0, this.openUntil - nowMs) : 0,
      opensInRow: this.opensInRow,
      consecutiveFailures: this.consecutiveFailures,
      isolated: this.isolatedByHand,
    };
  }

  /**
   * Takes up a state saved by `snapshot` (here or in another process) at `nowMs`. A value
   * that is not a snapshot — read from a file, so untrusted — throws an `InvalidOptionsError`
   * and changes nothing.
   */
  restore(snapshot: CircuitBreakerSnapshot, nowMs: number): void {
    const v = new OptionsValidator('circuit breaker snapshot');
    v.knownKeys(snapshot, ['state', 'breakLeftMs', 'opensInRow', 'consecutiveFailures', 'isolated']);
    const s = (snapshot ?? {}) as Partial<CircuitBreakerSnapshot>;
    v.oneOf('state', s.state, ['closed', 'open'])
      .check(s.state !== undefined, 'Expected `state`')
      .duration('breakLeftMs', s.breakLeftMs)
      .integer('opensInRow', s.opensInRow, 0)
      .integer('consecutiveFailures', s.consecutiveFailures, 0)
      .boolean('isolated', s.isolated)
      .done();
    const from = this.st;
    this.generation++;
    this.probesInFlight = 0;
    this.probeSuccesses = 0;
    this.window?.reset();
    this.opensInRow = s.opensInRow ?? 0;
    this.consecutiveFailures = s.consecutiveFailures ?? 0;
    this.isolatedByHand = s.isolated === true;
    if (s.state === 'open' || this.isolatedByHand) {
      this.st = OPEN;
      this.openUntil = this.isolatedByHand ? Number.POSITIVE_INFINITY : nowMs + Math.min(s.breakLeftMs ?? 0, this.maxBreakMs);
    } else {
      this.st = CLOSED;
    }
    if (from !== this.st) this.onStateChange?.(NAMES[from]!, NAMES[this.st]!, nowMs);
  }

  /** The un-jittered, capped break for the k-th opening in a row. */
  breakCeiling(k: number): number {
    const raw = this.breakMs * this.breakGrowth ** (k - 1);
    return Number.isFinite(raw) && raw < this.maxBreakMs ? raw : this.maxBreakMs;
  }

  private trip(nowMs: number): void {
    const from = this.st;
    this.opensInRow++;
    const jittered = this.breakCeiling(this.opensInRow) * (1 + this.breakJitter * (2 * this.random.next() - 1));
    this.lastBreak = Math.min(jittered, this.maxBreakMs);
    this.openUntil = nowMs + this.lastBreak;
    this.st = OPEN;
    this.openCount++;
    this.probesInFlight = 0;
    this.consecutiveFailures = 0;
    this.window?.reset();
    this.onStateChange?.(NAMES[from]!, 'open', nowMs);
  }

  private toHalfOpen(): void {
    this.st = HALF_OPEN;
    this.generation++;
    this.probesInFlight = 0;
    this.probeSuccesses = 0;
    this.onStateChange?.('open', 'half-open', this.openUntil);
  }

  private closeNow(nowMs: number): void {
    const from = this.st;
    this.st = CLOSED;
    this.opensInRow = 0;
    this.probesInFlight = 0;
    this.consecutiveFailures = 0;
    this.window?.reset();
    this.onStateChange?.(NAMES[from]!, 'closed', nowMs);
  }
}
