// Real rate limiters nobody here wrote, in front of a tiny loopback HTTP server each:
// - `limiter`'s TokenBucket (a token bucket: burst, refilled continuously);
// - `express-rate-limit` on Express (a fixed-window counter, windows opening at the first hit);
// - `redis-gcra` (GCRA in a Lua script) on a real redis-server;
// - `express-queue` on Express (a concurrency limit with a bounded queue, 503 when full).
// All answer 429/503 without any wait hint, like the simulator's models. Requests are counted
// here, at the server.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import expressQueue from 'express-queue';
import { rateLimit } from 'express-rate-limit';
import { TokenBucket } from 'limiter';
import redisGcra from 'redis-gcra';
import { systemClock } from '../../src/time/system-clock.js';
import { connectRedis, RedisServer } from './redis-server.js';

export interface LimitedServer {
  url: string;
  requests(): { total: number; served: number; rejected: number };
  resetCounts(): void;
  close(): Promise<void>;
  /**
   * The concurrency server only: how long each request served since the last `resetCounts`
   * held its worker, ms (the sleep plus this machine's timer and event-loop delays), in the
   * order the services started (one still running is left out).
   */
  serviceTimes?(): number[];
}

async function serve(
  server: Server,
  counts: { served: number; rejected: number },
  after: () => Promise<void> = async () => {},
): Promise<LimitedServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests: () => ({ total: counts.served + counts.rejected, served: counts.served, rejected: counts.rejected }),
    resetCounts() {
      counts.served = 0;
      counts.rejected = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }).then(after),
  };
}

/** `limiter`'s TokenBucket: `burst` tokens, `ratePerSecond` dripped in continuously. */
export async function startTokenBucketServer(options: { ratePerSecond: number; burst: number }): Promise<LimitedServer> {
  // It starts empty and fills at the rate: callers let it fill (burst / rate) before a herd.
  const bucket = new TokenBucket({ bucketSize: options.burst, tokensPerInterval: options.ratePerSecond, interval: 'second' });
  const counts = { served: 0, rejected: 0 };
  const server = createServer((_req, res) => {
    if (bucket.tryRemoveTokens(1)) {
      counts.served++;
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else {
      counts.rejected++;
      res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down\n');
    }
  });
  return serve(server, counts);
}

/** express-rate-limit's memory store: `limit` per `windowMs`, one key for every caller. */
export async function startFixedWindowServer(options: { limit: number; windowMs: number }): Promise<LimitedServer> {
  const counts = { served: 0, rejected: 0 };
  const app = express();
  app.use(
    rateLimit({
      windowMs: options.windowMs,
      limit: options.limit,
      // No wait hints: the herd measures what callers do without them.
      legacyHeaders: false,
      standardHeaders: false,
      keyGenerator: () => 'herd',
      handler: (_req, res) => {
        counts.rejected++;
        res.status(429).send('slow down\n');
      },
    }),
  );
  app.get('/', (_req, res) => {
    counts.served++;
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
  const counts = { served: 0, rejected: 0 };
  const server = createServer((_req, res) => {
    limiter.limit({ key: 'all' }).then(
      ({ limited }: { limited: boolean }) => {
        if (limited) {
          counts.rejected++;
          res.writeHead(429, { 'content-type': 'text/plain' }).end('slow down\n');
        } else {
          counts.served++;
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
  const counts = { served: 0, rejected: 0 };
  let serviceTimes: number[] = [];
  const app = express();
  app.use(
    expressQueue({
      activeLimit: options.concurrency,
      queuedLimit: options.queue,
      rejectHandler: (_req: unknown, res: express.Response) => {
        counts.rejected++;
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
      counts.served++;
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
