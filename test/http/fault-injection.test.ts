// The fault-injection suite: a TCP fault proxy in front of real servers, every HTTP
// entry point (fetch through a downstream, createFetch, the axios adapter, each middleware as a
// server calling a downstream). Each entry's client runs in its own child process with no
// rejection handler, the cases one after the other: every case must settle with its documented
// outcome and leave no socket open, and the child must exit by itself (exit 0, nothing on
// stderr) — a crash, an unhandled rejection or a hang fails the test. Figures are printed.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FaultProxy, faultProxy, type WireFault } from '../support/fault-proxy.js';
import { type ClientReport, type ClientSpec, type Entry, runClient } from '../support/http-child.js';
import { refusedPort } from './support/loopback.js';

const KiB = 1024;
const MB = 1_000_000;
const ERROR_SIZES = [1_000, 64 * KiB, 70_000, 1 * MB, 10 * MB];
const JSON_SIZE = 200_000;
const jsonBody = Buffer.from(JSON.stringify({ error: 'busy', filler: 'x'.repeat(JSON_SIZE) }));
const gzipped = gzipSync(jsonBody);
const brotlied = brotliCompressSync(jsonBody);
/** 50 MB of zeros in ~50 KB: inflating it whole would cost the client 50 MB. */
const bomb = gzipSync(Buffer.alloc(50 * MB));

let server: Server;
let origin: { port: number };
const proxies = new Map<WireFault, FaultProxy>();
let refused: string;
const timers = new Set<ReturnType<typeof setInterval>>();

function serve(url: URL, res: import('node:http').ServerResponse): void {
  const path = url.pathname;
  if (path === '/ok') {
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
  } else if (path === '/big') {
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(100_000) });
    res.end(Buffer.alloc(100_000, 121));
  } else if (path === '/error') {
    const size = Number(url.searchParams.get('size'));
    const headers: Record<string, string> = { 'content-type': 'text/html' };
    if (url.searchParams.get('cl') === '1') headers['content-length'] = String(size);
    res.writeHead(503, headers).end(Buffer.alloc(size, 120));
  } else if (path === '/gzip' || path === '/br' || path === '/bomb') {
    const body = path === '/gzip' ? gzipped : path === '/br' ? brotlied : bomb;
    res.writeHead(503, {
      'content-type': 'application/json',
      'content-encoding': path === '/br' ? 'br' : 'gzip',
      'content-length': String(body.length),
    });
    res.end(body);
  } else if (path === '/never-ends' || path === '/stream-503' || path === '/slow-hint') {
    const status = path === '/never-ends' ? 200 : 503;
    res.writeHead(status, { 'content-type': path === '/never-ends' ? 'text/plain' : 'application/json' });
    if (path === '/stream-503') res.write('{"items":[');
    const timer = setInterval(() => res.write(path === '/slow-hint' ? ' ' : '"x",'), path === '/slow-hint' ? 200 : 20);
    timers.add(timer);
    res.on('close', () => {
      clearInterval(timer);
      timers.delete(timer);
    });
  } else res.writeHead(404).end();
}

