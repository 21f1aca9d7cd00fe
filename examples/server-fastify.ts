/**
 * Server middleware for Fastify (docs/http.md, "Server middleware"): the same "orders"
 * service as examples/server-node-http.ts, as a Fastify 5 plugin; `request.kindly` is typed.
 *
 * Run: npx tsx examples/server-fastify.ts
 */
import { callOrders, startDeadPayments } from './support/middleware-demo.js';

const payments = await startDeadPayments();
process.env.PAYMENTS_URL = payments.url;

// #region readme
import Fastify from 'fastify';
import { downstream } from 'kindly-calls';
import { createFetch, fastifyPlugin } from 'kindly-calls/http';

const PAYMENTS = process.env.PAYMENTS_URL ?? 'http://localhost:8081';
const paymentsApi = createFetch(downstream('payments', { retry: { maxAttempts: 3, backoff: { baseMs: 20 } } }));

const fastify = Fastify();
await fastify.register(fastifyPlugin, { maxTimeoutMs: 10_000 });
fastify.post('/orders', async (request, reply) => {
  const charge = await paymentsApi(`${PAYMENTS}/charge`, { method: 'POST', idempotencyKey: true });
  return reply.code(charge.ok ? 201 : 503).send(`budget ${request.kindly?.timeoutMs} ms`);
});
const url = await fastify.listen({ port: Number(process.env.PORT ?? 0) });
// #endregion

await callOrders('fastify', `${url.replace('[::1]', '127.0.0.1').replace('localhost', '127.0.0.1')}/orders`, payments);
await fastify.close();
payments.close();
