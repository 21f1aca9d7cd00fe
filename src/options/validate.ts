/**
 * Option validation shared by every policy: collect every problem, then throw once with
 * all of them, each naming the option and the offending value.
 */
export class OptionsValidator {
  /** What is wrong so far, one line each. */
  readonly problems: string[] = [];

  constructor(private readonly subject: string) {}

  /** Rejects keys the policy does not know (a typo would otherwise be silently ignored). */
  knownKeys(options: object | undefined, known: readonly string[]): this {
    if (options === undefined || options === null) return this;
    if (typeof options !== 'object') {
      this.problems.push(`Expected an options object, got ${show(options)}`);
      return this;
    }
    for (const key of Object.keys(options)) {
      if (known.includes(key)) continue;
      // Every duration is named for its unit (`baseMs`, `attemptTimeoutMs`); point users of the
      // older unit-less names straight at the new one.
      if (known.includes(`${key}Ms`)) this.problems.push(`Unknown option \`${key}\`: durations end in Ms, use \`${key}Ms\``);
      else this.problems.push(`Unknown option \`${key}\` (known: ${known.join(', ')})`);
    }
    return this;
  }

  /** A duration in ms: finite and ≥ min (default 0). `Infinity` only when `allowInfinity`. */
  duration(name: string, value: unknown, opts: { min?: number; allowInfinity?: boolean } = {}): this {
    if (value === undefined) return this;
    const min = opts.min ?? 0;
    if (typeof value !== 'number' || Number.isNaN(value)) {
      this.problems.push(`Expected \`${name}\` to be a number of milliseconds, got ${show(value)}`);
    } else if (value === Number.POSITIVE_INFINITY) {
      if (!opts.allowInfinity) this.problems.push(`Expected \`${name}\` to be finite, got Infinity`);
    } else if (!Number.isFinite(value) || value < min) {
      this.problems.push(`Expected \`${name}\` ≥ ${min}, got ${show(value)}`);
    }
    return this;
  }

  /** A number within [min, max]. */
  number(name: string, value: unknown, min: number, max: number = Number.POSITIVE_INFINITY): this {
    if (value === undefined) return this;
    if (typeof value !== 'number' || Number.isNaN(value) || value < min || value > max || value === Number.NEGATIVE_INFINITY) {
      const range = max === Number.POSITIVE_INFINITY ? `≥ ${min}` : `in [${min}, ${max}]`;
      this.problems.push(`Expected \`${name}\` ${range}, got ${show(value)}`);
    }
    return this;
  }

  /** An integer ≥ min; `Infinity` only when allowed. */
  integer(name: string, value: unknown, min: number, opts: { allowInfinity?: boolean; max?: number } = {}): this {
    if (value === undefined) return this;
    if (value === Number.POSITIVE_INFINITY && opts.allowInfinity) return this;
    const max = opts.max;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || (max !== undefined && value > max)) {
      const range = max === undefined ? `≥ ${min}` : `from ${min} to ${max}`;
      this.problems.push(`Expected \`${name}\` to be an integer ${range}, got ${show(value)}`);
    }
    return this;
  }

  oneOf(name: string, value: unknown, allowed: readonly string[]): this {
    if (value === undefined) return this;
    if (typeof value !== 'string' || !allowed.includes(value)) {
      this.problems.push(`Expected \`${name}\` to be one of ${allowed.map((a) => `'${a}'`).join(', ')}, got ${show(value)}`);
    }
    return this;
  }

  boolean(name: string, value: unknown): this {
    if (value !== undefined && typeof value !== 'boolean') {
      this.problems.push(`Expected \`${name}\` to be a boolean, got ${show(value)}`);
    }
    return this;
  }

  string(name: string, value: unknown): this {
    if (value !== undefined && typeof value !== 'string') {
      this.problems.push(`Expected \`${name}\` to be a string, got ${show(value)}`);
    }
    return this;
  }

  array(name: string, value: unknown): this {
    if (value !== undefined && !Array.isArray(value)) {
      this.problems.push(`Expected \`${name}\` to be an array, got ${show(value)}`);
    }
    return this;
  }

  /**
   * Builds a nested policy (which validates its own options) and records its problems under
   * `label`, so that one error lists the problems of every policy at once.
   * `undefined` when the build failed.
   */
  nested<T>(label: string, build: () => T): T | undefined {
    try {
      return build();
    } catch (error) {
      const problems = (error as { problems?: unknown }).problems;
      if (Array.isArray(problems)) for (const p of problems) this.problems.push(`${label}: ${String(p)}`);
      else this.problems.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  }

  func(name: string, value: unknown): this {
    if (value !== undefined && typeof value !== 'function') {
      this.problems.push(`Expected \`${name}\` to be a function, got ${show(value)}`);
    }
    return this;
  }

  /** A free-form rule: when `ok` is false, `message` is recorded. */
  check(ok: boolean, message: string): this {
    if (!ok) this.problems.push(message);
    return this;
  }

  /** Throws an `InvalidOptionsError` listing every problem, if there is any. */
  done(): void {
    if (this.problems.length > 0) throw new InvalidOptionsError(this.subject, this.problems);
  }
}

/**
 * The option names of `T`, checked by the compiler both ways: every key of `T` must be listed
 * and nothing else may be, so adding an option to an interface without teaching its
 * validator about it fails to compile instead of being rejected at run time.
 *
 * ```ts
 * const KEYS = optionKeys<BulkheadOptions>({ maxConcurrent: true, maxQueue: true, queueTimeoutMs: true });
 * ```
 */
export function optionKeys<T extends object>(keys: { readonly [K in keyof Required<T> & string]: true }): readonly string[] {
  return Object.freeze(Object.keys(keys));
}

/**
 * `true` means "on, with the defaults", `false` or `undefined` "off", an object "on, with
 * these options" — for the policies that are off unless asked for (breaker, bulkhead, pacing).
 */
export function enabledOptions<T extends object>(value: T | boolean | undefined): T | undefined {
  if (value === true) return {} as T;
  if (value === false || value === undefined) return undefined;
  return value;
}

const BRAND = Symbol.for('kindly.invalid-options');

/** Thrown when a policy is built with bad options. Lists every problem at once. */
export class InvalidOptionsError extends TypeError {
  override readonly name = 'InvalidOptionsError';
  readonly code = 'ERR_KINDLY_INVALID_OPTIONS';
  constructor(
    readonly subject: string,
    readonly problems: readonly string[],
  ) {
    super(`Invalid ${subject} options:\n  - ${problems.join('\n  - ')}`);
    (this as unknown as Record<symbol, boolean>)[BRAND] = true;
  }
}

/** Brand check that survives two copies of kindly in one process (unlike `instanceof`). */
export function isInvalidOptionsError(value: unknown): value is InvalidOptionsError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

export function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  if (typeof value === 'function') return 'a function';
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/**
 * The most buckets a sliding window (breaker, budget, pacer) may be split into: each lane
 * holds them as typed arrays, so `buckets: 1e7` passed as an integer and cost ~160 MB per lane.
 * A window's resolution gains nothing past a few hundred.
 */
export const MAX_WINDOW_BUCKETS = 1_000;
