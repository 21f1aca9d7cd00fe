/**
 * `npm run demo:fleet`: the herd split over processes, against a real rate limiter.
 *
 * nginx's `limit_req` (a leaky bucket: 100 requests/s, burst 9, 429 beyond) guards a static
 * file. 100 callers in 4 processes each fetch it once at the same moment and retry until
 * they succeed — with full jitter, with kindly's adaptive pacing in each process on its own,
 * and with pacing (and budget and breaker) shared through Redis (`store`). The access log
 * counts what nginx saw; the lower bound is 100 first tries + 90 retries, the last served
 * 0.9 s after the first.
 *
 * `npm run demo:fleet -- --json` prints the rows as JSON; `--runs N` repeats each row N
 * times and reports every run (the JSON then holds one row per run); `--store-timeout-ms N`
 * sets the store's `timeoutMs` (on a loaded machine a loopback Redis often answers later than
 * the default 5 ms, and those operations are decided locally). ONLY=pacing-store (a
 * worker strategy) runs one variant; FLEET_DEBUG=1 makes workers print their attempts and waits;
 * FLEET_POLL=1 prints the store's pacing records (queue, contributions, answers) every 10 ms.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { WorkerConfig } from './support/fleet-worker.js';
import { NginxLimiter } from './support/nginx-limiter.js';
import { RedisServer } from './support/redis-server.js';

const RATE = 100;
const BURST = 9;
const PROCESSES = 4;
const CALLERS = 25;
const TOTAL = PROCESSES * CALLERS;
const served = BURST + 1;
const LOWER_BOUND = { requests: TOTAL + (TOTAL - served), ms: ((TOTAL - served) / RATE) * 1000 };

const json = process.argv.includes('--json');
const runsArg = process.argv.indexOf('--runs');
const runs = runsArg >= 0 ? Math.max(1, Number(process.argv[runsArg + 1]) || 1) : 1;
const timeoutArg = process.argv.indexOf('--store-timeout-ms');
const storeTimeoutMs = timeoutArg >= 0 ? Number(process.argv[timeoutArg + 1]) || undefined : undefined;

interface Row {
  name: string;
  processes: number;
  callers: number;
  requests: number;
  allSucceededMs: number;
  failed: number;
}

const allVariants: Array<{ name: string; processes: number; strategy: WorkerConfig['strategy'] }> = [
  { name: 'exponential + full jitter', processes: PROCESSES, strategy: 'full-jitter' },
  { name: 'kindly adaptive pacing, per process', processes: PROCESSES, strategy: 'pacing' },
  { name: 'kindly adaptive pacing, shared store (Redis)', processes: PROCESSES, strategy: 'pacing-store' },
  { name: 'kindly adaptive pacing, one process', processes: 1, strategy: 'pacing' },
];

const variants = process.env.ONLY ? allVariants.filter((v) => v.strategy === process.env.ONLY) : allVariants;
const limiter = await NginxLimiter.start({ rate: RATE, burst: BURST });
const redis = await RedisServer.start();
const worker = fileURLToPath(new URL('./support/fleet-worker.ts', import.meta.url));

interface WorkerResult {
  failed: number;
  gaveUp: Record<string, number>;
  storeDown: number;
  storeOps?: { commands: number; operations: number; failures: number; skipped: number };
}

let measured = 0;
async function measure(variant: (typeof variants)[number]): Promise<Row> {
  const callers = TOTAL / variant.processes;
  const children = Array.from({ length: variant.processes }, () => fork(worker, { execArgv: ['--import', 'tsx'] }));
  const ready = children.map((child) => new Promise((r) => child.once('message', r)));
  const config: WorkerConfig = {
    strategy: variant.strategy,
    callers,
    url: limiter.url,
    warmUrl: limiter.warmUrl,
    redisPort: redis.port,
    prefix: `demo-fleet-${++measured}`,
    storeTimeoutMs,
  };
  for (const child of children) child.send(config);
  await Promise.all(ready);
  // Let the leaky bucket drain fully, forget the warm-up, then release the herd.
  await new Promise((r) => setTimeout(r, 300));
  limiter.reset();
  const done = children.map((child) => new Promise<WorkerResult>((r) => child.once('message', (m) => r(m as WorkerResult))));
  for (const child of children) child.send('go');
  let poll: ReturnType<typeof setInterval> | undefined;
  let pollClient: { disconnect(): void } | undefined;
  if (process.env.FLEET_POLL) {
    const { connectRedis } = await import('./support/redis-server.js');
    const c = await connectRedis(redis.port);
    pollClient = c;
    const t0 = performance.now();
    const prefix = config.prefix;
    poll = setInterval(async () => {
      const keys = await c.keys(`${prefix}:*pace*`);
      const out: string[] = [];
      for (const k of keys.sort()) out.push(`${k.split(':').slice(2, 3)}=${JSON.stringify(await c.hgetall(k))}`);
      process.stderr.write(`POLL ${(performance.now() - t0).toFixed(0)} ${out.join(' ')}\n`);
    }, 10);
  }
  const results = await Promise.all(done);
  if (poll) clearInterval(poll);
  // An open connection would keep this process alive after the table.
  pollClient?.disconnect();
  await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : undefined)));
  const log = limiter.read();
  if (process.env.FLEET_DEBUG) process.stderr.write(`  requests/served per 50 ms: ${limiter.timeline(50)}\n`);
  const reasons: Record<string, number> = {};
  for (const r of results) for (const [k, n] of Object.entries(r.gaveUp)) reasons[k] = (reasons[k] ?? 0) + n;
  if (!json && Object.keys(reasons).length > 0) process.stderr.write(`  gave up: ${JSON.stringify(reasons)}\n`);
  // A store slower than its timeoutMs (a loaded machine) is fallen back from: say so, since
  // the processes then paced on their own for a while.
  const downs = results.reduce((n, r) => n + (r.storeDown ?? 0), 0);
  if (!json && downs > 0) process.stderr.write(`  store fell back to local policies ${downs} time(s)\n`);
  // Operations slower than the store's timeoutMs (5 ms) were decided locally: on a loaded
  // machine many are, and the processes then pace more on their own than together.
  // (Operations, not round trips: a turn's operations share one round trip.)
  const ops = results.reduce((n, r) => n + (r.storeOps?.operations ?? 0), 0);
  const late = results.reduce((n, r) => n + (r.storeOps?.failures ?? 0), 0);
  if (!json && ops > 0)
    process.stderr.write(`  store: ${late} of ${ops} operations failed or answered too late (decided locally)\n`);
  return {
    name: variant.name,
    processes: variant.processes,
    callers,
    requests: log.requests,
    allSucceededMs: log.allSucceededMs,
    failed: results.reduce((n, r) => n + r.failed, 0),
  };
}

const rows: Row[] = [];
try {
  for (const variant of variants) {
    for (let run = 0; run < runs; run++) {
      if (!json) process.stderr.write(`running ${variant.name}${runs > 1 ? ` (${run + 1}/${runs})` : ''}…\n`);
      rows.push(await measure(variant));
    }
  }
} finally {
  await limiter.close();
  await redis.dispose();
}

if (json) {
  console.log(JSON.stringify({ rows, lowerBound: LOWER_BOUND }));
} else {
  const pad = (s: string | number, n: number) => String(s).padStart(n);
  console.log(
    `\nFleet herd: ${TOTAL} callers at t=0 against nginx limit_req (${RATE} r/s, burst ${BURST}), real processes on loopback\n`,
  );
  console.log(`${'strategy'.padEnd(48)}${pad('processes', 10)}${pad('requests', 10)}${pad('all served', 12)}${pad('failed', 8)}`);
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(48)}${pad(r.processes, 10)}${pad(r.requests, 10)}${pad(`${(r.allSucceededMs / 1000).toFixed(2)} s`, 12)}${pad(r.failed, 8)}`,
    );
  }
  console.log(
    `${'lower bound'.padEnd(48)}${pad('—', 10)}${pad(LOWER_BOUND.requests, 10)}${pad(`${(LOWER_BOUND.ms / 1000).toFixed(2)} s`, 12)}`,
  );
}
