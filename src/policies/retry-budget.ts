import { MAX_WINDOW_BUCKETS, OptionsValidator } from '../options/validate.js';
import { BucketWindow } from './bucket-window.js';
import { KeyedCache } from './keyed-cache.js';

/** Shrinks the budget's ratio while the downstream's error rate is high. */
export interface ShrinkOnErrorsOptions {
  /** Outcomes needed in the window before the error rate is trusted. @default 20 */
  minSamples?: number;
  /** The effective ratio never goes below this (≤ `ratio`). @default 0 */
  minRatio?: number;
}

export interface RetryBudgetOptions {
  /** Retries allowed per first attempt, in [0, 1]. @default 0.2 */
  ratio?: number;
  /** Length of the sliding window in ms. @default 10_000 */
  windowMs?: number;
  /** Retries always allowed per second, whatever the traffic (the reserve), ≥ 0. @default 10 */
  reservePerSecond?: number;
  /** Fixed buckets the window is split into (resolution of the sliding window). @default 10 */
  buckets?: number;
  /**
   * Shrink the ratio as the error rate rises: `true` for the defaults, or options.
   * Errors are reported with `recordOutcome`. @default false
   */
  shrinkOnErrors?: boolean | ShrinkOnErrorsOptions;
}

export const RETRY_BUDGET_DEFAULTS = {
  ratio: 0.2,
  windowMs: 10_000,
  reservePerSecond: 10,
  buckets: 10,
  shrinkOnErrors: false,
} as const satisfies RetryBudgetOptions;

export const SHRINK_ON_ERRORS_DEFAULTS = {
  minSamples: 20,
  minRatio: 0,
} as const satisfies ShrinkOnErrorsOptions;

const KEYS = ['ratio', 'windowMs', 'reservePerSecond', 'buckets', 'shrinkOnErrors'] as const;
const SHRINK_KEYS = ['minSamples', 'minRatio'] as const;

// Counters kept per bucket.
const REQUESTS = 0;
const RETRIES = 1;
const OUTCOMES = 2;
const ERRORS = 3;

/**
 * Absorbs floating-point error in `ratio × requests` (0.2 × 3 = 0.6000000000000001) so a
 * budget that is exactly full still grants its last retry.
 */
const EPSILON = 1e-9;

/**
 * A retry budget in Finagle's token model, with the reserve as a floor (Envoy's min_retry_concurrency). Over a sliding window of `windowMs`,
 *
 *     allowance = max(ratio_eff × requests, reservePerSecond × windowMs / 1000)
 *     a retry is granted  ⇔  retries + 1 ≤ allowance
 *     available = max(0, ⌊allowance − retries⌋)
 *
 * where `requests` are first attempts (`recordRequest`) and `retries` the retries granted
 * (`tryRetry`), both counted in the window. Like Finagle's leaky token bucket, a deposit
 * expires with its bucket while the retry it paid for stays in the window until its own
 * bucket expires. Hence the guarantee: over any window, granted retries ≤ max(ratio × (first
 * attempts in that window and the one before it), reserve), and at the instant of each grant
 * the inequality above holds for the current window.
 *
 * With `shrinkOnErrors`, once `minSamples` outcomes are in the window:
 *
 *     errorRate = errors / outcomes            (from `recordOutcome`, every attempt)
 *     ratio_eff = max(minRatio, ratio × (1 − errorRate))
 *
 * so a downstream failing every attempt gets only the reserve. Without it, ratio_eff = ratio.
 *
 * Every operation is O(1) time and memory at any rate (bucketed counters). Sans-IO: time is
 * the caller's `nowMs` (monotonic ms).
 */
export class RetryBudget {
  readonly ratio: number;
  readonly windowMs: number;
  readonly reservePerSecond: number;
  readonly buckets: number;
  /** Retries always allowed per window: `reservePerSecond × windowMs / 1000`. */
  readonly reserve: number;
  /** `undefined` when shrinking is off. */
  readonly shrinkOnErrors: Readonly<Required<ShrinkOnErrorsOptions>> | undefined;
  private readonly window: BucketWindow;
  private rejectedCount = 0;

  constructor(options: RetryBudgetOptions = {}) {
    const resolved = resolveRetryBudgetOptions(options, 'retry budget');
    this.ratio = resolved.ratio;
    this.windowMs = resolved.windowMs;
    this.reservePerSecond = resolved.reservePerSecond;
    this.buckets = resolved.buckets;
    this.shrinkOnErrors = resolved.shrinkOnErrors;
    this.reserve = (this.reservePerSecond * this.windowMs) / 1000;
    this.window = new BucketWindow(this.windowMs, this.buckets, this.shrinkOnErrors === undefined ? 2 : 4);
  }

