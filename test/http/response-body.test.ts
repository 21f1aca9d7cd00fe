import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DRAIN_LIMIT, drainBody, peekBody, withoutSecrets } from '../../src/http/response-body.js';
import { VirtualClock } from '../../src/testing/index.js';
import { readAll, text, trickle } from './support/trickle.js';

const ticks = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

describe('drainBody — take() (regression: the give-up path never waits on a body)', () => {
  it('pins the drain limit: 64 KiB', () => {
    expect(DRAIN_LIMIT).toBe(65_536);
  });

  it('a body read to its end is handed over whole', async () => {
    const body = trickle();
    const drain = drainBody(body.response);
    body.push('{"a":');
    body.push('1}');
    body.end();
    expect(text((await drain.bytes) as Uint8Array)).toBe('{"a":1}');
    expect(drain.settled).toBe(true);
    expect(await readAll(drain.take())).toBe('{"a":1}');
    expect(drain.take()).toBeUndefined(); // once
  });

  it('a body still arriving is handed over at once: what was read, then the rest', async () => {
    const body = trickle();
    const drain = drainBody(body.response);
    body.push('first ');
    await ticks();
    expect(drain.settled).toBe(false);
    const rest = drain.take();
    expect(rest).toBeInstanceOf(ReadableStream);
    expect(await drain.bytes).toBeUndefined();
    body.push('second ');
    body.push('third');
    body.end();
    expect(await readAll(rest)).toBe('first second third');
  });

  it('cancel drops the body and cancels its source (a body over the limit: see drain-held-body.test.ts)', async () => {
    const slow = trickle();
    const drain = drainBody(slow.response);
    drain.cancel();
    expect(await drain.bytes).toBeUndefined();
    await ticks();
    expect(slow.cancelled()).toBe(true);
    expect(drain.take()).toBeUndefined();
  });

  it('property: for any chunks and any moment of taking over, the bytes handed over are the body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.string({ minLength: 1, maxLength: 8 }), { maxLength: 8 }), fc.nat(), async (chunks, at) => {
        const body = trickle();
        const drain = drainBody(body.response);
        const takeAt = at % (chunks.length + 2);
        let taken: Uint8Array | ReadableStream<Uint8Array> | undefined;
        for (let i = 0; i <= chunks.length; i++) {
          if (i === takeAt) taken = drain.take();
          if (i < chunks.length) body.push(chunks[i] as string);
          else body.end();
          await ticks(1);
        }
        if (takeAt > chunks.length) {
          await drain.bytes;
          taken = drain.take();
        }
        expect(await readAll(taken)).toBe(chunks.join(''));
      }),
      { numRuns: 60 },
    );
  });
});

describe('peekBody — bounded, never a tee (regression)', () => {
  it('gives up after waitMs on the virtual clock; the stand-in body is the whole body, nothing cancelled', async () => {
    const clock = new VirtualClock();
    const body = trickle();
    body.push('{"retry_after":');
    const peeked = peekBody(body.response, { maxBytes: 1024, waitMs: 50, clock });
    let result: { text: string | undefined; response: Response } | 'pending' = 'pending';
    void peeked.then((value) => {
      result = value;
    });
    await clock.advance(49);
    expect(result).toBe('pending');
    await clock.advance(1);
    await ticks();
    const { text: hint, response } = await peeked;
    expect(hint).toBeUndefined();
    expect(response.status).toBe(503);
    body.push('5}');
    body.end();
    expect(await response.text()).toBe('{"retry_after":5}');
    expect(body.cancelled()).toBe(false);
  });

  it('reads a body that arrives in time (handed on whole), and gives up at once when the signal aborts', async () => {
    const clock = new VirtualClock();
    const quick = new Response('{"retry_after":5}');
    const read = await peekBody(quick, { maxBytes: 1024, waitMs: 50, clock });
    expect(read.text).toBe('{"retry_after":5}');
    expect(await read.response.text()).toBe('{"retry_after":5}');

    const stalled = trickle();
    const controller = new AbortController();
    const peeked = peekBody(stalled.response, { maxBytes: 1024, waitMs: 50, clock, signal: controller.signal });
    controller.abort(new Error('attempt over'));
    expect((await peeked).text).toBeUndefined();
  });

  it('a body longer than maxBytes that never ends: the peek returns the first maxBytes at once, the rest follows', async () => {
    const clock = new VirtualClock();
    const body = trickle();
    body.push('a'.repeat(700));
    body.push('b'.repeat(700));
    const peeked = await peekBody(body.response, { maxBytes: 1024, waitMs: 50, clock });
    expect(peeked.text).toBe(`${'a'.repeat(700)}${'b'.repeat(324)}`);
    body.push('c');
    body.end();
    expect(await peeked.response.text()).toBe(`${'a'.repeat(700)}${'b'.repeat(700)}c`);
  });

  it('a body that fails after the peek stopped: the failure surfaces when the stand-in is read, never unhandled', async () => {
    const clock = new VirtualClock();
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        controller = c;
      },
    });
    const peeked = peekBody(new Response(stream), { maxBytes: 1024, waitMs: 50, clock });
    await clock.advance(50);
    const { response } = await peeked;
    controller.error(new Error('connection reset'));
    await expect(response.text()).rejects.toThrow('connection reset');
  });
});

describe('withoutSecrets (regression)', () => {
  it('drops Set-Cookie, redacts Location, keeps status, other headers and a readable body', async () => {
    const original = new Response('still here', {
      status: 503,
      statusText: 'Busy',
      headers: [
        ['set-cookie', 'sid=COOKIESECRET'],
        ['location', 'https://u:PASS@h/next?token=TOKENSECRET&page=2'],
        ['retry-after', '3'],
      ],
    });
    const copy = withoutSecrets(original);
    expect(copy.status).toBe(503);
    expect(copy.statusText).toBe('Busy');
    expect(copy.url).toBe('');
    expect(copy.headers.get('set-cookie')).toBeNull();
    expect(copy.headers.get('location')).toBe('https://REDACTED@h/next?token=REDACTED&page=2');
    expect(copy.headers.get('retry-after')).toBe('3');
    expect(await copy.text()).toBe('still here');
  });
});
