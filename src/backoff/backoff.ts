import { OptionsValidator } from '../options/validate.js';
import type { Random } from '../random/random.js';

/**
 * How the delay ceiling grows with the number of failures so far, `n ≥ 1`:
 * - `constant`:    ceiling(n) = baseMs
 * - `linear`:      ceiling(n) = baseMs + stepMs × (n − 1)
 * - `exponential`: ceiling(n) = baseMs × factor^(n − 1)
 * `baseMs` is therefore always the first delay.
 */
export type BackoffShape = 'constant' | 'linear' | 'exponential';

/**
 * How a delay is drawn from the ceiling `c = min(capMs, ceiling(n))`, with u uniform in [0, 1),
 * f = floorMs (0 by default, where these are the classic formulas) and the window's top
 * t = min(capMs, max(c, 2f)):
 * - `none`:         delay = max(c, f)
 * - `full`:         delay = f + u × (t − f)                        (AWS "full jitter")
 * - `equal`:        delay = f + (t − f)/2 + u × (t − f)/2
 * - `decorrelated`: delay = b + u × (min(capMs, 3 × previous) − b), b = max(baseMs, f), previous₀ = b
 *                   (ignores the shape; grows from the previous delay instead; drawn below
 *                   the cap, not clamped to it, so long delays stay spread too)
 * Then, for every jitter: delay = clamp(delay, floorMs, capMs). Jitter spreads over [f, t], not
 * [0, c] clamped up to f, so a floor does not put clients back in step; and the window is
 * never narrower than the floor itself (t ≥ 2f), so a floor at or above the ceiling still
 * leaves room to spread (only `floorMs = capMs` leaves none: no delay may be longer than `capMs`).
 */
export type Jitter = 'none' | 'full' | 'equal' | 'decorrelated';

export interface BackoffOptions {
  /** @default 'exponential' */
  shape?: BackoffShape;
  /** First delay in ms. @default 100 */
  baseMs?: number;
  /** Linear growth per failure in ms. @default baseMs */
  stepMs?: number;
  /** Exponential growth factor, ≥ 1. @default 2 */
  factor?: number;
  /** @default 'full' */
  jitter?: Jitter;
  /** No delay is ever longer. @default 20_000 */
  capMs?: number;
  /** No delay is ever shorter (a "minimum wait", like RFC 6298's 1 s initial RTO). @default 0 */
  floorMs?: number;
}

export const BACKOFF_DEFAULTS = {
  shape: 'exponential',
  baseMs: 100,
  factor: 2,
  jitter: 'full',
  capMs: 20_000,
  floorMs: 0,
} as const satisfies BackoffOptions;

const KEYS = ['shape', 'baseMs', 'stepMs', 'factor', 'jitter', 'capMs', 'floorMs'] as const;

/** A validated backoff schedule. Pure: the same inputs and random draws give the same delay. */
export class Backoff {
  readonly shape: BackoffShape;
  readonly baseMs: number;
  readonly stepMs: number;
  readonly factor: number;
  readonly jitter: Jitter;
  readonly capMs: number;
  readonly floorMs: number;

  constructor(options: BackoffOptions = {}) {
    const v = new OptionsValidator('backoff');
    v.knownKeys(options, KEYS)
      .oneOf('shape', options.shape, ['constant', 'linear', 'exponential'])
      .oneOf('jitter', options.jitter, ['none', 'full', 'equal', 'decorrelated'])
      .duration('baseMs', options.baseMs)
      .duration('stepMs', options.stepMs)
      .number('factor', options.factor, 1, 1000)
      .duration('capMs', options.capMs)
      .duration('floorMs', options.floorMs);
    const cap = options.capMs ?? BACKOFF_DEFAULTS.capMs;
    const floor = options.floorMs ?? BACKOFF_DEFAULTS.floorMs;
    v.check(
      !(typeof floor === 'number' && typeof cap === 'number' && floor > cap),
      `Expected \`floorMs\` ≤ \`capMs\`, got floorMs ${floor} > capMs ${cap}`,
    );
    v.done();
    this.shape = options.shape ?? BACKOFF_DEFAULTS.shape;
    this.baseMs = options.baseMs ?? BACKOFF_DEFAULTS.baseMs;
    this.stepMs = options.stepMs ?? this.baseMs;
    this.factor = options.factor ?? BACKOFF_DEFAULTS.factor;
    this.jitter = options.jitter ?? BACKOFF_DEFAULTS.jitter;
    this.capMs = cap;
    this.floorMs = floor;
  }

  /** The un-jittered ceiling after `failures` failures, capped. */
  ceiling(failures: number): number {
    const n = Math.max(1, failures);
    let raw: number;
    switch (this.shape) {
      case 'constant':
        raw = this.baseMs;
        break;
      case 'linear':
        raw = this.baseMs + this.stepMs * (n - 1);
        break;
      default:
        // factor^(n-1) overflows to Infinity for huge n; min() with cap keeps it finite.
        raw = this.baseMs * this.factor ** (n - 1);
    }
    return Number.isFinite(raw) ? Math.min(this.capMs, raw) : this.capMs;
  }

  /**
   * Delay before the next attempt after `failures` failures. `previousMs` is the delay used
   * last time (only decorrelated jitter reads it). Always in [floor, cap].
   */
  delay(failures: number, random: Random, previousMs?: number): number {
    // Jitter spreads delays over [floor, top] rather than [0, c] and clamping up afterwards:
    // clamping would put every short draw on exactly `floor`, back in step with each other.
    // The window is at least as wide as the floor, or a floor ≥ c would leave nothing to spread.
    const floor = this.floorMs;
    let d: number;
    switch (this.jitter) {
      case 'none':
        d = this.ceiling(failures);
        break;
      case 'full':
        d = floor + random.next() * (this.windowTop(failures) - floor);
        break;
      case 'equal': {
        const half = (this.windowTop(failures) - floor) / 2;
        d = floor + half + random.next() * half;
        break;
      }
      default: {
        const low = Math.max(this.baseMs, floor);
        const prev = previousMs !== undefined && previousMs > 0 ? previousMs : low;
        // Drawn below the cap rather than clamped to it: clamping would put every long draw
        // on exactly `cap`, in step again.
        const upper = Math.min(this.capMs, Math.max(low, 3 * prev));
        d = low + random.next() * (upper - low);
      }
    }
    if (!(d >= floor)) d = floor; // also catches NaN
    return Math.min(d, this.capMs);
  }

  /** t = min(cap, max(c, 2 × floor)): the top of the jitter window after `failures` failures. */
  private windowTop(failures: number): number {
    return Math.min(this.capMs, Math.max(this.ceiling(failures), 2 * this.floorMs));
  }
}