  /** A first attempt was made: deposits `ratio` of a retry. */
  recordRequest(nowMs: number): void {
    this.window.add(nowMs, REQUESTS, 1);
  }

  /** Withdraws one retry if the budget allows it; `false` (and nothing withdrawn) otherwise. */
  tryRetry(nowMs: number): boolean {
    const w = this.window;
    const retries = w.sum(nowMs, RETRIES);
    if (retries + 1 > this.allowance(nowMs) + EPSILON) {
      this.rejectedCount++;
      return false;
    }
    w.add(nowMs, RETRIES, 1);
    return true;
  }

  /**
   * `count` retries that another authority granted (a fleet budget): withdrawn whatever the
   * allowance, so that this budget knows what was spent if it has to decide alone later.
   */
  recordRetries(nowMs: number, count = 1): void {
    this.window.add(nowMs, RETRIES, count);
  }

  /** Whole retries that `tryRetry` would grant now, ≥ 0. */
  available(nowMs: number): number {
    const left = this.allowance(nowMs) - this.window.sum(nowMs, RETRIES) + EPSILON;
    return left > 0 ? Math.floor(left) : 0;
  }

  /**
   * The outcome of any attempt (first or retry); feeds `shrinkOnErrors`. A no-op when
   * shrinking is off, so the runtime may call it unconditionally.
   */
  recordOutcome(nowMs: number, ok: boolean): void {
    if (this.shrinkOnErrors === undefined) return;
    this.window.add(nowMs, OUTCOMES, 1);
    if (!ok) this.window.add(nowMs, ERRORS, 1);
  }

  /** The ratio in force now (lower than `ratio` only while shrinking). */
  effectiveRatio(nowMs: number): number {
    const shrink = this.shrinkOnErrors;
    if (shrink === undefined) return this.ratio;
    const outcomes = this.window.sum(nowMs, OUTCOMES);
    if (outcomes < shrink.minSamples || outcomes === 0) return this.ratio;
    const errorRate = this.window.sum(nowMs, ERRORS) / outcomes;
    const shrunk = this.ratio * (1 - errorRate);
    return Math.max(shrunk, shrink.minRatio);
  }

  /** First attempts counted in the window. */
  requests(nowMs: number): number {
    return this.window.sum(nowMs, REQUESTS);
  }

  /** Retries granted in the window. */
  retries(nowMs: number): number {
    return this.window.sum(nowMs, RETRIES);
  }

  /** `tryRetry` calls refused since creation (the "budget rejections" metric). */
  get rejected(): number {
    return this.rejectedCount;
  }

  /** `max(ratio_eff × requests, reserve)` over the window: the most retries it may hold. */
  allowance(nowMs: number): number {
    return Math.max(this.effectiveRatio(nowMs) * this.window.sum(nowMs, REQUESTS), this.reserve);
  }
}

/** Validated, defaulted budget options (shared with `KeyedRetryBudgets`). */
interface ResolvedRetryBudgetOptions {
  ratio: number;
  windowMs: number;
  reservePerSecond: number;
  buckets: number;
  shrinkOnErrors: Readonly<Required<ShrinkOnErrorsOptions>> | undefined;
}

