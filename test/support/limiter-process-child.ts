// The child side of `startLimiterProcess` (limiter-process.ts): starts one of the limiter
// servers of limiter-servers.ts in this process and answers its parent over IPC.
import {
  type LimitedServer,
  startConcurrencyServer,
  startFixedWindowServer,
  startGcraServer,
  startTokenBucketServer,
} from './limiter-servers.js';

const [kind, json] = process.argv.slice(2);
const options = JSON.parse(json ?? '{}');
const starters: Record<string, (o: never) => Promise<LimitedServer>> = {
  'token-bucket': startTokenBucketServer,
  'fixed-window': startFixedWindowServer,
  concurrency: startConcurrencyServer,
  gcra: startGcraServer,
};
const start = starters[kind ?? ''];
if (start === undefined) throw new Error(`unknown limiter ${kind}`);
const server = await start(options as never);
process.on('message', async (message: { type: string }) => {
  if (message.type === 'requests')
    process.send?.({
      type: 'requests',
      requests: server.requests(),
      serviceTimes: server.serviceTimes?.(),
      arrivals: server.arrivals(),
    });
  else if (message.type === 'reset') {
    server.resetCounts();
    process.send?.({ type: 'reset' });
  } else if (message.type === 'close') {
    await server.close();
    process.exit(0);
  }
});
// Orphaned (the parent died): nothing else would stop this server.
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'listening', url: server.url });
