// Adaptive pacing with its defaults while new callers keep arriving faster than a real limiter
// serves them — the everyday overload, not a herd at one instant. 400 callers whose first tries
// arrive at random over 2 s (twice the limiter's rate), each through `downstream().fetch` and
// retried until served, against `limiter`'s TokenBucket (100 a second, a burst of 10, 429 when
// empty, no wait hint) and against `express-queue` (10 at once, 100 ms each, one waiting, 503
// beyond), each in front of a loopback server. The lower bound is the simulator's for the same
// arrivals: first tries leave when they arrive, and no retry meets a full callee.
// Retries used to leave at the callee's whole rate on top of the arrivals: 728–770 requests
// against the bucket's bound of 591, and 1,083–1,118 into the pool against its 604.
import { afterEach, describe, expect, it } from 'vitest';
import { fetchThrough } from '../../src/http/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { firstTryTimes, herdSpreadLowerBound } from '../../src/sim/herd-run.js';
import type { ServerSpec } from '../../src/sim/models/index.js';
import { type LimitedServer, startConcurrencyServer, startTokenBucketServer } from '../support/limiter-servers.js';
import { arrivalsThrough, PACED_UNTIL_SERVED } from '../support/real-herd.js';

const CALLERS = 400;
const ARRIVAL_MS = 2_000;

/** The arrivals against `server`, after one herd to warm the client; requests counted by the server. */
async function arrivals(
  server: LimitedServer,
  model: Omit<ServerSpec, 'capacity' | 'slotMs'>,
  name: string,
): Promise<{ ratio: number; time: number }> {
  const setup = { clients: CALLERS, capacity: 10, slotMs: 100, seed: 1, arrivalMs: ARRIVAL_MS, server: model };
  const bound = herdSpreadLowerBound(setup, 1);
  const api = downstream(`steady-arrivals-${name}`, { ...PACED_UNTIL_SERVED, budget: false, attemptTimeoutMs: 10_000 });
  // A service that meets an overload has been running: one herd first (V8 compiles the HTTP
  // client and kindly's code), then quiet until the pacer has stopped throttling.
  await Promise.all(Array.from({ length: 100 }, async () => (await fetchThrough(api, server.url)).arrayBuffer()));
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  server.resetCounts();
  const { allSucceededMs: last, failed } = await arrivalsThrough(api, server.url, firstTryTimes(setup, setup.seed));
  const real = server.requests();
  console.log(
    `[figure] ${name}, ${CALLERS} callers over ${ARRIVAL_MS} ms, adaptive defaults: ` +
      `real ${real.total} requests, ${(last / 1000).toFixed(2)} s; bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(2)} s`,
  );
  expect(failed).toBe(0);
  expect(real.served).toBe(CALLERS);
  return { ratio: real.total / bound.totalRequests, time: last / bound.allSucceededMs };
}

describe('adaptive pacing against real limiters while callers keep arriving, defaults', () => {
  let server: LimitedServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('limiter TokenBucket, 400 callers over 2 s: ≤ 1.1× the bound’s requests and ≤ 1.2× its time (regression: 1.23–1.30× the requests)', {
    timeout: 90_000,
  }, async () => {
    server = await startTokenBucketServer({ ratePerSecond: 100, burst: 10 });
    const run = await arrivals(server, { model: 'token-bucket' }, 'limiter TokenBucket 100/s, burst 10');
    expect(run.ratio).toBeLessThanOrEqual(1.1);
    expect(run.time).toBeLessThanOrEqual(1.2);
  });

  it('express-queue, 400 callers over 2 s: ≤ 1.1× the bound’s requests and ≤ 1.2× its time (regression: 1.76–1.82×, then 1.17–1.20× the requests)', {
    timeout: 90_000,
  }, async () => {
    server = await startConcurrencyServer({ concurrency: 10, queue: 1, serviceMs: 100 });
    const run = await arrivals(server, { model: 'concurrency', queue: 1 }, 'express-queue 10 × 100 ms, queue 1');
    expect(run.ratio).toBeLessThanOrEqual(1.1);
    expect(run.time).toBeLessThanOrEqual(1.2);
  });
});
