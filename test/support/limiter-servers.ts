// Real rate limiters nobody here wrote, in front of a tiny loopback HTTP server each:
// - `limiter`'s TokenBucket (a token bucket: burst, refilled continuously);
// - `express-rate-limit` on Express (a fixed-window counter, windows opening at the first hit);
// - `redis-gcra` (GCRA in a Lua script) on a real redis-server;
// - `express-queue` on Express (a concurrency limit with a bounded queue, 503 when full).
// All answer 429/503 without any wait hint, like the simulator's models. Requests are counted
// here, at the server.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import expressQueue from 'express-queue';
import { rateLimit } from 'express-rate-limit';
import { TokenBucket } from 'limiter';
import redisGcra from 'redis-gcra';
import { ATTEMPT_HEADER, readPreviousAttempts } from '../../src/http/attempt-header.js';
import { systemClock } from '../../src/time/system-clock.js';
import { connectRedis, RedisServer } from './redis-server.js';

export interface LimitedServer {
  url: string;
  requests(): { total: number; served: number; rejected: number };
  /**
   * Every request since the last `resetCounts`, in the order they reached this server: when
   * (ms after the reset, this process's monotonic clock) and whether it was served (false while
   * it waits or was rejected). How far a herd sent at once has spread by the time it reaches the
   * limiter is what the simulator's herd takes as `arrivalMs`; the model decides a burst at one
   * instant otherwise.
   */
  arrivals(): Arrival[];
  resetCounts(): void;
  close(): Promise<void>;
  /**
   * The concurrency server only: how long each request served since the last `resetCounts`
   * held its worker, ms (the sleep plus this machine's timer and event-loop delays), in the
   * order the services started (one still running is left out).
   */
  serviceTimes?(): number[];
}

export interface Arrival {
  atMs: number;
  served: boolean;
  /** Attempts the caller made before this one (kindly's `x-retry-attempt`); absent if not sent. */
  previousAttempts?: number;
  /** Which caller sent it (the herd's `?caller=N`, `herdCallerUrl`); absent if not sent. */
  caller?: number;
}

/** `url` as herd caller `caller` requests it, so that the limiter's log can tell callers apart. */
export function herdCallerUrl(url: string, caller: number): string {
  return `${url}${url.includes('?') ? '&' : '?'}caller=${caller}`;
}

/** The caller a request's target names (`herdCallerUrl`); undefined if it names none. */
export function callerOf(target: string): number | undefined {
  const id = /[?&]caller=(\d{1,9})(?:&|$)/.exec(target)?.[1];
  return id === undefined ? undefined : Number(id);
}

/** What kindly's `x-retry-attempt` says (0 on a first try), read as kindly's servers read it; absent if not sent. */
function previousAttempts(req: IncomingMessage): number | undefined {
  return req.headers[ATTEMPT_HEADER] === undefined ? undefined : readPreviousAttempts(req.headers);
}

/**
 * How long a herd's first tries took to reach the limiter, first to last, ms: they leave the
 * callers at once (or spread on purpose), and arrive spread by the callers' event loop, their
 * connections and the limiter's own. kindly marks a first try `x-retry-attempt: 0` when it
 * propagates its headers to the limiter (`propagateHeaders`); without that mark (a plain
 * `fetch`) the first `callers` requests stand in for them.
 */
export function firstTriesSpanMs(arrivals: readonly Arrival[], callers: number): number {
  const marked = arrivals.filter((a) => a.previousAttempts === 0);
  const firstTries = marked.length > 0 ? marked : arrivals.slice(0, callers);
  return firstTries.length === 0 ? 0 : firstTries.at(-1)!.atMs - firstTries[0]!.atMs;
}

/** A limiter's requests, logged as they arrive and counted as it answers them. */
class Tally {
  served = 0;
  rejected = 0;
  log: Arrival[] = [];
  private since = systemClock.monotonic();

  /** `req` reached the server now: its entry, for `serve` if it is served. */
  arrive(req: IncomingMessage): Arrival {
    const attempts = previousAttempts(req);
    const arrival: Arrival = { atMs: systemClock.monotonic() - this.since, served: false };
    if (attempts !== undefined) arrival.previousAttempts = attempts;
    const caller = callerOf(req.url ?? '');
    if (caller !== undefined) arrival.caller = caller;
    this.log.push(arrival);
    return arrival;
  }

  serve(arrival: Arrival): void {
    this.served++;
    arrival.served = true;
  }

  reject(): void {
    this.rejected++;
  }

  reset(): void {
    this.served = 0;
    this.rejected = 0;
    this.log = [];
    this.since = systemClock.monotonic();
  }
}

/** An Express app whose every request is logged in `counts` on arrival (`res.locals.arrival`). */
function loggedApp(counts: Tally): express.Express {
  const app = express();
  app.use((req, res, next) => {
    res.locals.arrival = counts.arrive(req);
    next();
  });
  return app;
}

