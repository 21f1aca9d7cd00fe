/**
 * Shared scaffolding of the server-middleware examples: a dead "payments" service (503 to
 * everything) on loopback, and a kindly client in front that sends a 2 s deadline and prints
 * what came back and how often payments was called.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { downstream } from 'kindly-calls';
import { createFetch } from 'kindly-calls/http';

export async function startDeadPayments(): Promise<{ url: string; calls: () => number; close: () => void }> {
  let calls = 0;
  const server = createServer((_req, res) => {
    calls++;
    res.writeHead(503).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * The client in front: kindly too, three attempts, a 2 s deadline that it sends along (it
 * names 127.0.0.1 as a host that takes part). Because the orders service marks its 503
 * `x-retry-exhausted: 1`, the client does not retry it: 3 calls reach payments, not 9.
 */
export async function callOrders(name: string, url: string, payments: { calls: () => number }): Promise<void> {
  const client = createFetch(downstream('orders', { retry: { maxAttempts: 3, backoff: { baseMs: 20 } } }), {
    propagateHeaders: { hosts: ['127.0.0.1'] },
  });
  const before = payments.calls();
  const response = await client(url, { method: 'POST', idempotencyKey: true, timeoutMs: 2_000 });
  console.log(
    `${name}: ${response.status} x-retry-exhausted=${response.headers.get('x-retry-exhausted')} ` +
      `"${await response.text()}" — payments called ${payments.calls() - before} times`,
  );
}
