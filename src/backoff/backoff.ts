import { OptionsValidator } from '../options/validate.js';
import type { Random } from '../random/random.js';

/**
 * How the delay ceiling grows with the number of failures so far, `n ≥ 1`:
 * - `constant`:    ceiling(n) = base
 * - `linear`:      ceiling(n) = base + step × (n − 1)
 * - `exponential`: ceiling(n) = base × factor^(n − 1)
 * `base` is therefore always the first delay.
 */
export type BackoffShape = 'constant' | 'linear' | 'exponential';

/**
 * How a delay is drawn from the ceiling `c = min(cap, ceiling(n))`, with u uniform in [0, 1)
 * and f = floor (0 by default, where these are the classic formulas):
 * - `none`:         delay = c
 * - `full`:         delay = f + u × (c − f)                        (AWS "full jitter")
 * - `equal`:        delay = f + (c − f)/2 + u × (c − f)/2
 * - `decorrelated`: delay = min(cap, b + u × (3 × previous − b)), b = max(base, f), previous₀ = b
 *                   (ignores the shape; grows from the previous delay instead)
 * Then, for every jitter: delay = clamp(delay, floor, cap). Jitter spreads over [f, c], not
 * [0, c] clamped up to f, so a floor does not put clients back in step.
 */
export type Jitter = 'none' | 'full' | 'equal' | 'decorrelated';

export interface BackoffOptions {
  /** @default 'exponential' */
  shape?: BackoffShape;
  /** First delay in ms. @default 100 */
  base?: number;
  /** Linear growth per failure in ms. @default base */
  step?: number;
  /** Exponential growth factor, ≥ 1. @default 2 */
  factor?: number;
  /** @default 'full' */
  jitter?: Jitter;
  /** No delay is ever longer. @default 20_000 */
  cap?: number;
  /** No delay is ever shorter (a "minimum wait", like RFC 6298's 1 s initial RTO). @default 0 */
  floor?: number;
}

export const BACKOFF_DEFAULTS = {
  shape: 'exponential',
  base: 100,
  factor: 2,
  jitter: 'full',
  cap: 20_000,
  floor: 0,
} as const satisfies BackoffOptions;

const KEYS = ['shape', 'base', 'step', 'factor', 'jitter', 'cap', 'floor'] as const;

/** A validated backoff schedule. Pure: the same inputs and random draws give the same delay. */
export class Backoff {
  readonly shape: BackoffShape;
  readonly base: number;
  readonly step: number;
  readonly factor: number;
  readonly jitter: Jitter;
  readonly cap: number;
  readonly floor: number;

  constructor(options: BackoffOptions = {}) {
    const v = new OptionsValidator('backoff');
    v.knownKeys(options, KEYS)
      .oneOf('shape', options.shape, ['constant', 'linear', 'exponential'])
      .oneOf('jitter', options.jitter, ['none', 'full', 'equal', 'decorrelated'])
      .duration('base', options.base)
      .duration('step', options.step)
      .number('factor', options.factor, 1, 1000)
      .duration('cap', options.cap)
      .duration('floor', options.floor);
    const cap = options.cap ?? BACKOFF_DEFAULTS.cap;
    const floor = options.floor ?? BACKOFF_DEFAULTS.floor;
    v.check(
      !(typeof floor === 'number' && typeof cap === 'number' && floor > cap),
      `Expected \`floor\` ≤ \`cap\`, got floor ${floor} > cap ${cap}`,
    );
    v.done();
    this.shape = options.shape ?? BACKOFF_DEFAULTS.shape;
    this.base = options.base ?? BACKOFF_DEFAULTS.base;
    this.step = options.step ?? this.base;
    this.factor = options.factor ?? BACKOFF_DEFAULTS.factor;
    this.jitter = options.jitter ?? BACKOFF_DEFAULTS.jitter;
    this.cap = cap;
    this.floor = floor;
  }

  /** The un-jittered ceiling after `failures` failures, capped. */
  ceiling(failures: number): number {
    const n = Math.max(1, failures);
    let raw: number;
    switch (this.shape) {
      case 'constant':
        raw = this.base;
        break;
      case 'linear':
        raw = this.base + this.step * (n - 1);
        break;
      default:
        // factor^(n-1) overflows to Infinity for huge n; min() with cap keeps it finite.
        raw = this.base * this.factor ** (n - 1);
    }
    return Number.isFinite(raw) ? Math.min(this.cap, raw) : this.cap;
  }

  /**
   * Delay before the next attempt after `failures` failures. `previousMs` is the delay used
   * last time (only decorrelated jitter reads it). Always in [floor, cap].
   */
  delay(failures: number, random: Random, previousMs?: number): number {
    // Jitter spreads delays over [floor, c] rather than [0, c] and clamping up afterwards:
    // clamping would put every short draw on exactly `floor`, back in step with each other.
    const floor = this.floor;
    let d: number;
    switch (this.jitter) {
      case 'none':
        d = this.ceiling(failures);
        break;
      case 'full': {
        const c = this.ceiling(failures);
        d = c > floor ? floor + random.next() * (c - floor) : floor;
        break;
      }
      case 'equal': {
        const c = this.ceiling(failures);
        const half = c > floor ? (c - floor) / 2 : 0;
        d = floor + half + random.next() * half;
        break;
      }
      default: {
        const low = Math.max(this.base, floor);
        const prev = previousMs !== undefined && previousMs > 0 ? previousMs : low;
        const upper = Math.max(low, 3 * prev);
        d = Math.min(this.cap, low + random.next() * (upper - low));
      }
    }
    if (!(d >= floor)) d = floor; // also catches NaN
    return Math.min(d, this.cap);
  }
}
