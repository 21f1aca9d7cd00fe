// Regression tests: the call's deadline (and `bodyTimeoutMs`) covers the
// body of a response handed back — a body that stops arriving can no longer keep the caller
// waiting, nor the process alive, past it. Clients run in child processes with no rejection
// handler, against a real server on loopback.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { figures, runClient } from '../support/http-child.js';
import { type Loopback, listen } from './support/loopback.js';

let server: Loopback;

beforeAll(async () => {
  server = await listen((req, res) => {
    // Promises 100 bytes, sends 5, then nothing.
    const status = req.url === '/stall-503' ? 503 : 200;
    res.writeHead(status, { 'content-type': 'text/plain', 'content-length': '100' });
    res.write('hello');
  });
});

afterAll(() => server.close());

describe('regression: the deadline covers the response body', () => {
  it('timeout 500, a 200 whose body stalls: the call resolves, reading the body rejects with DeadlineExceededError, the process exits', async () => {
    const r = await runClient({ entry: 'fetch', url: `${server.url}/stall-200`, init: { timeoutMs: 500 } });
    console.log(figures('200 with a stalled body, timeout 500', r));
    expect(r.stderr).toBe('');
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ outcome: 'resolved', status: 200, bodyError: 'DeadlineExceededError', sockets: 0 });
  });

  it('the same for the last failed response handed back on give-up (a 503 whose body stalls)', async () => {
    const r = await runClient({
      entry: 'fetch',
      url: `${server.url}/stall-503`,
      downstream: { retry: { maxAttempts: 2, backoff: { baseMs: 1, capMs: 2 } } },
      init: { timeoutMs: 500 },
    });
    console.log(figures('503 with a stalled body, timeout 500, 2 attempts', r));
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({
      outcome: 'resolved',
      status: 503,
      attempts: 2,
      bodyError: 'DeadlineExceededError',
      sockets: 0,
    });
  });

  it('bodyTimeoutMs without a deadline: reading rejects with BodyTimeoutError', async () => {
    const r = await runClient({ entry: 'createFetch', url: `${server.url}/stall-200`, fetchOptions: { bodyTimeoutMs: 300 } });
    console.log(figures('200 with a stalled body, bodyTimeoutMs 300', r));
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ outcome: 'resolved', status: 200, bodyError: 'BodyTimeoutError', sockets: 0 });
  });
});
