/**
 * A downstream in three lines (docs/guide.md, introduction): one per callee, reused for every
 * call, around any async operation or HTTP. A loopback server stands in for the payments API.
 *
 * Run: npx tsx examples/guide-overview.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((req, res) => {
  if (req.url === '/fee') res.writeHead(200, { 'content-type': 'application/json' }).end('{"fee":0.3}');
  else res.writeHead(204).end();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.env.PAYMENTS_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// #region readme
import { downstream } from 'kindly-calls';
import { fetchThrough } from 'kindly-calls/http';

const API = process.env.PAYMENTS_URL ?? 'http://localhost:8080';
const api = downstream('payments', { retry: { maxAttempts: 3 } }); // options: see the table below

// Any async operation: it gets the attempt's signal (and number, retries left, deadline).
const fee = await api.call(async ({ signal }) => {
  const response = await fetch(`${API}/fee`, { signal });
  if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
  return (await response.json()) as { fee: number };
});
const health = await fetchThrough(api, `${API}/health`); // HTTP: the same pipeline, fetch's contract (http.md)
console.log(fee, health.status); // { fee: 0.3 } 204
// #endregion

server.close();
