/**
 * One process of the fleet demo: `callers` callers that each fetch the limited file once,
 * at the parent's signal, and retry until they succeed. Driven over IPC by demo-fleet.ts.
 */
import { fetchThrough } from '../../src/http/index.js';
import { type DownstreamOptions, downstream } from '../../src/index.js';
import { redisStore } from '../../src/store/redis.js';
import { connectRedis } from './redis-server.js';

export interface WorkerConfig {
  strategy: 'full-jitter' | 'pacing' | 'pacing-store';
  callers: number;
  url: string;
  warmUrl: string;
  redisPort?: number;
  /** Key prefix: each run is a new fleet, with no budget spent by an earlier run. */
  prefix?: string;
  /** The store's `timeoutMs` (default: the store's). */
  storeTimeoutMs?: number;
}

const untilSuccess = { maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 60_000 };
const backoff = { baseMs: 200, factor: 2, capMs: 5_000, jitter: 'full' as const };

process.once('message', async (config: WorkerConfig) => {
  const redis = config.strategy === 'pacing-store' ? await connectRedis(config.redisPort as number) : undefined;
  const options: DownstreamOptions =
    config.strategy === 'full-jitter'
      ? { budget: false, retry: { ...untilSuccess, backoff } }
      : { retry: { ...untilSuccess, backoff }, pacing: {} };
  const store =
    redis === undefined ? undefined : redisStore({ client: redis, prefix: config.prefix, timeoutMs: config.storeTimeoutMs });
  if (store !== undefined) options.store = store;
  const api = downstream('fleet-herd', options);
  const gaveUp: Record<string, number> = {};
  api.on('give-up', (e) => {
    gaveUp[e.reason] = (gaveUp[e.reason] ?? 0) + 1;
  });
  let storeDown = 0;
  const t0 = performance.now();
  if (process.env.FLEET_DEBUG) {
    api.on('pacing-delay', (e) =>
      process.stderr.write(
        `${process.pid} ${(performance.now() - t0).toFixed(0)} delay ${e.delayMs.toFixed(1)} rate ${e.rate?.toFixed(1)}\n`,
      ),
    );
    api.on('store-availability', (e) => process.stderr.write(`${process.pid} store ${e.available} ${e.reason}\n`));
    api.on('attempt-end', (e) =>
      process.stderr.write(
        `${process.pid} ${(performance.now() - t0).toFixed(0)} end ${e.attempt} ${e.outcome} ${e.classification?.status ?? ''}\n`,
      ),
    );
  }
  api.on('store-availability', (e) => {
    if (!e.available) storeDown++;
  });
  // Open the connections and warm the code path first, through a throwaway downstream.
  const warm = downstream('warm-up', { retry: false, budget: false });
  for (let round = 0; round < 2; round++) {
    await Promise.all(
      Array.from({ length: config.callers }, () => fetchThrough(warm, config.warmUrl).then((r) => r.arrayBuffer())),
    );
  }
  if (redis !== undefined) await redis.ping();
  process.send?.({ type: 'ready' });
  process.once('message', async () => {
    let failed = 0;
    await Promise.all(
      Array.from({ length: config.callers }, async () => {
        try {
          const response = await fetchThrough(api, config.url);
          await response.arrayBuffer();
          if (!response.ok) failed++;
        } catch {
          failed++;
        }
      }),
    );
    process.send?.({ type: 'done', failed, gaveUp, storeDown, storeOps: store?.counters });
    redis?.disconnect();
    process.disconnect();
  });
});
