import axios from 'axios';
import { afterEach, describe, expect, it } from 'vitest';
import { axiosInterceptors } from '../../src/adapters/index.js';
import { downstream } from '../../src/index.js';
import { type Loopback, listen } from '../http/support/loopback.js';

const servers: Loopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

/** A server that answers 200 once `delayMs` have passed (or never, when the client leaves). */
async function slowServer(delayMs: number): Promise<Loopback & { requests: () => number }> {
  let requests = 0;
  const server = await listen((_req, res) => {
    requests++;
    const timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'), delayMs);
    res.on('close', () => clearTimeout(timer));
  });
  servers.push(server);
  return Object.assign(server, { requests: () => requests });
}

describe("axios' own timeout bounds each attempt of its request", () => {
  it("a timeout longer than the downstream's attemptTimeoutMs lets the attempt run (regression: it was cut at the shorter)", async () => {
    const server = await slowServer(300);
    const d = downstream('slow', {
      budget: false,
      attemptTimeoutMs: 100,
      retry: { maxAttempts: 2, backoff: { baseMs: 1, jitter: 'none' } },
    });
    const client = axiosInterceptors(axios.create({ baseURL: server.url }), d);
    const response = await client.get('/report', { timeout: 2_000 });
    expect(response.data).toEqual({ ok: true });
    expect(server.requests()).toBe(1);
  });

  it("without axios' timeout the downstream's attemptTimeoutMs still ends each attempt", async () => {
    const server = await slowServer(10_000);
    const d = downstream('slow', {
      budget: false,
      attemptTimeoutMs: 100,
      retry: { maxAttempts: 2, backoff: { baseMs: 1, jitter: 'none' } },
    });
    const client = axiosInterceptors(axios.create({ baseURL: server.url }), d);
    await expect(client.get('/report')).rejects.toMatchObject({ reason: 'max-attempts' });
    expect(server.requests()).toBe(2);
  });
});
