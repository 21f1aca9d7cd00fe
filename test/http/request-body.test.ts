import { getEventListeners } from 'node:events';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BUFFERED_BODY, prepareBody } from '../../src/http/index.js';
import { isDeadlineExceededError } from '../../src/index.js';
import { VirtualClock } from '../../src/testing/index.js';

const text = (bytes: unknown) => new TextDecoder().decode(bytes as Uint8Array);
async function readStream(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new TextDecoder().decode(new Uint8Array(await new Response(stream).arrayBuffer()));
}

describe('prepareBody (non-replayable bodies)', () => {
  it('pins the buffering limit: 1 MiB', () => {
    expect(DEFAULT_MAX_BUFFERED_BODY).toBe(1_048_576);
  });

  it('replayable bodies pass through untouched', async () => {
    const blob = new Blob(['b']);
    const form = new FormData();
    for (const body of [
      undefined,
      null,
      'text',
      new Uint8Array([1]),
      new ArrayBuffer(2),
      blob,
      form,
      new URLSearchParams('a=1'),
    ]) {
      const prepared = await prepareBody(body);
      expect(prepared.replayable).toBe(true);
      expect(prepared.body).toBe(body);
    }
  });

  it('streams and async iterables within the limit become one byte array', async () => {
    const web = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode('he'));
        c.enqueue(new TextEncoder().encode('llo'));
        c.close();
      },
    });
    expect(text((await prepareBody(web)).body)).toBe('hello');
    expect(text((await prepareBody(Readable.from(['a', Buffer.from('b'), 'c']))).body)).toBe('abc');
    async function* generate() {
      yield 'x';
      yield new Uint8Array([121]);
    }
    expect(text((await prepareBody(generate())).body)).toBe('xy');
  });

  it('a stream over the limit comes back one-shot, with every byte, in order', async () => {
    const prepared = await prepareBody(Readable.from(['aaaa', 'bbbb', 'cccc', 'dddd']), 6);
    expect(prepared.replayable).toBe(false);
    expect(await readStream(prepared.body as ReadableStream<Uint8Array>)).toBe('aaaabbbbccccdddd');
  });

  it('property: for any chunking and limit, the bytes sent equal the bytes given', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ maxLength: 20 }), { maxLength: 12 }),
        fc.integer({ min: 0, max: 120 }),
        async (chunks, limit) => {
          const prepared = await prepareBody(Readable.from(chunks.filter((c) => c.length > 0)), limit);
          const sent = prepared.replayable ? text(prepared.body ?? new Uint8Array(0)) : await readStream(prepared.body);
          expect(sent).toBe(chunks.join(''));
          expect(prepared.replayable).toBe(new TextEncoder().encode(chunks.join('')).byteLength <= limit);
        },
      ),
    );
  });
});

describe('prepareBody — bounded (regression: a stream that never ends cannot hold the call)', () => {
  /** A source that yields one chunk, then waits forever; records its cancellation. */
  function endless() {
    const seen: { cancelled: unknown } = { cancelled: 'no' };
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('a'));
      },
      cancel(reason) {
        seen.cancelled = reason;
      },
    });
    return { stream, seen };
  }

  it('rejects with the abort reason, and cancels the source with it', async () => {
    const { stream, seen } = endless();
    const controller = new AbortController();
    const pending = prepareBody(stream, 1024, { signal: controller.signal });
    const reason = new Error('caller left');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    expect(seen.cancelled).toBe(reason);
    const aborted = endless();
    await expect(prepareBody(aborted.stream, 1024, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
  });

  it('rejects with DeadlineExceededError (outcome failed) when the deadline passes on the virtual clock', async () => {
    const clock = new VirtualClock({ startMs: 1_000 });
    const { stream, seen } = endless();
    const pending = prepareBody(stream, 1024, { deadline: 1_300, clock, downstream: 'uploads' });
    const outcome = pending.catch((e: unknown) => e);
    await clock.advance(299);
    expect(seen.cancelled).toBe('no');
    await clock.advance(1);
    const error = await outcome;
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(isDeadlineExceededError(error) && error.outcome).toBe('failed');
    expect(isDeadlineExceededError(error) && error.downstream).toBe('uploads');
    expect(seen.cancelled).toBe(error);
  });

  it('a stream that ends in time is unaffected, and leaves no timer or listener behind', async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const prepared = await prepareBody(Readable.from(['ok']), 1024, { signal: controller.signal, deadline: 50, clock });
    expect(text(prepared.body)).toBe('ok');
    expect(clock.nextAt()).toBeUndefined();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('property: stopped at any point of any stream, it rejects with the reason and cancels the source', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ minLength: 1, maxLength: 5 }), { maxLength: 6 }),
        fc.nat(40),
        async (chunks, stopAt) => {
          const clock = new VirtualClock();
          let cancelled = false;
          const source = new ReadableStream<Uint8Array>({
            async pull(c) {
              const chunk = chunks.shift();
              if (chunk !== undefined) {
                await clock.sleep(10);
                c.enqueue(new TextEncoder().encode(chunk));
              } // then never ends
            },
            cancel() {
              cancelled = true;
            },
          });
          const outcome = prepareBody(source, 1_000, { deadline: stopAt, clock }).catch((e: unknown) => e);
          await clock.advance(1_000);
          expect(isDeadlineExceededError(await outcome)).toBe(true);
          expect(cancelled).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });
});
