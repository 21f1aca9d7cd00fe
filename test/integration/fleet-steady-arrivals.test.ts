// A fleet of four real processes sharing their pacing through a real redis-server, against
// `limiter`'s TokenBucket (100 a second, a burst of 10, 429 when empty) in front of a loopback
// server — as a long-lived service meets its traffic: three herds of 50 callers split over the
// processes, 1.5 s apart, then 400 callers arriving at random over 2 s (twice the limiter's
// rate), each retried until served. The lower bound is the simulator's for the same arrivals.
// The fleet used to count the pauses between the herds as the callee's rate and left the
// backlog at ~60/s once the arrivals stopped: 4.89–5.41 s against a bound of 3.90 s. Requests
// are held to 1.15× the bound, not the 1.1× the fleet meets on a quiet machine (619–644 over
// seven herds, 591 the bound): with two other processes busy, 613–651 over 27 herds of the
// same run outside the test, and 684 once in it — 30–60 retries let through in the first half
// second, before the arrivals' first rejections cut what the herds before taught the fleet.
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { herdSpreadLowerBound } from '../../src/sim/herd-run.js';
import { type LimitedServer, startTokenBucketServer } from '../support/limiter-servers.js';
import { RedisServer } from '../support/redis-server.js';

const childPath = fileURLToPath(new URL('../fixtures/fleet-arrivals-child.ts', import.meta.url));
const PROCESSES = 4;
const CALLERS = 400;
const ARRIVAL_MS = 2_000;

let redis: RedisServer;
let server: LimitedServer;

beforeAll(async () => {
  redis = await RedisServer.start();
  server = await startTokenBucketServer({ ratePerSecond: 100, burst: 10 });
});

afterAll(async () => {
  await server?.close();
  await redis?.dispose();
});

/** The next message from `child`; rejects if it exits first. */
function next<T>(child: ChildProcess): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const exited = (code: number | null) => reject(new Error(`fleet child exited with ${code}`));
    child.once('exit', exited);
    child.once('message', (m) => {
      child.off('exit', exited);
      resolve(m as T);
    });
  });
}

describe('a fleet sharing its pacing through a real redis-server, callers arriving faster than a real limiter serves', () => {
  it('four processes, 400 callers over 2 s after three herds: ≤ 1.15× the bound’s requests and ≤ 1.2× its time (regression: 1.25–1.39× the time)', async () => {
    const children = Array.from({ length: PROCESSES }, () =>
      fork(childPath, {
        execArgv: ['--import', 'tsx'],
        env: { ...process.env, REDIS_PORT: String(redis.port), URL: server.url, PREFIX: `arrivals-${process.pid}` },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    try {
      await Promise.all(children.map((c) => next(c)));
      for (let herd = 0; herd < 3; herd++) {
        await Promise.all(
          children.map((c) => {
            const warmed = next(c);
            c.send({ warm: Math.ceil(50 / PROCESSES) });
            return warmed;
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, 1_500));
      }
      server.resetCounts();
      const start = performance.timeOrigin + performance.now() + 200;
      const reports = await Promise.all(
        children.map((c, index) => {
          const done = next<{ last: number; failed: number; storeFailures: number }>(c);
          c.send({ start, index, processes: PROCESSES, callers: CALLERS, arrivalMs: ARRIVAL_MS });
          return done;
        }),
      );
      const setup = {
        clients: CALLERS,
        capacity: 10,
        slotMs: 100,
        seed: 1,
        arrivalMs: ARRIVAL_MS,
        server: { model: 'token-bucket' as const },
      };
      const bound = herdSpreadLowerBound(setup, 1);
      const real = server.requests();
      const last = Math.max(...reports.map((r) => r.last));
      console.log(
        `[figure] fleet of ${PROCESSES} on redis, TokenBucket, ${CALLERS} callers over ${ARRIVAL_MS} ms after three herds: ` +
          `real ${real.total} requests, ${(last / 1000).toFixed(2)} s; bound ${bound.totalRequests}, ${(bound.allSucceededMs / 1000).toFixed(2)} s; ` +
          `store failures ${reports.map((r) => r.storeFailures).join('/')}`,
      );
      expect(reports.reduce((n, r) => n + r.failed, 0)).toBe(0);
      expect(real.served).toBe(CALLERS);
      expect(real.total / bound.totalRequests).toBeLessThanOrEqual(1.15);
      expect(last / bound.allSucceededMs).toBeLessThanOrEqual(1.2);
    } finally {
      for (const c of children) if (c.exitCode === null) c.kill();
    }
  }, 60_000);
});
