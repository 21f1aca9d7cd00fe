import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../src/policies/circuit-breaker.js';
import { Pacer } from '../../src/policies/pacer.js';
import { RetryBudget } from '../../src/policies/retry-budget.js';
import { SeededRandom } from '../../src/testing/index.js';

describe('window buckets are bounded when the policy is built', () => {
  it('a breaker, a budget or a pacer split into more than 1,000 buckets is refused, naming the option (regression: 1e7 cost ~160 MB per lane)', () => {
    expect(() => new RetryBudget({ buckets: 10_000_000 })).toThrow('`buckets` to be an integer from 1 to 1000, got 10000000');
    expect(() => new CircuitBreaker({ buckets: 1_001 }, new SeededRandom(1))).toThrow(
      '`buckets` to be an integer from 1 to 1000, got 1001',
    );
    expect(() => new Pacer({ buckets: 5_000 })).toThrow('`buckets` to be an integer from 1 to 1000, got 5000');
    expect(() => new RetryBudget({ buckets: 1_000 })).not.toThrow();
  });
});