/** Keeps this process's event loop busy for `ms`: a request's own work, done one at a time. */
function busyFor(ms: number): void {
  const until = systemClock.monotonic() + ms;
  while (systemClock.monotonic() < until) {}
}

async function serve(server: Server, counts: Tally, after: () => Promise<void> = async () => {}): Promise<LimitedServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests: () => ({ total: counts.served + counts.rejected, served: counts.served, rejected: counts.rejected }),
    arrivals: () => counts.log,
    resetCounts: () => counts.reset(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }).then(after),
  };
}

/** `limiter`'s TokenBucket: `burst` tokens, `ratePerSecond` dripped in continuously. */
export async function startTokenBucketServer(options: {
  ratePerSecond: number;
  burst: number;
  /** CPU time each request costs before the bucket decides it, ms (a server with work to do per request). */
  workMs?: number;
}): Promise<LimitedServer> {
  // It starts empty and fills at the rate: callers let it fill (burst / rate) before a herd.
  const bucket = new TokenBucket({ bucketSize: options.burst, tokensPerInterval: options.ratePerSecond, interval: 'second' });
  const counts = new Tally();
  const workMs = options.workMs ?? 0;
  const server = createServer((req, res) => {
    const arrival = counts.arrive(req);
    if (workMs > 0) busyFor(workMs);
    if (bucket.tryRemoveTokens(1)) {
      counts.serve(arrival);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else {
      counts.reject();
      res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down\n');
    }
  });
  return serve(server, counts);
}

/** express-rate-limit's memory store: `limit` per `windowMs`, one key for every caller. */
export async function startFixedWindowServer(options: { limit: number; windowMs: number }): Promise<LimitedServer> {
  const counts = new Tally();
  const app = loggedApp(counts);
  app.use(
    rateLimit({
      windowMs: options.windowMs,
      limit: options.limit,
      // No wait hints: the herd measures what callers do without them.
      legacyHeaders: false,
      standardHeaders: false,
      keyGenerator: () => 'herd',
      handler: (_req, res) => {
        counts.reject();
        res.status(429).send('slow down\n');
      },
    }),
  );
  app.get('/', (_req, res) => {
    counts.serve(res.locals.arrival);
    res.send('ok\n');
  });
  return serve(createServer(app), counts);
}

/**
 * `redis-gcra` on a redis-server this starts: GCRA with `ratePerSecond` and a burst of
 * `burst`, one key for every caller (the limiter's clock is this process's `Date.now`).
 */
export async function startGcraServer(options: { ratePerSecond: number; burst: number }): Promise<LimitedServer> {
  const redisServer = await RedisServer.start();
  const redis = await connectRedis(redisServer.port);
  const limiter = redisGcra({ redis, keyPrefix: 'herd', burst: options.burst, rate: options.ratePerSecond, period: 1_000 });
  const counts = new Tally();
  const server = createServer((req, res) => {
    const arrival = counts.arrive(req);
    limiter.limit({ key: 'all' }).then(
      ({ limited }: { limited: boolean }) => {
        if (limited) {
          counts.reject();
          res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down\n');
        } else {
          counts.serve(arrival);
          res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
        }
      },
      () => res.writeHead(500).end(),
    );
  });
  return serve(server, counts, async () => {
    redis.disconnect();
    await redisServer.dispose();
  });
}

/**
 * `express-queue` on Express: `concurrency` requests served at once, each taking `serviceMs`,
 * up to `queue` more waiting; beyond that 503 at once.
 */
export async function startConcurrencyServer(options: {
  concurrency: number;
  queue: number;
  /** One service time, or a draw of one per request. */
  serviceMs: number | (() => number);
}): Promise<LimitedServer> {
  const counts = new Tally();
  let serviceTimes: number[] = [];
  const app = loggedApp(counts);
  app.use(
    expressQueue({
      activeLimit: options.concurrency,
      queuedLimit: options.queue,
      rejectHandler: (_req: unknown, res: express.Response) => {
        counts.reject();
        res.status(503).send('busy\n');
      },
    }),
  );
  app.get('/', (_req, res) => {
    // express-queue starts this handler when it gives the request a worker, and frees the
    // worker when the response ends.
    const start = systemClock.monotonic();
    const serviceMs = typeof options.serviceMs === 'number' ? options.serviceMs : options.serviceMs();
    // Kept in the order the services started (as the pool drew them), not as they ended.
    const times = serviceTimes;
    const index = times.push(Number.NaN) - 1;
    systemClock.sleep(serviceMs).then(() => {
      counts.serve(res.locals.arrival);
      res.send('ok\n');
      times[index] = systemClock.monotonic() - start;
    });
  });
  const server = await serve(createServer(app), counts);
  return {
    ...server,
    resetCounts() {
      server.resetCounts();
      serviceTimes = [];
    },
    serviceTimes: () => serviceTimes.filter((ms) => !Number.isNaN(ms)),
  };
}
