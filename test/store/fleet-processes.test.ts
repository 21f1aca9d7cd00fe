import { type ChildProcess, fork } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../support/redis-server.js';

/**
 * Several real processes, one real redis-server, one real HTTP callee on loopback. Each
 * child's clocks are skewed differently (hours apart), so anything timed by a host's clock
 * instead of Redis's `TIME` would break. Figures are printed, not asserted against the wall
 * clock.
 */
const childPath = fileURLToPath(new URL('../fixtures/fleet-child.ts', import.meta.url));
const SKEWS = [0, 3_600_000, -7_200_000];

interface Report {
  counts: { ok: number; failed: number; reasons: Record<string, number> };
  events: Array<{ type: string; at: number; to?: string; available?: boolean }>;
  store: { commands: number; failures: number; skipped: number };
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
        env: { ...process.env, REDIS_PORT: String(redis.port), URL: url, ID: String(id), SKEW_MS: String(skew), PREFIX: prefix },
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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('fleet of processes on a real redis-server', () => {
  it('one process seeing the callee dead opens the breaker for all, across skewed clocks', async () => {
    const children = await startFleet('breaker');
    await sleep(500);
    const tripAt = performance.timeOrigin + performance.now();
    failing.add('0');
    await sleep(1_000);
    const reports = await stop(children);
    failing.clear();
    const opened = reports[0]!.events.find((e) => e.type === 'breaker-state' && e.to === 'open');
    expect(opened).toBeDefined();
    // The others stopped calling: their last request came soon after child 0 opened.
    const delays = [1, 2].map((id) => {
      const after = (arrivals.get(String(id)) ?? []).filter((t) => t >= tripAt);
      return Math.max(0, (after.at(-1) ?? opened!.at) - opened!.at);
    });
    for (const id of [1, 2]) {
      expect(reports[id]!.counts.reasons['circuit-open'] ?? 0).toBeGreaterThan(0);
      expect(reports[id]!.events.some((e) => e.type === 'breaker-state' && e.to === 'open')).toBe(true);
    }
    console.log(`breaker propagation: others' last request ${delays.map((d) => d.toFixed(1)).join(', ')} ms after the opening`);
    // Far below the 1 s the test ran: the others were stopped, not just slowed.
    for (const d of delays) expect(d).toBeLessThan(500);
  });

  it('Redis killed mid-run fails no call; restarted, the fleet finds it again and writes its state back', async () => {
    arrivals.clear();
    const children = await startFleet('restart');
    await sleep(400);
    await redis.stop();
    await sleep(800);
    await redis.start();
    await sleep(1_500);
    const reports = await stop(children);
    const calls = reports.reduce((n, r) => n + r.counts.ok + r.counts.failed, 0);
    const failed = reports.reduce((n, r) => n + r.counts.failed, 0);
    const downs = reports.map((r) => r.events.filter((e) => e.type === 'store-availability').map((e) => e.available));
    console.log(
      `redis killed for 0.8 s: ${calls} calls, ${failed} failed; availability events per process ${JSON.stringify(downs)}; store ops ${JSON.stringify(reports.map((r) => r.store))}`,
    );
    expect(failed).toBe(0);
    for (const d of downs) expect(d).toEqual([false, true]);
    // Resynced: the restarted (empty) Redis holds the fleet's keys again, with TTLs.
    const { connectRedis } = await import('../support/redis-server.js');
    const client = await connectRedis(redis.port);
    const keys = await client.keys('restart:*');
    expect(keys.some((k) => k.includes(':budget:'))).toBe(true);
    expect(keys.some((k) => k.includes(':breaker:'))).toBe(true);
    for (const k of keys) expect(await client.pttl(k)).toBeGreaterThan(0);
    client.disconnect();
  });
});
