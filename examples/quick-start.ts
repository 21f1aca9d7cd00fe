/**
 * The README's first example, runnable: a downstream with retry, a retry budget, a circuit
 * breaker and timeouts, calling `fetch`. A loopback server stands in for the real API: it
 * throttles the first request with a 429 and a Retry-After of one second.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let seen = 0;
const server = createServer((_req, res) => {
  seen++;
  if (seen === 1) res.writeHead(429, { 'retry-after': '1' }).end();
  else res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"ch_1","status":"paid"}');
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
process.env.PAYMENTS_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

// #region readme
import { downstream } from 'kindly-calls';
import { fetchThrough } from 'kindly-calls/http';

const API = process.env.PAYMENTS_URL ?? 'http://localhost:8080';
const payments = downstream('payments', {
  retry: { maxAttempts: 3, backoff: { baseMs: 200, capMs: 5_000, jitter: 'full' } },
  budget: { ratio: 0.2 }, // retries ≤ 20% of this downstream's requests (at least a small reserve)
  breaker: { threshold: 5, breakMs: 5_000 }, // 5 failures in a row: fail fast for 5 s
  attemptTimeoutMs: 2_000, // each try
  totalTimeoutMs: 10_000, // the whole call: tries, sleeps, reading the body
});

const response = await fetchThrough(payments, `${API}/charges/ch_1`);
console.log(response.status, await response.json());
// → 200 { id: 'ch_1', status: 'paid' } — after honouring the 429's Retry-After: 1
// #endregion

console.log(`server saw ${seen} requests; stats:`, payments.stats().retries, 'retry');
server.close();
