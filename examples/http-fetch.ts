/**
 * fetch through a kindly downstream: retries with backoff, wait hints,
 * idempotency keys, and `fetch`'s own contract — the last response comes back on give-up.
 *
 * Run: npx tsx examples/http-fetch.ts
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

// A flaky inventory service on loopback: every third request succeeds.
let requests = 0;
const keys = new Set<string>();
const server = createServer((req, res) => {
  requests++;
  const key = req.headers['idempotency-key'];
  if (typeof key === 'string') keys.add(key);
  if (requests % 3 !== 0) res.writeHead(503, { 'retry-after': '0' }).end('busy');
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"sku":"book","stock":7}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.env.INVENTORY_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// #region readme
import { downstream } from 'kindly-calls';
import { createFetch } from 'kindly-calls/http';

const base = process.env.INVENTORY_URL ?? 'http://localhost:8080';
const inventory = downstream('inventory', {
  retry: { maxAttempts: 3, backoff: { baseMs: 50, capMs: 1_000 } },
  attemptTimeoutMs: 2_000,
});
const kindlyFetch = createFetch(inventory, { idempotencyKey: true });

const stock = await kindlyFetch(`${base}/stock/book`, { timeoutMs: 5_000 });
console.log(stock.status, await stock.json()); // 200 { sku: 'book', stock: 7 } after two 503s

// POST is retried only because it carries an Idempotency-Key (the same on every attempt).
const reservation = await kindlyFetch(`${base}/reservations`, { method: 'POST', body: '{"sku":"book"}' });
console.log(reservation.status);
// #endregion

console.log(`server saw ${requests} requests; the POST used ${keys.size} idempotency key`);
server.closeAllConnections();
server.close();
