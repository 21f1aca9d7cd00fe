// Regression tests: looking for a wait hint in a failed
// response's body must never wait on a body that does not end, nor leave a branch whose
// cancellation can throw inside undici. Each client runs in a child process with no
// rejection handler, against a real server on loopback.
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { figures, runClient } from '../support/http-child.js';
import { type Loopback, listen } from './support/loopback.js';

let server: Loopback;

beforeAll(async () => {
  server = await listen((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const size = Number(url.searchParams.get('size') ?? 0);
    if (url.pathname === '/html') {
      // No Content-Length: chunked.
      res.writeHead(503, { 'content-type': 'text/html' });
      res.end(Buffer.alloc(size, 120));
    } else if (url.pathname === '/slow-html') {
      // 300 KB at once, then 64 KiB every 50 ms up to 1 MB: still arriving when the attempt ends.
      res.writeHead(503, { 'content-type': 'text/html' });
      res.write(Buffer.alloc(300_000, 120));
      let sent = 300_000;
      const timer = setInterval(() => {
        res.write(Buffer.alloc(65_536, 120));
        sent += 65_536;
        if (sent >= 1_000_000) {
          clearInterval(timer);
          res.end();
        }
      }, 50);
      res.on('close', () => clearInterval(timer));
    } else if (url.pathname === '/gzip') {
      const json = Buffer.from(JSON.stringify({ filler: 'x'.repeat(size) }));
      const body = gzipSync(json);
      res.writeHead(503, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': body.length });
      res.end(body);
    } else if (url.pathname === '/stream') {
      // A JSON error body that keeps coming, one piece every 20 ms.
      res.writeHead(503, { 'content-type': 'application/json' });
      res.write('{"items":[');
      const timer = setInterval(() => res.write('"x",'), 20);
      res.on('close', () => clearInterval(timer));
    } else {
      res.writeHead(404).end();
    }
  });
});

afterAll(() => server.close());

const quickRetry = { retry: { maxAttempts: 2, backoff: { baseMs: 10, capMs: 20 } }, attemptTimeoutMs: 5_000 };

describe('regression: an error body over 64 KiB never holds the attempt', () => {
  it('a 70,000-byte chunked 503 is failed twice (max-attempts), not timed out; the body is handed back whole', async () => {
    const r = await runClient({ entry: 'fetch', url: `${server.url}/html?size=70000`, downstream: quickRetry });
    console.log(figures('70,000-byte chunked 503, 2 attempts', r));
    expect(r.stderr).toBe('');
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ outcome: 'resolved', status: 503, attempts: 2, bodyBytes: 70_000, sockets: 0 });
  });

  it('with neither retries nor an attempt timeout, the call settles with the 503 and its whole body', async () => {
    const r = await runClient({
      entry: 'fetch',
      url: `${server.url}/html?size=70000`,
      downstream: { retry: false, attemptTimeoutMs: false },
    });
    console.log(figures('70,000-byte chunked 503, no retry, no timeout', r));
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ outcome: 'resolved', status: 503, attempts: 1, bodyBytes: 70_000, sockets: 0 });
  });

  it('a 1 MB body still arriving when the attempt times out does not crash the process', async () => {
    const r = await runClient({
      entry: 'fetch',
      url: `${server.url}/slow-html`,
      downstream: { retry: false, attemptTimeoutMs: 150 },
    });
    console.log(figures('1 MB slow chunked 503, 150 ms attempt timeout', r));
    expect(r.stderr).toBe('');
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report?.sockets).toBe(0);
  });

  it('a gzipped JSON body with a small Content-Length (200 KB unpacked) is handed back whole', async () => {
    const r = await runClient({ entry: 'fetch', url: `${server.url}/gzip?size=200000`, downstream: quickRetry });
    console.log(figures('200 KB JSON gzipped 503, 2 attempts', r));
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ outcome: 'resolved', status: 503, attempts: 2, sockets: 0 });
    expect(r.report?.bodyBytes).toBeGreaterThan(200_000);
  });
});

describe('regression: a caller abort after the failed response was handed back', () => {
  it('a 503 whose JSON body keeps streaming, body unread, caller aborts: the process survives and exits', async () => {
    const r = await runClient({
      entry: 'fetch',
      url: `${server.url}/stream`,
      downstream: { retry: false },
      abortAfterMs: 200,
      read: 'after-abort',
    });
    console.log(figures('streaming 503, abort after 200 ms, body unread', r));
    expect(r.stderr).toBe('');
    expect(r.killed).toBe(false);
    expect(r.code).toBe(0);
    expect(r.report).toMatchObject({ outcome: 'resolved', status: 503, sockets: 0 });
    expect(r.report?.bodyError).toBeDefined();
  });
});
