/**
 * Server middleware for node:http (docs/http.md, "Server middleware"): an "orders" service
 * calls a dead "payments" service through kindly (3 attempts). The middleware gives each
 * request the deadline its caller sent (`x-request-timeout-ms`, clamped to the server's
 * maximum), makes the kindly call inherit it, and — because the call exhausted its retries —
 * marks the 503 `x-retry-exhausted: 1`, so the kindly client in front does not retry it.
 *
 * Run: npx tsx examples/server-node-http.ts
 */
import type { AddressInfo } from 'node:net';
import { callOrders, startDeadPayments } from './support/middleware-demo.js';

const payments = await startDeadPayments();
process.env.PAYMENTS_URL = payments.url;

// #region readme
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { downstream } from 'kindly-calls';
import { createFetch, nodeHttpHandler } from 'kindly-calls/http';

const PAYMENTS = process.env.PAYMENTS_URL ?? 'http://localhost:8081';
const paymentsApi = createFetch(downstream('payments', { retry: { maxAttempts: 3, backoff: { baseMs: 20 } } }));

const orders = createServer(
  nodeHttpHandler(
    async (req: IncomingMessage, res: ServerResponse) => {
      // Inherits this request's deadline and signal; sends what is left of it downstream.
      const charge = await paymentsApi(`${PAYMENTS}/charge`, { method: 'POST', idempotencyKey: true });
      res.writeHead(charge.ok ? 201 : 503).end(`budget ${req.kindly?.timeoutMs} ms`);
    },
    { maxTimeoutMs: 10_000 },
  ),
);
orders.listen(Number(process.env.PORT ?? 0));
// #endregion

await new Promise<void>((resolve) => orders.once('listening', () => resolve()));
await callOrders('node:http', `http://127.0.0.1:${(orders.address() as AddressInfo).port}/orders`, payments);
orders.closeAllConnections();
orders.close();
payments.close();
