/**
 * A fleet (docs/fleet.md): processes calling one callee share their retry budget, circuit
 * breaker and pacing through Redis. Here two downstreams stand for two processes; one sees
 * the callee dead and the other stops calling it too.
 *
 * Run: npx tsx examples/guide-fleet.ts (starts its own redis-server on a free port)
 */
import { RedisServer } from './support/redis-server.js';

const server = await RedisServer.start();
const dead = async (): Promise<string> => {
  throw Object.assign(new Error('HTTP 503'), { status: 503 });
};

import { Redis } from 'ioredis';
// #region readme
import { downstream } from 'kindly-calls';
import { redisStore } from 'kindly-calls/redis';

// Your client, as your deployment configures it; kindly only sends scripts through it.
const redis = new Redis(server.port, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
await new Promise((ready) => redis.once('ready', ready)); // until then the store counts as down
const store = redisStore({ client: redis, prefix: 'myapp' });

const options = { retry: { maxAttempts: 2 }, breaker: { threshold: 3 }, budget: {}, store } as const;
const inProcessA = downstream('payments', options);
const inProcessB = downstream('payments', options);
inProcessB.on('store-availability', (e) => console.log(`store ${e.available ? 'up' : `down: ${e.reason}`}`));

await inProcessB.call(async () => 'ok'); // B is calling too
for (let i = 0; i < 3; i++) await inProcessA.call(dead).catch(() => undefined); // A trips its breaker
await new Promise((r) => setTimeout(r, 200)); // news takes a round trip or two (80 ms + one without news)
const b = await inProcessB.call(async () => 'ok').catch((error) => error.reason);
console.log(`B's next call: ${b}`); // circuit-open: B never reached the dead callee
// #endregion

store.close();
redis.disconnect();
await server.dispose();
