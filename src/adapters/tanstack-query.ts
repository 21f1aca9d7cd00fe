import { classifyThrough } from '../classify/classifier-chain.js';
import type { Classification } from '../classify/outcome.js';
import { OptionsValidator } from '../options/validate.js';
import { type RetryDecision, type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import { type Random, systemRandom } from '../random/random.js';
import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/system-clock.js';
import { MAX_NATIVE_DELAY_MS } from '../time/timer-wheel.js';

/** Options of {@link queryRetry} and {@link mutationRetry}. */
export interface QueryRetryOptions {
  /**
   * kindly's retry settings (attempts, backoff, hint limits). `maxElapsedMs` is not accepted:
   * TanStack does not tell a `retry` function when the query started, so it could not be kept.
   * @default RETRY_DEFAULTS
   */
  retry?: Omit<RetryOptions, 'maxElapsedMs'>;
  /** Your reading of an error first; return undefined for kindly's classifier. */
  classify?: (error: unknown, nowMs: number) => Classification | undefined;
  /** Wall clock for HTTP-date hints. @default the system clock */
  clock?: Clock;
  /** @default Math.random */
  random?: Random;
}

/** Options of {@link mutationRetry}. */
export interface MutationRetryOptions extends QueryRetryOptions {
  /**
   * Whether the mutation is safe to repeat after an `unknown` outcome (it sends an
   * `Idempotency-Key`, or it is a PUT/DELETE). When false only `failed` outcomes — the request
   * never reached the server, or was rejected with 429/503 — are retried.
   * @default false
   */
  idempotent?: boolean;
}

/** TanStack's `retry` and `retryDelay` options, driven by kindly's retry decision. */
export interface TanStackRetry {
  retry: (failureCount: number, error: unknown) => boolean;
  retryDelay: (failureCount: number, error: unknown) => number;
}

/**
 * TanStack Query passes `retry` and `retryDelay` the number of failures **before** the one
 * that just happened: 0 after the first attempt failed (query-core `retryer.ts` calls both
 * with `failureCount` and only then increments it). kindly counts attempts from 1, and the
 * attempt that just failed is attempt `failureCount + 1`.
 */
export function attemptFromFailureCount(failureCount: number): number {
  if (!Number.isInteger(failureCount) || failureCount < 0) {
    throw new RangeError(`Expected TanStack's failureCount to be an integer ≥ 0, got ${failureCount}`);
  }
  return failureCount + 1;
}

const KEYS = ['retry', 'classify', 'clock', 'random'] as const;
const MUTATION_KEYS = [...KEYS, 'idempotent'] as const;

/**
 * `retry` and `retryDelay` for queries, from kindly options: the same decision as every kindly
 * call — retryable errors only (503, 429, network errors; never 401/403/404),
 * wait hints honoured (`Retry-After` in an error's `response.headers`), don't-retry markers,
 * jittered backoff. Queries are reads, so they count as idempotent.
 *
 * ```ts
 * new QueryClient({ defaultOptions: { queries: { ...queryRetry() } } });
 * ```
 *
 * TanStack pauses retries while offline or unfocused by itself; this adapter does not.
 */
export function queryRetry(options?: QueryRetryOptions): TanStackRetry {
  return build(options, true, 'queryRetry', KEYS);
}

/**
 * `retry` and `retryDelay` for mutations: as {@link queryRetry}, but a mutation is not
 * idempotent unless you say so, so an `unknown` outcome (timeout, 500, connection reset) is
 * not retried — the write may have happened.
 */
export function mutationRetry(options?: MutationRetryOptions): TanStackRetry {
  return build(options, options?.idempotent ?? false, 'mutationRetry', MUTATION_KEYS);
}

function build(
  options: MutationRetryOptions | undefined,
  idempotent: boolean,
  subject: string,
  keys: readonly string[],
): TanStackRetry {
  const v = new OptionsValidator(subject);
  v.knownKeys(options, keys).func('classify', options?.classify);
  v.check(
    typeof options?.retry !== 'object' || options.retry === null || !('maxElapsedMs' in options.retry),
    '`retry.maxElapsedMs` is not supported: TanStack does not say when the query started (bound the query with a signal instead)',
  );
  v.check(
    options?.idempotent === undefined || typeof options.idempotent === 'boolean',
    `Expected \`idempotent\` to be a boolean, got ${String(options?.idempotent)}`,
  );
  const policy = v.nested('retry', () => new RetryPolicy(options?.retry));
  v.done();
  const retryPolicy = policy as RetryPolicy;
  const clock = options?.clock ?? systemClock;
  const random = options?.random ?? systemRandom;
  const userClassify = options?.classify;

  // TanStack asks retryDelay and then retry about the same failure (in that order today); both
  // must see one decision, or the jitter drawn for the delay and the yes/no could disagree.
  const pending = new WeakMap<object, { attempt: number; decision: RetryDecision }>();
  // TanStack does not say which query failed, so the retry chain (the previous delay that
  // decorrelated jitter grows from, and the time since the first failure) is followed by
  // attempt number: attempt n + 1 right after attempt n continues the chain, attempt 1 starts
  // a new one. Chains of queries failing at once may interleave; then a decision is made
  // without the previous delay (as for a first retry) rather than with another query's.
  let chain: { attempt: number; delayMs: number | undefined; firstFailureAt: number } | undefined;
  const decide = (failureCount: number, error: unknown): RetryDecision => {
    const attempt = attemptFromFailureCount(failureCount);
    const keyed = typeof error === 'object' && error !== null ? error : undefined;
    const cached = keyed === undefined ? undefined : pending.get(keyed);
    if (cached !== undefined && cached.attempt === attempt) {
      pending.delete(keyed as object);
      return cached.decision;
    }
    const now = clock.now();
    const monotonic = clock.monotonic();
    const continues = chain !== undefined && attempt > 1 && chain.attempt === attempt - 1;
    const previousDelayMs = continues ? chain?.delayMs : undefined;
    const firstFailureAt = continues && chain !== undefined ? chain.firstFailureAt : monotonic;
    const decision = retryPolicy.decide(
      {
        attempt,
        classification: classifyThrough(error, now, userClassify),
        idempotent,
        verifiable: false,
        elapsedMs: monotonic - firstFailureAt,
        deadlineRemainingMs: Number.POSITIVE_INFINITY,
        previousDelayMs,
      },
      random,
    );
    chain = { attempt, delayMs: decision.retry ? decision.delayMs : undefined, firstFailureAt };
    if (keyed !== undefined) pending.set(keyed, { attempt, decision });
    return decision;
  };
  return {
    retry: (failureCount, error) => decide(failureCount, error).retry,
    retryDelay: (failureCount, error) => {
      const decision = decide(failureCount, error);
      // TanStack hands this to `setTimeout`, which fires at once beyond 2³¹ − 1 ms (24.8 days):
      // a 30-day `Retry-After` allowed by a long `maxRetryAfterMs` retried immediately.
      return decision.retry ? Math.min(decision.delayMs, MAX_NATIVE_DELAY_MS) : 0;
    },
  };
}