function resolveRetryBudgetOptions(options: RetryBudgetOptions, subject: string): ResolvedRetryBudgetOptions {
  const v = new OptionsValidator(subject);
  v.knownKeys(options, KEYS)
    .number('ratio', options?.ratio, 0, 1)
    .duration('windowMs', options?.windowMs, { min: 1 })
    .number('reservePerSecond', options?.reservePerSecond, 0, Number.MAX_VALUE)
    .integer('buckets', options?.buckets, 1, { max: MAX_WINDOW_BUCKETS });
  const ratio = options?.ratio ?? RETRY_BUDGET_DEFAULTS.ratio;
  const shrinkOption = options?.shrinkOnErrors ?? RETRY_BUDGET_DEFAULTS.shrinkOnErrors;
  let shrinkOnErrors: Required<ShrinkOnErrorsOptions> | undefined;
  if (shrinkOption === true || (typeof shrinkOption === 'object' && shrinkOption !== null)) {
    const s: ShrinkOnErrorsOptions = shrinkOption === true ? {} : shrinkOption;
    v.knownKeys(s, SHRINK_KEYS)
      .integer('shrinkOnErrors.minSamples', s.minSamples, 1)
      .number('shrinkOnErrors.minRatio', s.minRatio, 0, 1);
    const minRatio = s.minRatio ?? SHRINK_ON_ERRORS_DEFAULTS.minRatio;
    v.check(
      !(typeof minRatio === 'number' && typeof ratio === 'number' && minRatio > ratio),
      `Expected \`shrinkOnErrors.minRatio\` ≤ \`ratio\`, got minRatio ${minRatio} > ratio ${ratio}`,
    );
    shrinkOnErrors = { minSamples: s.minSamples ?? SHRINK_ON_ERRORS_DEFAULTS.minSamples, minRatio };
  } else {
    v.check(
      shrinkOption === false,
      `Expected \`shrinkOnErrors\` to be a boolean or an options object, got ${JSON.stringify(shrinkOption)}`,
    );
  }
  v.done();
  return {
    ratio,
    windowMs: options?.windowMs ?? RETRY_BUDGET_DEFAULTS.windowMs,
    reservePerSecond: options?.reservePerSecond ?? RETRY_BUDGET_DEFAULTS.reservePerSecond,
    buckets: options?.buckets ?? RETRY_BUDGET_DEFAULTS.buckets,
    shrinkOnErrors,
  };
}

export interface KeyedRetryBudgetsOptions {
  /** Options shared by every key's budget. @default RETRY_BUDGET_DEFAULTS */
  budget?: RetryBudgetOptions;
  /**
   * Most keys held at once. Adding one more evicts the least recently used key; its window
   * is forgotten, so if it comes back it starts afresh (with its full reserve). @default 1_000
   */
  maxKeys?: number;
}

export const KEYED_RETRY_BUDGETS_DEFAULTS = {
  maxKeys: 1_000,
} as const satisfies KeyedRetryBudgetsOptions;

const KEYED_KEYS = ['budget', 'maxKeys'] as const;

/**
 * One `RetryBudget` per key, created on first use with shared options, so one noisy key
 * (a downstream, `payments:write`, `batch`, …) cannot spend another's retries. Keys are
 * plain strings: compose them as you like (`${downstream}:${read ? 'read' : 'write'}`).
 *
 * At most `maxKeys` budgets are held; beyond that the least recently used is evicted
 * (Map insertion order, refreshed on access). Each call is O(1).
 */
export class KeyedRetryBudgets {
  readonly maxKeys: number;
  readonly budgetOptions: Readonly<RetryBudgetOptions>;
  private readonly budgets: KeyedCache<RetryBudget>;

  constructor(options: KeyedRetryBudgetsOptions = {}) {
    const v = new OptionsValidator('keyed retry budgets');
    v.knownKeys(options, KEYED_KEYS).integer('maxKeys', options?.maxKeys, 1);
    v.done();
    // Validates the shared budget options once, at construction, with their own messages.
    const budget = options?.budget ?? {};
    resolveRetryBudgetOptions(budget, 'keyed retry budgets: budget');
    this.budgetOptions = { ...budget };
    this.maxKeys = options?.maxKeys ?? KEYED_RETRY_BUDGETS_DEFAULTS.maxKeys;
    this.budgets = new KeyedCache({ maxKeys: this.maxKeys, create: () => new RetryBudget(this.budgetOptions) });
  }

  /** The budget for `key`, created if needed. */
  get(key: string): RetryBudget {
    return this.budgets.get(key);
  }

  recordRequest(key: string, nowMs: number): void {
    this.get(key).recordRequest(nowMs);
  }

  tryRetry(key: string, nowMs: number): boolean {
    return this.get(key).tryRetry(nowMs);
  }

  recordRetries(key: string, nowMs: number, count = 1): void {
    this.get(key).recordRetries(nowMs, count);
  }

  available(key: string, nowMs: number): number {
    return this.get(key).available(nowMs);
  }

  recordOutcome(key: string, nowMs: number, ok: boolean): void {
    this.get(key).recordOutcome(nowMs, ok);
  }

  /** Whether `key` currently has a budget (does not create or refresh it). */
  has(key: string): boolean {
    return this.budgets.has(key);
  }

  /** Drops `key`'s budget. */
  delete(key: string): boolean {
    return this.budgets.delete(key);
  }

  /** Keys held, least recently used first. */
  keys(): IterableIterator<string> {
    return this.budgets.keys();
  }

  get size(): number {
    return this.budgets.size;
  }

  /** Budgets evicted because `maxKeys` was reached. */
  get evicted(): number {
    return this.budgets.evicted;
  }
}
