import { MutationObserver, QueryClient } from '@tanstack/query-core';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { attemptFromFailureCount, mutationRetry, queryRetry } from '../../src/adapters/index.js';
import { httpStatusError } from '../../src/http/index.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { type Loopback, listen } from '../http/support/loopback.js';

/** What a queryFn throws for a failed response: kindly's HttpStatusError (status + headers). */
const failure = (status: number, headers: Record<string, string> = {}) =>
  httpStatusError(new Response(null, { status, headers }));

const quick = { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 100, jitter: 'none' } } as const;

describe('TanStack adapter — failureCount conversion', () => {
  it("TanStack's failureCount counts failures before this one (0-based); kindly's attempt is 1-based", () => {
    expect(attemptFromFailureCount(0)).toBe(1);
    expect(attemptFromFailureCount(2)).toBe(3);
    expect(() => attemptFromFailureCount(-1)).toThrow(RangeError);
    expect(() => attemptFromFailureCount(1.5)).toThrow(RangeError);
  });

  it('with maxAttempts 3: retries after failureCount 0 and 1 (attempts 1, 2), stops after failureCount 2 (attempt 3)', () => {
    const { retry } = queryRetry({ retry: quick, random: new SeededRandom(1) });
    const error = failure(503);
    expect([0, 1, 2].map((n) => retry(n, error))).toEqual([true, true, false]);
  });

  it('retryDelay is kindly’s backoff for the attempt that just failed: exponential 100 ms base ⇒ 100, 200, 400', () => {
    const { retryDelay } = queryRetry({
      retry: { maxAttempts: 5, backoff: { shape: 'exponential', baseMs: 100, factor: 2, jitter: 'none' } },
    });
    expect([0, 1, 2].map((n) => retryDelay(n, failure(503)))).toEqual([100, 200, 400]);
  });

  it('honours Retry-After (a minimum, with up to +20% jitter) and never retries 401/403/404', () => {
    const clock = new VirtualClock({ wallClockStartMs: Date.UTC(2026, 0, 1) });
    const { retry, retryDelay } = queryRetry({ retry: quick, clock, random: new SeededRandom(7) });
    const throttled = failure(429, { 'retry-after': '2' });
    const delay = retryDelay(0, throttled);
    expect(retry(0, throttled)).toBe(true);
    expect(delay).toBeGreaterThanOrEqual(2_000);
    expect(delay).toBeLessThanOrEqual(2_400);
    for (const status of [401, 403, 404]) {
      expect(retry(0, failure(status))).toBe(false);
      expect(retryDelay(0, failure(status))).toBe(0);
    }
  });

  it('a delay beyond what setTimeout holds (2³¹ − 1 ms) is capped there, not handed on to fire at once', () => {
    const clock = new VirtualClock({ wallClockStartMs: Date.UTC(2026, 0, 1) });
    const days = (n: number) => n * 86_400_000;
    const { retry, retryDelay } = queryRetry({
      retry: { ...quick, maxRetryAfterMs: days(40) },
      clock,
      random: new SeededRandom(7),
    });
    const monthLong = failure(503, { 'retry-after': String(days(30) / 1000) });
    expect(retry(0, monthLong)).toBe(true);
    expect(retryDelay(0, monthLong)).toBe(2_147_483_647);
  });

  it('decorrelated jitter grows from the previous delay along a retry chain (it stayed within [base, 3·base] before)', () => {
    const backoff = { shape: 'exponential', baseMs: 100, capMs: 1_000_000, jitter: 'decorrelated' } as const;
    const seen: number[] = [];
    for (const [name, seed] of Object.entries({ 'chain-a': 1000, 'chain-b': 1001, 'chain-c': 1002 })) {
      const { retryDelay } = queryRetry({ retry: { maxAttempts: 20, backoff }, random: new SeededRandom(seed) });
      const delays = Array.from({ length: 12 }, (_, n) => retryDelay(n, failure(503)));
      seen.push(Math.max(...delays));
      // A new chain (attempt 1 again) starts from the base, not from the last chain's delay.
      expect(retryDelay(0, failure(503)), name).toBeLessThanOrEqual(300);
    }
    // Twelve steps of decorrelated jitter from 100 ms: far past 3 · base on every seed.
    for (const max of seen) expect(max).toBeGreaterThan(300);
  });

  it('a classify hook that throws is skipped: kindly classifies the error', () => {
    const { retry } = queryRetry({
      retry: quick,
      classify: () => {
        throw new Error('bug in the hook');
      },
    });
    expect(retry(0, failure(503))).toBe(true);
    expect(retry(0, failure(404))).toBe(false);
  });

  it('retry and retryDelay asked about the same failure see one decision (one jitter draw)', () => {
    const a = queryRetry({ retry: { maxAttempts: 3 }, random: new SeededRandom(42) });
    const b = queryRetry({ retry: { maxAttempts: 3 }, random: new SeededRandom(42) });
    const error = failure(503);
    const delay = a.retryDelay(0, error);
    a.retry(0, error);
    // b draws once for the same failure: its next decision matches a's next one.
    expect(b.retryDelay(0, failure(503))).toBe(delay);
    expect(a.retryDelay(1, error)).toBe(b.retryDelay(1, failure(503)));
  });

  it('mutations: an unknown outcome (500, timeout) is not retried unless idempotent; a failed one (503) is', () => {
    const writes = mutationRetry({ retry: quick });
    expect(writes.retry(0, failure(500))).toBe(false);
    expect(writes.retry(0, failure(503))).toBe(true);
    expect(writes.retry(0, Object.assign(new Error('connect refused'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(writes.retry(0, Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(false);
    expect(mutationRetry({ retry: quick, idempotent: true }).retry(0, failure(500))).toBe(true);
  });

  it('rejects options it cannot honour, listing every problem', () => {
    expect(() => queryRetry({ retry: { maxElapsedMs: 1_000 } } as never)).toThrow(/maxElapsedMs/);
    expect(() => mutationRetry({ idempotent: 'yes', retries: 3 } as never)).toThrow(/retries[\s\S]*idempotent/);
    expect(() => queryRetry({ retry: { maxAttempts: 0 } })).toThrow(/maxAttempts/);
  });

  it('property: delays are finite and ≥ 0; retry never allows more than maxAttempts attempts', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 30 }),
        fc.constantFrom(408, 429, 500, 502, 503, 504, 400, 404),
        fc.integer(),
        (maxAttempts, failureCount, status, seed) => {
          const { retry, retryDelay } = queryRetry({ retry: { maxAttempts }, random: new SeededRandom(seed) });
          const error = failure(status);
          const delay = retryDelay(failureCount, error);
          const again = retry(failureCount, error);
          expect(Number.isFinite(delay) && delay >= 0).toBe(true);
          if (again) expect(attemptFromFailureCount(failureCount)).toBeLessThan(maxAttempts);
        },
      ),
    );
  });
});

describe('TanStack adapter — a real QueryClient against a loopback server', () => {
  const servers: Loopback[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  async function scripted(statuses: Array<[number, Record<string, string>?]>) {
    const at: number[] = [];
    const server = await listen((_req, res) => {
      const [status, headers] = statuses[Math.min(at.length, statuses.length - 1)] as [number, Record<string, string>?];
      at.push(performance.now());
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify({ n: at.length }));
    });
    servers.push(server);
    return { url: server.url, at };
  }

  const queryFn = (url: string) => async () => {
    const response = await fetch(url);
    if (!response.ok) throw httpStatusError(response);
    return (await response.json()) as { n: number };
  };

  it('retries 503 with kindly backoff and resolves', async () => {
    const server = await scripted([[503], [503], [200]]);
    const client = new QueryClient({ defaultOptions: { queries: { ...queryRetry({ retry: quick }) } } });
    const data = await client.fetchQuery({ queryKey: ['a'], queryFn: queryFn(server.url) });
    expect(data).toEqual({ n: 3 });
    expect(server.at).toHaveLength(3);
    expect((server.at[1] as number) - (server.at[0] as number)).toBeGreaterThanOrEqual(100);
    expect((server.at[2] as number) - (server.at[1] as number)).toBeGreaterThanOrEqual(100);
    client.clear();
  });

  it('honours Retry-After', async () => {
    const server = await scripted([[503, { 'retry-after': '1' }], [200]]);
    const client = new QueryClient({ defaultOptions: { queries: { ...queryRetry({ retry: quick }) } } });
    await client.fetchQuery({ queryKey: ['b'], queryFn: queryFn(server.url) });
    expect((server.at[1] as number) - (server.at[0] as number)).toBeGreaterThanOrEqual(1_000);
    client.clear();
  });

  it.each([401, 403, 404])('never retries %i', async (status) => {
    const server = await scripted([[status]]);
    const client = new QueryClient({ defaultOptions: { queries: { ...queryRetry({ retry: quick }) } } });
    await expect(client.fetchQuery({ queryKey: ['c', status], queryFn: queryFn(server.url) })).rejects.toMatchObject({ status });
    expect(server.at).toHaveLength(1);
    client.clear();
  });

  it('a mutation is not repeated after a 500 (unknown outcome), but is after a 503', async () => {
    const broken = await scripted([[500]]);
    const busy = await scripted([[503], [200]]);
    const client = new QueryClient({ defaultOptions: { mutations: { ...mutationRetry({ retry: quick }) } } });
    const run = (url: string) => new MutationObserver(client, { mutationFn: queryFn(url) }).mutate();
    await expect(run(broken.url)).rejects.toMatchObject({ status: 500 });
    expect(broken.at).toHaveLength(1);
    await expect(run(busy.url)).resolves.toEqual({ n: 2 });
    expect(busy.at).toHaveLength(2);
    client.clear();
  });
});
