// The real worker pool whose service times spread, as the spread-service test and
// `bench/pool-spread-yardstick.ts` both meet it: express-queue (10 workers, one waiting
// place) whose handler takes a lognormal 100 ms (σ 0.5), behind a TCP proxy that holds every
// chunk each way for a lognormal 10 ms (σ 0.5), both drawn from named seeds; warmed up by one
// herd of 50. One herd per seed: 100 callers whose first tries arrive over 200 ms.
import { SeededRandom } from '../../src/random/random.js';
import { lognormal } from '../../src/sim/distributions.js';
import type { HerdSetup } from '../../src/sim/herd-run.js';
import { type DelayProxy, jitterProxy } from './delay-proxy.js';
import { type LimitedServer, startConcurrencyServer } from './limiter-servers.js';
import { herdTwin, warmUpThrough } from './real-herd.js';

export const SPREAD_POOL_CALLERS = 100;
export const SPREAD_POOL_ARRIVAL_MS = 200;
/** The proxy's mean hold of an answer on its way back, ms. */
export const SPREAD_POOL_WAY_BACK_MS = 10;

export interface SpreadPool {
  pool: LimitedServer;
  proxy: DelayProxy;
  close(): Promise<void>;
}

export async function startSpreadPool(): Promise<SpreadPool> {
  const service = new SeededRandom(11);
  const pool = await startConcurrencyServer({ concurrency: 10, queue: 1, serviceMs: () => lognormal(service, 100, 0.5) });
  const path = new SeededRandom(7);
  const proxy = await jitterProxy({ port: Number(new URL(pool.url).port) }, () => lognormal(path, SPREAD_POOL_WAY_BACK_MS, 0.5));
  await warmUpThrough(proxy.url, 'spread-pool-warm-up');
  return {
    pool,
    proxy,
    close: async () => {
      await proxy.close();
      await pool.close();
    },
  };
}

/** The herd of `seed` and its model: the pool, one waiting place, lognormal 20 ms back. */
export function spreadPoolHerd(seed: number): HerdSetup {
  return herdTwin(
    { model: 'concurrency', queue: 1, latencyMs: 20, distribution: 'lognormal' },
    SPREAD_POOL_CALLERS,
    SPREAD_POOL_ARRIVAL_MS,
    seed,
  );
}
