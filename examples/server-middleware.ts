/**
 * Server middleware (SPEC S5, S7) for node:http, Express and Fastify.
 *
 * Each framework runs an "orders" service that calls a dead "payments" service through kindly
 * (3 attempts). The middleware gives each request the deadline its caller sent
 * (`x-request-timeout-ms`, clamped to the server's maximum), makes the kindly call inherit it,
 * and — because the call exhausted its retries — marks the 503 `x-retry-exhausted: 1`, so
 * the kindly client in front does not retry it: 3 calls reach payments per client request,
 * not 9.
 *
 * Run: npx tsx examples/server-middleware.ts
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import Fastify from 'fastify';
import { downstream } from 'kindly-calls';
import { createFetch, kindlyExpress, kindlyFastify, withKindly } from 'kindly-calls/http';

const quick = { maxAttempts: 3, backoff: { base: 20 } };

// payments: down, answering 503 to everything.
let paymentCalls = 0;
const payments = createServer((_req, res) => {
  paymentCalls++;
  res.writeHead(503).end();
});
await new Promise<void>((resolve) => payments.listen(0, '127.0.0.1', resolve));
const paymentsUrl = `http://127.0.0.1:${(payments.address() as AddressInfo).port}`;

// --- snippet: node-http ---
const paymentsApi = createFetch(downstream('payments', { retry: quick }));

const orders = createServer(
  withKindly(
    async (req: IncomingMessage, res: ServerResponse) => {
      // Inherits this request's deadline and signal; sends what is left of it downstream.
      const charge = await paymentsApi(`${paymentsUrl}/charge`, { method: 'POST', idempotencyKey: true });
      res.writeHead(charge.ok ? 201 : 503).end(`budget ${req.kindly?.timeoutMs} ms`);
    },
    { maxTimeoutMs: 10_000 },
  ),
);
// --- end snippet ---

// --- snippet: express ---
const app = express();
app.use(kindlyExpress({ maxTimeoutMs: 10_000 })); // first, before body parsers and routes
app.post('/orders', async (req, res) => {
  const charge = await paymentsApi(`${paymentsUrl}/charge`, { method: 'POST', idempotencyKey: true });
  res.status(charge.ok ? 201 : 503).send(`budget ${req.kindly?.timeoutMs} ms`);
});
// --- end snippet ---

// --- snippet: fastify ---
const fastify = Fastify();
await fastify.register(kindlyFastify, { maxTimeoutMs: 10_000 });
fastify.post('/orders', async (_request, reply) => {
  const charge = await paymentsApi(`${paymentsUrl}/charge`, { method: 'POST', idempotencyKey: true });
  return reply.code(charge.ok ? 201 : 503).send('payment failed');
});
// --- end snippet ---

await new Promise<void>((resolve) => orders.listen(0, '127.0.0.1', resolve));
const expressServer = app.listen(0, '127.0.0.1');
await new Promise<void>((resolve) => expressServer.once('listening', () => resolve()));
const fastifyUrl = await fastify.listen({ port: 0, host: '127.0.0.1' });

// The client in front: kindly too, with a 2 s deadline sent along.
const client = createFetch(downstream('orders', { retry: quick }));
for (const [name, url] of [
  ['node:http', `http://127.0.0.1:${(orders.address() as AddressInfo).port}/orders`],
  ['express', `http://127.0.0.1:${(expressServer.address() as AddressInfo).port}/orders`],
  ['fastify', `${fastifyUrl}/orders`],
] as const) {
  paymentCalls = 0;
  const response = await client(url, { method: 'POST', idempotencyKey: true, timeout: 2_000 });
  console.log(
    `${name}: ${response.status} x-retry-exhausted=${response.headers.get('x-retry-exhausted')} ` +
      `"${await response.text()}" — payments called ${paymentCalls} times`,
  );
}

await fastify.close();
for (const server of [orders, expressServer, payments]) {
  server.closeAllConnections();
  server.close();
}
