import { type ChildProcess, fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFleetOutage } from '../support/fleet-outage.js';
import { RedisServer } from '../support/redis-server.js';

/**
 * Several real processes, one real redis-server, one real HTTP callee on loopback. Each
 * child's clocks are skewed differently (hours apart), so anything timed by a host's clock
 * instead of Redis's `TIME` would break; the last child talks to Redis through node-redis,
 * the others through ioredis. Figures are printed, not asserted against the wall clock:
 * every wait is for a condition, bounded (`until`), so a loaded machine only makes it slower.
 */
const childPath = fileURLToPath(new URL('../fixtures/fleet-child.ts', import.meta.url));
const SKEWS = [0, 3_600_000, -7_200_000];

interface Report {
  counts: { ok: number; failed: number; reasons: Record<string, number> };
  events: Array<{ type: string; at: number; to?: string; available?: boolean; reason?: string }>;
  store: { commands: number; failures: number; skipped: number };
  available?: boolean;
}

/** Polls `condition` every 20 ms; fails after `maxMs` (generous: the machine may be loaded). */
async function until(what: string, condition: () => boolean | Promise<boolean>, maxMs = 30_000): Promise<void> {
  const started = performance.now();
  while (!(await condition())) {
    if (performance.now() - started > maxMs) throw new Error(`gave up waiting for ${what} after ${maxMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A child's counts and events so far. */
function report(child: ChildProcess): Promise<Report> {
  return new Promise((resolve) => {
    child.once('message', (m) => resolve(m as Report));
    child.send('report');
  });
}

let redis: RedisServer;
let server: Server;
let url: string;
/** Children whose requests get 503 (by `id`); the rest get 200. */
const failing = new Set<string>();
/** Arrival time of each request, by child id. */
const arrivals = new Map<string, number[]>();

beforeAll(async () => {
  redis = await RedisServer.start();
  server = createServer((req, res) => {
    const id = new URL(req.url ?? '/', 'http://x').searchParams.get('id') ?? '?';
    const list = arrivals.get(id) ?? [];
    list.push(performance.timeOrigin + performance.now());
    arrivals.set(id, list);
    res.statusCode = failing.has(id) ? 503 : 200;
    res.end('x');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  await redis.dispose();
});

function startFleet(prefix: string): Promise<ChildProcess[]> {
  return Promise.all(
    SKEWS.map((skew, id) => {
      const child = fork(childPath, {
        execArgv: ['--import', 'tsx'],
        env: {
          ...process.env,
          REDIS_PORT: String(redis.port),
          URL: url,
          ID: String(id),
          SKEW_MS: String(skew),
          PREFIX: prefix,
          CLIENT: id === SKEWS.length - 1 ? 'node-redis' : 'ioredis',
        },
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      return new Promise<ChildProcess>((resolve, reject) => {
        child.once('message', () => resolve(child));
        child.once('exit', (code) => reject(new Error(`child ${id} exited with ${code} before it was ready`)));
      });
    }),
  );
}

async function stop(children: ChildProcess[]): Promise<Report[]> {
  return Promise.all(
    children.map(
      (child) =>
        new Promise<Report>((resolve, reject) => {
          let report: Report | undefined;
          child.once('message', (m) => (report = m as Report));
          child.once('exit', (code) => (code === 0 && report ? resolve(report) : reject(new Error(`child exited with ${code}`))));
          child.send('stop');
        }),
    ),
  );
}

const calls = (id: number) => arrivals.get(String(id))?.length ?? 0;

describe('fleet of processes on a real redis-server', () => {
  it('one process seeing the callee dead opens the breaker for all, across skewed clocks and both clients', async () => {
    arrivals.clear();
    const children = await startFleet('breaker');
    await until('every child calling', () => [0, 1, 2].every((id) => calls(id) >= 20));
    const tripAt = performance.timeOrigin + performance.now();
    failing.add('0');
    // Until children 1 and 2 have been refused by the breaker child 0 opened.
    await until('the others refusing with circuit-open', async () => {
      const reports = await Promise.all(children.map(report));
      return [1, 2].every((id) => (reports[id]!.counts.reasons['circuit-open'] ?? 0) > 0);
    });
    const reports = await stop(children);
    failing.clear();
    const opened = reports[0]!.events.find((e) => e.type === 'breaker-state' && e.to === 'open');
    expect(opened).toBeDefined();
    for (const id of [1, 2]) {
      // Opened on the fleet's word: their own callee never failed.
      const own = reports[id]!.events.find((e) => e.type === 'breaker-state' && e.to === 'open');
      expect(own).toBeDefined();
      expect(reports[id]!.counts.failed).toBe(reports[id]!.counts.reasons['circuit-open']);
      // Stopped, not slowed: after their breaker opened, only requests already on their way
      // (one per calling loop) reached the callee.
      const late = (arrivals.get(String(id)) ?? []).filter((t) => t > own!.at);
      expect(late.length).toBeLessThanOrEqual(2);
    }
    const delays = [1, 2].map((id) => {
      const after = (arrivals.get(String(id)) ?? []).filter((t) => t >= tripAt);
      return Math.max(0, (after.at(-1) ?? opened!.at) - opened!.at);
    });
    console.log(`breaker propagation: others' last request ${delays.map((d) => d.toFixed(1)).join(', ')} ms after the opening`);
  });

  it('Redis killed mid-run fails no call; restarted, the fleet finds it again and writes its state back', async () => {
    arrivals.clear();
    const children = await startFleet('restart');
    await until('every child calling through the store', async () => {
      const reports = await Promise.all(children.map(report));
      return reports.every((r) => r.counts.ok >= 20 && r.store.commands > 0);
    });
    const before = [0, 1, 2].map(calls);
    const downAt = performance.now();
    await redis.stop();
    // Until every child has noticed, and has kept calling while Redis is away.
    await until('every child falling back and calling on', async () => {
      const reports = await Promise.all(children.map(report));
      return reports.every((r, id) => r.available === false && calls(id) >= before[id]! + 20);
    });
    await redis.start();
    const downMs = performance.now() - downAt;
    await until('every child finding Redis again', async () => {
      const reports = await Promise.all(children.map(report));
      return reports.every((r) => r.available === true);
    });
    const { connectRedis } = await import('../support/redis-server.js');
    const client = await connectRedis(redis.port);
    // Resynced: the restarted (empty) Redis holds the fleet's keys again, with TTLs.
    await until('the fleet writing its state back', async () => {
      const keys = await client.keys('restart:*');
      return keys.some((k) => k.includes(':budget:')) && keys.some((k) => k.includes(':breaker:'));
    });
    const keys = await client.keys('restart:*');
    for (const k of keys) expect(await client.pttl(k)).toBeGreaterThan(0);
    client.disconnect();
    // On a loaded machine a process may find Redis slow once more (3 answers over timeoutMs)
    // and go down again; it comes back with the next PING. Stop once every one is up.
    await until('every child available before stopping', async () => {
      const reports = await Promise.all(children.map(report));
      return reports.every((r) => r.available === true);
    });
    const reports = await stop(children);
    const total = reports.reduce((n, r) => n + r.counts.ok + r.counts.failed, 0);
    const failed = reports.reduce((n, r) => n + r.counts.failed, 0);
    const downs = reports.map((r) => r.events.filter((e) => e.type === 'store-availability').map((e) => e.available));
    const why = reports.map((r) => r.events.filter((e) => e.reason !== undefined).map((e) => e.reason));
    console.log(
      `redis killed for ${(downMs / 1000).toFixed(1)} s: ${total} calls, ${failed} failed; availability events per process ${JSON.stringify(downs)} (${JSON.stringify(why)}); store ops ${JSON.stringify(reports.map((r) => r.store))}`,
    );
    expect(failed).toBe(0);
    // Down, then up again. On a loaded machine a process may also find Redis slow (3 answers
    // over timeoutMs) once more after it came back: that is fail-open working, so the events
    // must alternate, start with down and end with up, however many there are.
    for (const d of downs) {
      expect(d[0]).toBe(false);
      expect(d.at(-1)).toBe(true);
      expect(d.every((available, i) => available === (i % 2 === 1))).toBe(true);
    }
  });

  it('ten processes in an outage: one fleet budget counts the reserve once; a budget each counts it ten times', async () => {
    // Defaults: ratio 0.2, reserve 10 retries/s over a 10 s window (100 tokens), 2 retries on
    // credit per process. 10 processes × 20 calls/s × 6 s = 1,200 calls, inside one window.
    // The store's timeout is raised from 5 ms: this checks the budget's arithmetic across
    // processes, and a loaded machine (other test files run alongside) answers late.
    const setup = { processes: 10, rate: 20, durationMs: 6_000, redisPort: redis.port, storeTimeoutMs: 50 };
    const shared = await runFleetOutage({ ...setup, shared: true, prefix: 'outage' });
    const own = await runFleetOutage({ ...setup, shared: false, prefix: 'outage-own' });
    console.log(
      `outage, 10 real processes × 20 calls/s for 6 s: amplification ${shared.amplification.toFixed(3)} with one fleet budget (${shared.attempts} attempts for ${shared.requests} calls, ${shared.refused} retries refused; stores down: ${JSON.stringify(shared.storeDowns)}), ${own.amplification.toFixed(3)} with a budget each (${own.attempts} for ${own.requests})`,
    );
    expect(shared.requests).toBe(1_200);
    // The fleet's retries ≤ max(ratio × calls, reserve) + processes × credit. A process whose
    // store went down decides alone meanwhile (fail-open), within its own budget: at most its
    // own reserve more.
    const fleetRetries = Math.max(0.2 * shared.requests, 100) + 10 * 2 + 100 * shared.processesWithStoreDown;
    expect(shared.amplification).toBeLessThanOrEqual(1 + fleetRetries / shared.requests);
    // The budget was spent, not refused wholesale: the fleet got close to its ratio.
    expect(shared.amplification).toBeGreaterThan(1.15);
    // A budget each: every process has the whole reserve, 100 retries for its 120 calls.
    expect(own.amplification).toBeGreaterThan(1.6);
  }, 120_000);
});
