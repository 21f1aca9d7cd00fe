import { bulkhead, ConsecutiveBreaker, circuitBreaker, handleAll, retry, TimeoutStrategy, timeout, wrap } from 'cockatiel';
import pRetry from 'p-retry';
// The built package, as users get it (run `npm run build` first; `npm run bench` does).
import { createFetch } from '../dist/http.js';
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
    // The platform's own price for one attempt signal, the floor of `kindly:signal` (printed as
    // `kindly:signal / floor:signal`): on Node 20 creating an AbortSignal costs microseconds
    // (Object.setPrototypeOf on an EventTarget, then new properties: V8 builds a fresh hidden
    // class each time), above the ≤ 1 µs target on its own.
    name: 'floor:signal',
    setup: () => () => (new AbortController().signal.aborted ? 0 : operation()),
  },
  {
    // The floor of `kindly:full` and of any wrapper that times its operation and returns a
    // promise of its own (printed as `kindly:full / floor:full`): its own promise, a `then`
    // with two closures on the operation's promise, and one clock read — no timer, no policy,
    // no bookkeeping. What kindly adds over it is itemised in docs/benchmarks.md.
    name: 'floor:full',
    setup: () => {
      const perf = globalThis.performance;
      return () => {
        const startedAt = perf.now();
        return new Promise<number>((resolve, reject) => {
          operation().then(
            (value) => resolve(startedAt < 0 ? 0 : value),
            (error: unknown) => reject(error),
          );
        });
      };
    },
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
    // `.call()` whose operation makes an AbortController of its own instead of reading
    // `context.signal`: kindly's plain call plus the platform's signal, without kindly's
    // handling of the attempt's signal. Beside `kindly:signal` it shows what that handling adds.
    name: 'kindly:call+own-signal',
    setup: () => {
      const api = downstream('bench-own-signal', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 });
      return () => api.call(() => (new AbortController().signal.aborted ? 0 : operation()));
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

/**
 * kindly's HTTP layer alone, without the network: a `fetch` that builds the platform's
 * `Request` from the URL and init (so the init kindly passes is read as the real fetch reads
 * it) and answers at once. `floor:fetch` calls it as the HTTP bench's floor does; `kindly:fetch`
 * goes through `createFetch` (plan, call options, `.call()`, the attempt's signal and init).
 * Their difference is what kindly itself spends per request, which the loopback bench cannot
 * isolate from in-situ effects (docs/benchmarks.md).
 */
const INSTANT_URL = 'http://127.0.0.1:9/item';
const instantFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  new Request(input, init);
  return new Response(null, { status: 200 });
};
const answered = (response: Response) => (response.status === 200 ? 42 : 0);

cases.push(
  {
    name: 'floor:fetch',
    setup: () => async () => answered(await instantFetch(INSTANT_URL, { signal: new AbortController().signal, headers: {} })),
  },
  {
    name: 'kindly:fetch',
    setup: () => {
      const send = createFetch(downstream('bench-fetch', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 }), {
        fetch: instantFetch,
      });
      return async () => answered(await send(INSTANT_URL));
    },
  },
);
