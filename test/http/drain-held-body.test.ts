import { describe, expect, it } from 'vitest';
import type { FetchFunction } from '../../src/http/connect-timeout.js';
import { fetchThrough } from '../../src/http/index.js';
import { DRAIN_LIMIT, drainBody, HELD_BODY_MS } from '../../src/http/response-body.js';
import { downstream } from '../../src/runtime/downstream.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';
import { serverPerTest } from './support/loopback.js';
import { readAll, text, trickle } from './support/trickle.js';

const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe('drainBody — a body too large to drain is held, not cut short', () => {
  it('stops reading past the limit without cancelling; take() hands over every byte, the rest included', async () => {
    const body = trickle();
    const drain = drainBody(body.response, 4);
    body.push('12345');
    expect(await drain.bytes).toBeUndefined(); // settles at once: a retry does not wait for it
    expect(drain.settled).toBe(true);
    body.push('678');
    await ticks();
    expect(body.cancelled()).toBe(false);
    const taken = drain.take();
    body.push('9');
    body.end();
    expect(await readAll(taken)).toBe('123456789');
    expect(drain.take()).toBeUndefined(); // once
  });

  it('cancel() lets a held body go: its source is cancelled and nothing is left to take', async () => {
    const body = trickle();
    const drain = drainBody(body.response, 4);
    body.push('12345');
    await drain.bytes;
    drain.cancel();
    await ticks();
    expect(body.cancelled()).toBe(true);
    expect(drain.take()).toBeUndefined();
  });

  it('a body that fails while draining hands over the bytes read, then the failure — never a shorter body', async () => {
    const body = trickle();
    const drain = drainBody(body.response);
    body.push('partial');
    await ticks();
    body.fail(new Error('connection reset'));
    expect(await drain.bytes).toBeUndefined();
    const reader = (drain.take() as ReadableStream<Uint8Array>).getReader();
    expect(text((await reader.read()).value as Uint8Array)).toBe('partial');
    await expect(reader.read()).rejects.toThrow('connection reset');
  });
});

const serve = serverPerTest();

/** A body larger than the drain limit, whose bytes spell out their position (a truncation shows). */
const LARGE = Array.from({ length: 20_000 }, (_, i) => String(i % 10_000).padStart(10, '.')).join('');

/**
 * The platform's fetch, with each response's body passed on chunk by chunk as it is read (never
 * ahead), counting the bytes handed to the reader: `past(n)` resolves once more than `n` were.
 */
function countingFetch(): { fetch: FetchFunction; past: (n: number) => Promise<void> } {
  let delivered = 0;
  const waiting: Array<{ n: number; resolve: () => void }> = [];
  const fetchCounting: FetchFunction = async (input, init) => {
    const response = await fetch(input, init);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const next = await reader.read();
          if (next.done) {
            controller.close();
            return;
          }
          controller.enqueue(next.value);
          delivered += next.value.byteLength;
          for (const w of waiting.splice(0)) {
            if (delivered > w.n) w.resolve();
            else waiting.push(w);
          }
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  return {
    fetch: fetchCounting,
    past: (n) => (delivered > n ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ n, resolve }))),
  };
}

describe('fetchThrough — the last response keeps its whole body when the call stops after a retry was planned', () => {
  it('a 502 larger than the drain limit, then verify stops the retry: the caller reads every byte', async () => {
    expect(LARGE.length).toBeGreaterThan(DRAIN_LIMIT);
    let hits = 0;
    const server = await serve((_req, res) => {
      hits++;
      res.writeHead(502, { 'content-type': 'application/octet-stream', 'content-length': String(LARGE.length) }).end(LARGE);
    });
    const counting = countingFetch();
    const api = downstream('api', {
      retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 5, jitter: 'none' } },
      budget: false,
    });
    // A POST ending `unknown` (502) is retried only after verify. The retry is planned (the
    // body starts draining); verify answers once the drain has read past its limit, and says
    // the first attempt took effect: the call stops and hands the 502 back.
    const response = await fetchThrough(api, server.url, {
      method: 'POST',
      body: 'x',
      fetch: counting.fetch,
      verify: async () => {
        await counting.past(DRAIN_LIMIT);
        await ticks();
        return true;
      },
    });
    expect(hits).toBe(1);
    expect(response.status).toBe(502);
    const received = await response.text();
    expect(received.length).toBe(LARGE.length);
    expect(received === LARGE).toBe(true);
  });

  it('when the retry does go ahead, the held body is cancelled first: its connection is closed, not kept', async () => {
    let hits = 0;
    let firstClosed!: Promise<void>;
    const server = await serve((req, res) => {
      hits++;
      if (hits === 1) {
        firstClosed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
        res.writeHead(503, { 'content-type': 'application/octet-stream' }).end(LARGE);
      } else res.writeHead(200).end('ok');
    });
    const api = downstream('api', {
      retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 5, jitter: 'none' } },
      budget: false,
    });
    const response = await fetchThrough(api, server.url);
    expect(await response.text()).toBe('ok');
    expect(hits).toBe(2);
    // The first connection still carries the unread rest of the large body: it cannot be
    // reused, and must not be kept open either.
    await firstClosed;
  });

  it('a held body is let go after HELD_BODY_MS, retry or not: its connection closes, and a call stopping later hands back a body that fails when read', async () => {
    const clock = new VirtualClock();
    let firstClosed!: Promise<void>;
    let hits = 0;
    const server = await serve((req, res) => {
      hits++;
      firstClosed = new Promise<void>((resolve) => req.socket.once('close', () => resolve()));
      res.writeHead(502, { 'content-type': 'application/octet-stream' }).end(LARGE);
    });
    const counting = countingFetch();
    const api = downstream('api', {
      clock,
      random: new SeededRandom(9),
      retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 5, jitter: 'none' } },
      budget: false,
    });
    // A POST ending `unknown` (502) is retried only after verify, which takes its time (a slow
    // lookup): the body is held meanwhile, for HELD_BODY_MS at most.
    let answer!: (applied: boolean) => void;
    let verifying!: () => void;
    const verifyAsked = new Promise<void>((resolve) => {
      verifying = resolve;
    });
    const call = fetchThrough(api, server.url, {
      method: 'POST',
      body: 'x',
      fetch: counting.fetch,
      verify: () => {
        verifying();
        return new Promise<boolean>((resolve) => {
          answer = resolve;
        });
      },
    });
    await counting.past(DRAIN_LIMIT);
    await ticks();
    await clock.advance(5);
    await verifyAsked;
    let closed = false;
    void firstClosed.then(() => (closed = true));
    await ticks();
    expect(closed).toBe(false);
    await clock.advance(HELD_BODY_MS);
    await firstClosed;
    answer(true);
    const response = await call;
    expect(hits).toBe(1);
    expect(response.status).toBe(502);
    await expect(response.text()).rejects.toThrow(/let go/);
  });
});
