// A real fixed window across a path whose latencies spread: express-rate-limit (10 per 100 ms,
// on Express) behind a TCP proxy that holds every chunk each way for a lognormal 10 ms (σ 0.5,
// drawn from the named seed 7; order kept per connection), warmed up by a herd of 50 through
// a downstream of its own (`warmUpThrough`).
import { SeededRandom } from '../../src/random/random.js';
import { lognormal } from '../../src/sim/distributions.js';
import { type DelayProxy, jitterProxy } from './delay-proxy.js';
import { type LimitedServer, startFixedWindowServer } from './limiter-servers.js';
import { warmUpThrough } from './real-herd.js';

export interface SpreadWindow {
  limiter: LimitedServer;
  proxy: DelayProxy;
  close(): Promise<void>;
}

export async function startSpreadWindow(warmUpName: string): Promise<SpreadWindow> {
  const limiter = await startFixedWindowServer({ limit: 10, windowMs: 100 });
  const random = new SeededRandom(7);
  const proxy = await jitterProxy({ port: Number(new URL(limiter.url).port) }, () => lognormal(random, 10, 0.5));
  await warmUpThrough(proxy.url, warmUpName);
  return {
    limiter,
    proxy,
    async close() {
      await proxy.close();
      await limiter.close();
    },
  };
}
