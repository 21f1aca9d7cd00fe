import { handleAll, retry, TimeoutStrategy, timeout, wrap } from 'cockatiel';
import pRetry from 'p-retry';
import { downstream } from '../src/index.js';

/** One benchmark case: `setup` builds the wrapper once and returns the function measured. */
export interface BenchCase {
  name: string;
  setup: () => Promise<() => Promise<number>> | (() => Promise<number>);
}

/** The operation every case wraps: an already-resolved async call. */
const operation = async () => 42;

export const cases: BenchCase[] = [
  { name: 'bare', setup: () => operation },
  {
    name: 'kindly:retry+timeout',
    setup: () => {
      const api = downstream('bench', { retry: { maxAttempts: 3 }, attemptTimeout: 10_000 });
      return () => api.call(operation);
    },
  },
  {
    name: 'cockatiel:retry+timeout',
    setup: () => {
      const policy = wrap(retry(handleAll, { maxAttempts: 2 }), timeout(10_000, TimeoutStrategy.Cooperative));
      return () => policy.execute(operation);
    },
  },
  {
    name: 'p-retry',
    setup: () => () => pRetry(operation, { retries: 2 }),
  },
];
