/**
 * axios through a kindly downstream: the adapter retries 429/503 with backoff,
 * honours Retry-After from the response headers, never retries 401/403/404, and rejects with
 * axios' own error when it gives up.
 *
 * Run: npx tsx examples/axios.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A rate-limited API on loopback: the first request is told to come back in 1 second.
let requests = 0;
const server = createServer((req, res) => {
  requests++;
  if (req.url === '/secret') res.writeHead(401).end();
  else if (requests === 1) res.writeHead(429, { 'retry-after': '1' }).end();
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"repos":42}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.env.REPOS_API_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// #region readme
import axios, { isAxiosError } from 'axios';
import { downstream } from 'kindly-calls';
import { axiosInterceptors } from 'kindly-calls/adapters';

const baseURL = process.env.REPOS_API_URL ?? 'http://localhost:8080';
const client = axiosInterceptors(axios.create({ baseURL }), downstream('repos-api'));

const started = performance.now();
const { data } = await client.get('/repos');
console.log(data, `after ${Math.round(performance.now() - started)} ms (Retry-After: 1 honoured)`);

try {
  await client.get('/secret');
} catch (error) {
  if (isAxiosError(error)) console.log('401 is not retried:', error.response?.status);
}
// #endregion

console.log(`server saw ${requests} requests`);
server.closeAllConnections();
server.close();
