import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { createFetch, fetchThrough, nodeHttpHandler, propagatesTo } from '../../src/http/index.js';
import { InvalidOptionsError, runWithDeadline } from '../../src/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { VirtualClock } from '../../src/testing/index.js';
import { type Loopback, listen } from './support/loopback.js';

/**
 * Regression (issue: headers sent to every host): `x-retry-attempt` and
 * `x-request-timeout-ms` reach only services that take part — by default, calls made inside a
 * deadline scope; otherwise the hosts named in `propagateHeaders`.
 */
const servers: Loopback[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function recorder(): Promise<{ server: Loopback; seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = await listen((req, res) => {
    seen.push(req.headers);
    res.writeHead(200).end();
  });
  servers.push(server);
  return { server, seen };
}

const internal = (headers: IncomingHttpHeaders) => [headers['x-retry-attempt'], headers['x-request-timeout-ms']];

describe('internal headers reach only services that take part', () => {
  it('a call outside any deadline scope (a script calling a third-party API) sends neither header', async () => {
    const { server, seen } = await recorder();
    await fetchThrough(downstream('third-party', { attemptTimeoutMs: 9_999 }), server.url, { timeoutMs: 5_000 });
    expect(internal(seen[0]!)).toEqual([undefined, undefined]);
  });

  it('a call made while serving a request through kindly middleware sends both', async () => {
    const { server: inner, seen } = await recorder();
    const api = createFetch(downstream('inner'));
    const outer = await listen(
      nodeHttpHandler(async (_req: IncomingMessage, res: ServerResponse) => {
        await api(inner.url);
        res.writeHead(204).end();
      }),
    );
    servers.push(outer);
    await fetch(outer.url, { headers: { 'x-request-timeout-ms': '2000' } });
    expect(seen[0]!['x-retry-attempt']).toBe('0');
    expect(Number(seen[0]!['x-request-timeout-ms'])).toBeGreaterThan(0);
    expect(Number(seen[0]!['x-request-timeout-ms'])).toBeLessThanOrEqual(2_000);
  });

  it('runWithDeadline is a scope too', async () => {
    const { server, seen } = await recorder();
    await runWithDeadline({ deadline: Number.POSITIVE_INFINITY }, () => fetchThrough(downstream('scoped'), server.url));
    expect(seen[0]!['x-retry-attempt']).toBe('0');
  });

  it('regression: plain requests in a row share one plan, but not into or out of a deadline scope, nor across downstreams', async () => {
    const { server, seen } = await recorder();
    const api = downstream('in-a-row');
    const other = downstream('other');
    await fetchThrough(api, server.url);
    await fetchThrough(api, server.url);
    await runWithDeadline({ deadline: Number.POSITIVE_INFINITY }, () => fetchThrough(api, server.url));
    await fetchThrough(api, server.url);
    await fetchThrough(other, server.url);
    expect(seen.map((h) => h['x-retry-attempt'])).toEqual([undefined, undefined, '0', undefined, undefined]);
    expect(api.stats().requests).toBe(4);
    expect(other.stats().requests).toBe(1);
  });

  it('regression: requests in a row sharing a plan each count the downstream’s totalTimeoutMs from their own start', async () => {
    const { server } = await recorder();
    const clock = new VirtualClock();
    const api = downstream('timed', { clock, totalTimeoutMs: 1_000, attemptTimeoutMs: false });
    expect((await fetchThrough(api, server.url)).status).toBe(200);
    await clock.advance(5_000);
    // A deadline left over from the first request would have passed 4 s ago.
    const second = await fetchThrough(api, server.url);
    expect(second.status).toBe(200);
    expect(await second.text()).toBe('');
    expect(api.stats().requests).toBe(2);
  });

  it('{ hosts } sends them to the named hosts only, in or out of a scope', async () => {
    const { server, seen } = await recorder();
    const port = new URL(server.url).port;
    await fetchThrough(downstream('a'), server.url, { propagateHeaders: { hosts: ['127.0.0.1'] } });
    await fetchThrough(downstream('b'), server.url, { propagateHeaders: { hosts: [`127.0.0.1:${port}`] } });
    await runWithDeadline({ deadline: Number.POSITIVE_INFINITY }, () =>
      fetchThrough(downstream('c'), server.url, { propagateHeaders: { hosts: ['payments.internal'] } }),
    );
    await fetchThrough(downstream('d'), server.url, { propagateHeaders: false });
    expect(seen.map((h) => h['x-retry-attempt'])).toEqual(['0', '0', undefined, undefined]);
  });

  it('matches host names exactly, by port when one is given, and subdomains with *.', () => {
    const hosts = { hosts: ['Payments.Internal', '*.svc.cluster.local', 'api.example.com:8443'] };
    expect(propagatesTo('http://payments.internal/charge', hosts)).toBe(true);
    expect(propagatesTo('https://payments.internal:9000/charge', hosts)).toBe(true);
    expect(propagatesTo('http://payments.internal.evil.com/', hosts)).toBe(false);
    expect(propagatesTo('http://orders.ns.svc.cluster.local/', hosts)).toBe(true);
    expect(propagatesTo('http://svc.cluster.local.evil/', hosts)).toBe(false);
    expect(propagatesTo('https://api.example.com:8443/', hosts)).toBe(true);
    expect(propagatesTo('https://api.example.com/', hosts)).toBe(false);
    expect(propagatesTo('not a url', hosts)).toBe(false);
    expect(propagatesTo('https://anything/', true)).toBe(true);
    expect(propagatesTo('https://anything/', undefined)).toBe(false);
  });

  it('refuses anything but a boolean or { hosts: string[] }, naming the value', () => {
    const api = downstream('x');
    expect(() => createFetch(api, { propagateHeaders: { hosts: 'a' } as never })).toThrow(InvalidOptionsError);
    expect(() => createFetch(api, { propagateHeaders: { host: ['a'] } as never })).toThrow(
      /Expected `propagateHeaders` to be a boolean or \{ hosts: string\[\] \}.*got \{"host":\["a"\]\}/,
    );
  });
});
