/**
 * TanStack Query with kindly's retry rules: `queryRetry()` gives `retry` and
 * `retryDelay` that follow the same decision as every kindly call — 503 and 429 retried with
 * jittered backoff or the server's Retry-After, 401/403/404 never — and `mutationRetry()` does
 * not repeat a write whose outcome is unknown.
 *
 * Run: npx tsx examples/tanstack-query.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A profile service on loopback that is busy for its first two requests.
let requests = 0;
const server = createServer((_req, res) => {
  requests++;
  if (requests <= 2) res.writeHead(503).end();
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"name":"Ada"}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.env.PROFILES_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// #region readme
import { QueryClient } from '@tanstack/query-core';
import { mutationRetry, queryRetry } from 'kindly-calls/adapters';
import { httpStatusError } from 'kindly-calls/http';

const base = process.env.PROFILES_URL ?? 'http://localhost:8080';
const queryClient = new QueryClient({
  defaultOptions: {
    queries: { ...queryRetry({ retry: { maxAttempts: 4, backoff: { baseMs: 100 } } }) },
    mutations: { ...mutationRetry() },
  },
});

const profile = await queryClient.fetchQuery({
  queryKey: ['profile', 1],
  queryFn: async () => {
    const response = await fetch(`${base}/profiles/1`);
    if (!response.ok) throw httpStatusError(response); // status + headers for kindly's rules
    return (await response.json()) as { name: string };
  },
});
console.log(profile); // { name: 'Ada' } on the third attempt
// #endregion

console.log(`server saw ${requests} requests`);
queryClient.clear();
server.closeAllConnections();
server.close();
