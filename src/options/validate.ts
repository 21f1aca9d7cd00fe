/**
 * Option validation shared by every policy: collect every problem, then throw once with
 * all of them, each naming the option and the offending value.
 */
export class OptionsValidator {
  private readonly problems: string[] = [];

  constructor(private readonly subject: string) {}

  /** Rejects keys the policy does not know (a typo would otherwise be silently ignored). */
  knownKeys(options: object | undefined, known: readonly string[]): this {
    if (options === undefined || options === null) return this;
    if (typeof options !== 'object') {
      this.problems.push(`Expected an options object, got ${show(options)}`);
      return this;
    }
    for (const key of Object.keys(options)) {
      if (!known.includes(key)) this.problems.push(`Unknown option \`${key}\` (known: ${known.join(', ')})`);
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
  integer(name: string, value: unknown, min: number, opts: { allowInfinity?: boolean } = {}): this {
    if (value === undefined) return this;
    if (value === Number.POSITIVE_INFINITY && opts.allowInfinity) return this;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
      this.problems.push(`Expected \`${name}\` to be an integer ≥ ${min}, got ${show(value)}`);
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