beforeAll(async () => {
  server = createServer((req, res) => serve(new URL(req.url ?? '/', 'http://x'), res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = { port: (server.address() as AddressInfo).port };
  const faults: WireFault[] = [
    'none',
    'reset-before-request',
    'reset-after-request',
    'accept-then-hang',
    'half-headers',
    'half-body',
    'one-byte-per-100ms',
  ];
  for (const fault of faults) proxies.set(fault, await faultProxy(origin, fault));
  refused = await refusedPort();
});

afterAll(async () => {
  for (const timer of timers) clearInterval(timer);
  await Promise.all([...proxies.values()].map((p) => p.close()));
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const via = (fault: WireFault, path: string) => `${proxies.get(fault)?.url}${path}`;

/** A case, and the outcome documented for it. */
interface FaultCase {
  name: string;
  url: () => string;
  spec?: Partial<ClientSpec>;
  expect: Partial<ClientReport> & { bodyErrorSet?: boolean; maxRssGrowthKb?: number };
}

const quick = { retry: { maxAttempts: 2, backoff: { baseMs: 5, capMs: 10 } }, attemptTimeoutMs: 400, budget: false };
const gaveUp = { outcome: 'rejected', error: 'GiveUpError', reason: 'max-attempts', attempts: 2 } as const;

/** Wire faults that leave no response at all: every entry point retries, then gives up. */
const noResponse: FaultCase[] = [
  { name: 'refused', url: () => `${refused}/ok`, expect: gaveUp },
  { name: 'reset before the request', url: () => via('reset-before-request', '/ok'), expect: gaveUp },
  { name: 'reset after the request', url: () => via('reset-after-request', '/ok'), expect: gaveUp },
  { name: 'accept, then hang', url: () => via('accept-then-hang', '/ok'), expect: gaveUp },
  { name: 'half the headers', url: () => via('half-headers', '/ok'), expect: gaveUp },
  { name: '1 byte per 100 ms', url: () => via('one-byte-per-100ms', '/ok'), expect: gaveUp },
];

const errorBodies = (entry: 'fetch' | 'axios'): FaultCase[] =>
  ERROR_SIZES.flatMap((size) =>
    [true, false].map(
      (cl): FaultCase => ({
        name: `503 text/html ${size.toLocaleString('en-US')} B ${cl ? 'with' : 'without'} Content-Length`,
        url: () => via('none', `/error?size=${size}&cl=${cl ? 1 : 0}`),
        // axios reads the body inside the attempt: room for 10 MB on a loaded machine.
        spec: { downstream: { ...quick, attemptTimeoutMs: 5_000 } },
        expect:
          entry === 'fetch'
            ? { outcome: 'resolved', status: 503, attempts: 2, bodyBytes: size }
            : { outcome: 'rejected', status: 503, attempts: 2, error: 'AxiosError' },
      }),
    ),
  );

function fetchCases(): FaultCase[] {
  return [
    ...noResponse,
    {
      name: 'half the body (reset after 300 bytes)',
      url: () => via('half-body', '/big'),
      expect: { outcome: 'resolved', status: 200, bodyErrorSet: true },
    },
    {
      name: 'chunked body that never ends (timeout 1,500)',
      url: () => via('none', '/never-ends'),
      spec: { init: { timeoutMs: 1_500 } },
      expect: { outcome: 'resolved', status: 200, bodyError: 'DeadlineExceededError' },
    },
    ...errorBodies('fetch'),
    {
      name: '503 JSON gzip',
      url: () => via('none', '/gzip'),
      expect: { outcome: 'resolved', status: 503, attempts: 2, bodyBytes: jsonBody.length },
    },
    {
      name: '503 JSON br',
      url: () => via('none', '/br'),
      expect: { outcome: 'resolved', status: 503, attempts: 2, bodyBytes: jsonBody.length },
    },
    {
      name: '503 gzip bomb (50 MB inflated), body left unread',
      url: () => via('none', '/bomb'),
      spec: { read: 'none' },
      expect: { outcome: 'resolved', status: 503, attempts: 2, maxRssGrowthKb: 40_000 },
    },
    {
      name: 'caller abort with the body unread',
      url: () => via('none', '/stream-503'),
      spec: { downstream: { ...quick, retry: false }, abortAfterMs: 200, read: 'after-abort' },
      expect: { outcome: 'resolved', status: 503, attempts: 1, bodyErrorSet: true },
    },
    {
      name: 'caller abort during the body-hint read',
      url: () => via('none', '/slow-hint'),
      spec: { abortAfterMs: 20 },
      expect: { outcome: 'rejected', error: 'Error', attempts: 1 },
    },
  ];
}

function axiosCases(): FaultCase[] {
  return [
    ...noResponse,
    { name: 'half the body (reset after 300 bytes)', url: () => via('half-body', '/big'), expect: gaveUp },
    { name: 'chunked body that never ends', url: () => via('none', '/never-ends'), expect: gaveUp },
    ...errorBodies('axios'),
    { name: '503 JSON gzip', url: () => via('none', '/gzip'), expect: { outcome: 'rejected', status: 503, attempts: 2 } },
    { name: '503 JSON br', url: () => via('none', '/br'), expect: { outcome: 'rejected', status: 503, attempts: 2 } },
    {
      name: 'caller abort with the body unread',
      url: () => via('none', '/stream-503'),
      spec: { abortAfterMs: 200 },
      expect: { outcome: 'rejected', error: 'CanceledError', attempts: 1 },
    },
  ];
}

function middlewareCases(entry: Entry): FaultCase[] {
  // The inner call gave up: node:http and Fastify answer 503, Express' own error handler 500; all marked.
  const gaveUpInside = { outcome: 'resolved', status: entry === 'express' ? 500 : 503, exhausted: '1' } as const;
  const failedInside = { outcome: 'resolved', status: 500 } as const;
  const passedOn = { outcome: 'resolved', status: 503, exhausted: '1' } as const;
  const roomy = { inboundTimeoutMs: 8_000, downstream: { ...quick, attemptTimeoutMs: 5_000 } };
  return [
    ...noResponse.map((c) => ({ ...c, expect: gaveUpInside })),
    { name: 'half the body (reset after 300 bytes)', url: () => via('half-body', '/big'), expect: failedInside },
    { name: 'chunked body that never ends', url: () => via('none', '/never-ends'), expect: failedInside },
    // A give-up on a status: the handler gets the last response and passes its status on.
    // Room to read 10 MB within the inbound deadline on a loaded machine.
    { name: '503, 1 MB chunked', url: () => via('none', '/error?size=1000000&cl=0'), spec: roomy, expect: passedOn },
    {
      name: '503, 10 MB with Content-Length',
      url: () => via('none', '/error?size=10000000&cl=1'),
      spec: roomy,
      expect: passedOn,
    },
    { name: '503 JSON gzip', url: () => via('none', '/gzip'), expect: passedOn },
    {
      // The issue's crash: the server died when the client sent x-request-timeout-ms: 300.
      name: '503, 1 MB chunked, inbound x-request-timeout-ms 300',
      url: () => via('none', '/error?size=1000000&cl=0'),
      spec: { inboundTimeoutMs: 300 },
      // node:http and Fastify: 503 (a call inside gave up), whether the 503 was passed on or the
      // body read hit the deadline; Express answers the latter with its own 500.
      expect: entry === 'express' ? { outcome: 'resolved' } : { outcome: 'resolved', status: 503 },
    },
  ];
}

const ENTRIES: Array<{ entry: Entry; cases: () => FaultCase[] }> = [
  { entry: 'fetch', cases: fetchCases },
  { entry: 'createFetch', cases: fetchCases },
  { entry: 'axios', cases: axiosCases },
  { entry: 'node-http', cases: () => middlewareCases('node-http') },
  { entry: 'express', cases: () => middlewareCases('express') },
  { entry: 'fastify', cases: () => middlewareCases('fastify') },
];

describe('fault injection: every HTTP entry point, faults on the wire, clients in child processes', () => {
  it.concurrent.each(ENTRIES)('$entry', async ({ entry, cases: build }) => {
    const cases = build();
    const specs: ClientSpec[] = cases.map((c) => ({
      name: c.name,
      entry,
      url: c.url(),
      downstream: quick,
      inboundTimeoutMs: 1_500,
      ...c.spec,
    }));
    const run = await runClient(specs, 90_000);
    const lines = cases.map((c, i) => {
      const r = run.reports[i];
      const what =
        r === undefined
          ? 'NO REPORT'
          : `${r.outcome}${r.status === undefined ? '' : ` ${r.status}`}${r.error ? ` ${r.error}` : ''}${r.reason ? ` (${r.reason})` : ''}${r.bodyError ? `, body: ${r.bodyError}` : ''}`;
      return `  ${c.name.padEnd(52)} ${what.padEnd(48)} attempts ${r?.attempts ?? '?'}, ${String(r?.ms ?? '?').padStart(5)} ms, sockets left ${r?.sockets ?? '?'}, RSS +${r?.rssGrowthKb ?? '?'} KiB`;
    });
    console.log(
      `[figure] fault injection, ${entry}: child exit ${run.killed ? 'KILLED (hung)' : run.code} after ${run.exitMs} ms\n${lines.join('\n')}`,
    );
    expect(run.stderr).toBe('');
    expect(run.killed).toBe(false);
    expect(run.code).toBe(0);
    expect(run.reports).toHaveLength(cases.length);
    cases.forEach((c, i) => {
      const r = run.reports[i] as ClientReport;
      const { bodyErrorSet, maxRssGrowthKb, ...fields } = c.expect;
      expect({ case: c.name, ...r }).toMatchObject({ case: c.name, ...fields, sockets: 0 });
      if (bodyErrorSet) expect({ case: c.name, bodyError: r.bodyError }).toMatchObject({ bodyError: expect.any(String) });
      if (maxRssGrowthKb !== undefined) expect(r.rssGrowthKb).toBeLessThan(maxRssGrowthKb);
    });
  });
});
