import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchThrough, nodeHttpHandler } from '../../src/http/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { type Loopback, listen } from './support/loopback.js';

/**
 * client → A → B → C, every caller with 3 attempts; C always answers 503.
 * Without the "don't retry" signal the retries multiply (3 × 3 × 3 = 27 calls reach C per
 * client request); with kindly's middleware on A and B only the layer next to C retries (3).
 */
const layer = (name: string) =>
  downstream(name, {
    retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 1, jitter: 'none' } },
    // Budgets also curb amplification; off here so that the marker's effect is measured alone.
    budget: false,
  });

const servers: Loopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A service that forwards every request to `next` through its own kindly downstream. */
async function service(name: string, next: string, marked: boolean): Promise<Loopback> {
  const callee = layer(name);
  const handler = async (_req: IncomingMessage, res: ServerResponse) => {
    const upstream = await fetchThrough(callee, next);
    res.writeHead(upstream.status, { 'content-type': 'text/plain' }).end(await upstream.text());
  };
  const server = await listen(marked ? nodeHttpHandler(handler) : handler);
  servers.push(server);
  return server;
}

async function chain(marked: boolean) {
  let innermost = 0;
  const c = await listen((_req, res) => {
    innermost++;
    res.writeHead(503).end('C is down');
  });
  servers.push(c);
  const b = await service('B', c.url, marked);
  const a = await service('A', b.url, marked);
  const client = layer('client');
  const attempts: number[] = [];
  client.on('attempt-start', (e) => attempts.push(e.attempt));
  const response = await fetchThrough(client, a.url);
  return {
    innermost,
    status: response.status,
    exhausted: response.headers.get('x-retry-exhausted'),
    clientAttempts: attempts.length,
  };
}

describe('retry amplification across layers, real servers on loopback', () => {
  it('without the marker middleware: 27 calls reach the dead dependency per client request', async () => {
    const result = await chain(false);
    expect(result.status).toBe(503);
    expect(result.exhausted).toBeNull();
    expect(result.clientAttempts).toBe(3);
    expect(result.innermost).toBe(27);
    console.log(`[figure] 3 layers × 3 attempts, no marker: ${result.innermost} calls at the innermost service`);
  });

  it('with kindly middleware on A and B: 3 calls; the failure carries x-retry-exhausted: 1 to the client', async () => {
    const result = await chain(true);
    expect(result.status).toBe(503);
    expect(result.exhausted).toBe('1');
    expect(result.clientAttempts).toBe(1);
    expect(result.innermost).toBe(3);
    console.log(`[figure] 3 layers × 3 attempts, with x-retry-exhausted: ${result.innermost} calls at the innermost service`);
  });
});
