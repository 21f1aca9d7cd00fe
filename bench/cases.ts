import { bulkhead, ConsecutiveBreaker, circuitBreaker, handleAll, retry, TimeoutStrategy, timeout, wrap } from 'cockatiel';
import pRetry from 'p-retry';
// The built package, as users get it (run `npm run build` first; `npm run bench` does).
import { downstream } from '../dist/index.js';

/** One benchmark case: `setup` builds the wrapper once and returns the function measured. */
export interface BenchCase {
  name: string;
  /** A synchronous operation (policy bookkeeping), measured without an await. */
  sync?: boolean;
  setup: () => (() => Promise<number> | number) | Promise<() => Promise<number> | number>;
}

/** The operation every case wraps: an already-resolved async call. */
const operation = async () => 42;

export const cases: BenchCase[] = [
  { name: 'bare', setup: () => operation },
  {
    // The platform's own price for one attempt signal, the floor of `kindly:signal`: on
    // Node 20 creating an AbortSignal costs microseconds (Object.setPrototypeOf on an
    // EventTarget, then new properties: V8 builds a fresh hidden class each time).
    name: 'platform:AbortController().signal',
    setup: () => () => (new AbortController().signal.aborted ? 0 : operation()),
  },
  {
    name: 'kindly:retry+timeout',
    setup: () => {
      const api = downstream('bench', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 });
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
    // The operation reads `context.signal`, as every fetch does: the attempt's AbortController
    // is created, linked and torn down.
    name: 'kindly:signal',
    setup: () => {
      const api = downstream('bench-signal', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 });
      return () => api.call((context) => (context.signal.aborted ? 0 : operation()));
    },
  },
  {
    name: 'cockatiel:signal',
    setup: () => {
      const policy = wrap(retry(handleAll, { maxAttempts: 2 }), timeout(10_000, TimeoutStrategy.Cooperative));
      return () => policy.execute(({ signal }) => (signal.aborted ? 0 : operation()));
    },
  },
  {
    name: 'p-retry',
    setup: () => () => pRetry(operation, { retries: 2 }),
  },
];

cases.push(
  {
    name: 'kindly:full',
    setup: () => {
      const api = downstream('bench-full', {
        retry: { maxAttempts: 3 },
        attemptTimeoutMs: 10_000,
        budget: {},
        breaker: {},
        bulkhead: { maxConcurrent: 1_000 },
      });
      return () => api.call(operation);
    },
  },
  {
    name: 'cockatiel:full',
    setup: () => {
      const policy = wrap(
        retry(handleAll, { maxAttempts: 2 }),
        circuitBreaker(handleAll, { halfOpenAfter: 5_000, breaker: new ConsecutiveBreaker(5) }),
        bulkhead(1_000),
        timeout(10_000, TimeoutStrategy.Cooperative),
      );
      return () => policy.execute(operation);
    },
  },
);
