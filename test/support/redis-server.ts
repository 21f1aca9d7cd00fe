// One launcher for tests and the fleet demo (which cannot import from test/).
export { connectNodeRedis, connectRedis, RedisServer } from '../../examples/support/redis-server.js';
