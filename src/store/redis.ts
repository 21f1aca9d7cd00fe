/**
 * `kindly-calls/redis`: the fleet store on Redis. Pass it as `store` to `downstream()` so
 * that every process calling one callee shares its retry budget, circuit breaker and
 * pacing. Needs a Redis client you already have (ioredis or node-redis, an optional peer).
 * `FleetLink` is what a store links each downstream with (`FleetStore.link`).
 */
export { FleetLink, type FleetLinkOptions } from './fleet-link.js';
export type { FleetStore, StoreAvailability } from './fleet-store.js';
export type { IoRedisLike, NodeRedisLike, RedisClientLike } from './redis-client.js';
export { REDIS_STORE_DEFAULTS, RedisStore, type RedisStoreCounters, type RedisStoreOptions, redisStore } from './redis-store.js';
