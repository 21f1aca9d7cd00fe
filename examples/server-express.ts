/**
 * Server middleware for Express (docs/http.md, "Server middleware"): the same "orders"
 * service as examples/server-node-http.ts, on Express 5.
 *
 * Run: npx tsx examples/server-express.ts
 */
import type { AddressInfo } from 'node:net';
import { callOrders, startDeadPayments } from './support/middleware-demo.js';

const payments = await startDeadPayments();
process.env.PAYMENTS_URL = payments.url;

// #region readme
import express from 'express';
import { downstream } from 'kindly-calls';
import { createFetch, expressMiddleware } from 'kindly-calls/http';

const PAYMENTS = process.env.PAYMENTS_URL ?? 'http://localhost:8081';
const paymentsApi = createFetch(downstream('payments', { retry: { maxAttempts: 3, backoff: { baseMs: 20 } } }));

const app = express();
app.use(expressMiddleware({ maxTimeoutMs: 10_000 })); // first, before body parsers and routes
app.post('/orders', async (req, res) => {
  const charge = await paymentsApi(`${PAYMENTS}/charge`, { method: 'POST', idempotencyKey: true });
  res.status(charge.ok ? 201 : 503).send(`budget ${req.kindly?.timeoutMs} ms`);
});
const server = app.listen(Number(process.env.PORT ?? 0));
// #endregion

await new Promise<void>((resolve) => server.once('listening', () => resolve()));
await callOrders('express', `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`, payments);
server.closeAllConnections();
server.close();
payments.close();
