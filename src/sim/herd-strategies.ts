import { type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import type { HerdClients, HerdStrategy } from './herd-run.js';
import { delayedClients, REJECTED } from './herd-run.js';
import { RetryState } from './retry-state.js';

/**
 * Clients retry until they succeed; `maxAttempts: Infinity` must come with a time limit, and
 * an hour is far beyond any herd run here, so it never ends a run early.
 */
const UNTIL_SUCCESS = { maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 3_600_000 } as const;

/**
 * The built-in herd strategies as kindly `RetryOptions`. The exponential ones share the ceiling
 * of the classic herd experiment, delay after the n-th failure ≤ min(5 s, 100 ms × 2ⁿ) — in kindly's terms
 * (ceiling(n) = base × factor^(n − 1)) base 200 ms, factor 2, cap 5 s.
 */
export const HERD_RETRY_OPTIONS = {
  /** 1 s after every rejection, no jitter. */
  fixed: { ...UNTIL_SUCCESS, backoff: { shape: 'constant', baseMs: 1_000, jitter: 'none', capMs: 1_000 } },
  /** min(5 s, 100 ms × 2ⁿ) after the n-th rejection, no jitter. */
  exponential: { ...UNTIL_SUCCESS, backoff: { shape: 'exponential', baseMs: 200, factor: 2, jitter: 'none', capMs: 5_000 } },
  /** Uniform in [0, min(5 s, 100 ms × 2ⁿ)]. */
  full: { ...UNTIL_SUCCESS, backoff: { shape: 'exponential', baseMs: 200, factor: 2, jitter: 'full', capMs: 5_000 } },
  /** c/2 + uniform in [0, c/2], c = min(5 s, 100 ms × 2ⁿ). */
  equal: { ...UNTIL_SUCCESS, backoff: { shape: 'exponential', baseMs: 200, factor: 2, jitter: 'equal', capMs: 5_000 } },
  /**
   * Uniform in [100 ms, min(5 s, 3 × previous delay)], previous₀ = 100 ms: base 100 ms so that
   * the first retry's range, [100, 300] ms, is centred on the exponential schedule's first
   * ceiling (200 ms).
   */
  decorrelated: { ...UNTIL_SUCCESS, backoff: { shape: 'exponential', baseMs: 100, jitter: 'decorrelated', capMs: 5_000 } },
  /**
   * Full jitter (same ceiling) with a 1 s floor: delay uniform in [1 s, max(c, 2 s)]. The
   * window never narrows below the floor's own width, so while c < 1 s (the first three
   * retries) clients still spread over [1 s, 2 s] instead of all waiting exactly 1 s.
   */
  floor: {
    ...UNTIL_SUCCESS,
    backoff: { shape: 'exponential', baseMs: 200, factor: 2, jitter: 'full', capMs: 5_000, floorMs: 1_000 },
  },
} as const satisfies Record<string, RetryOptions>;

/** A herd strategy that is exactly kindly's retry policy with `options`. */
export function retryStrategy(name: string, description: string, options: RetryOptions): HerdStrategy {
  const policy = new RetryPolicy(options);
  return {
    name,
    description,
    // The herd's rejections carry no wait hint, so only the backoff's jitter draws randomness.
    random: policy.backoff.jitter !== 'none',
    create(sim, setup, wire): HerdClients {
      // Nothing stands between these clients and the server but the retry decision (no
      // stage: no budget, breaker or pacer), so `RetryState` runs it for many clients in
      // typed arrays — a million-client herd holds no object per client.
      const state = new RetryState(policy, sim.random, setup.clients);
      return delayedClients(sim, wire, {
        send: (client, now) => state.attempt(client, now),
        served: () => {},
        rejected: (client, now) => state.next(client, REJECTED, now),
      });
    },
  };
}

const d = (name: keyof typeof HERD_RETRY_OPTIONS, text: string) => retryStrategy(name, text, HERD_RETRY_OPTIONS[name]);

/** The built-in strategies that are plain retry policies, in report order. */
export const RETRY_HERD_STRATEGIES: readonly HerdStrategy[] = [
  d('fixed', 'constant 1 s, no jitter'),
  d('exponential', 'min(5 s, 100 ms × 2ⁿ), no jitter'),
  d('full', 'uniform in [0, min(5 s, 100 ms × 2ⁿ)]'),
  d('equal', 'c/2 + uniform in [0, c/2], c = min(5 s, 100 ms × 2ⁿ)'),
  d('decorrelated', 'uniform in [100 ms, min(5 s, 3 × previous delay)]'),
  d('floor', 'uniform in [1 s, max(2 s, c)], c = min(5 s, 100 ms × 2ⁿ): full jitter with a 1 s floor'),
];
