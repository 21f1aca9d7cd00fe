/**
 * A front-end app's fetch through kindly-calls/lite: the same downstream, retries, wait hints,
 * timeouts, budget and breaker, without adaptive pacing and the latency policies — code a
 * bundler then leaves out of the page (about 40 % of what retries and timeouts bundle).
 *
 * Run: npx tsx examples/http-lite.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A busy API on loopback: the first two requests are told to come back in a moment.
let requests = 0;
const server = createServer((_req, res) => {
  requests++;
  if (requests < 3) res.writeHead(503, { 'retry-after': '0' }).end('busy');
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"user":"ada"}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.env.API_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// #region readme
import { createFetch } from 'kindly-calls/http';
import { downstream } from 'kindly-calls/lite';

const api = downstream('api', {
  retry: { maxAttempts: 3, backoff: { baseMs: 50, capMs: 1_000 } },
  attemptTimeoutMs: 5_000,
  breaker: {},
});
const apiFetch = createFetch(api);

const me = await apiFetch(`${process.env.API_URL ?? ''}/me`);
console.log(me.status, await me.json()); // 200 { user: 'ada' } after two 503s

// Pacing is not in this entry: asking for it names the one that has it.
try {
  downstream('paced', { pacing: {} } as never);
} catch (error) {
  console.log((error as Error).message.split('\n')[1]); // `pacing` needs adaptive pacing, which kindly-calls/lite leaves out: …
}
// #endregion

server.closeAllConnections();
server.close();
