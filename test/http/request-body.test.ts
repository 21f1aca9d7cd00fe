import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_BUFFERED_BODY, prepareBody } from '../../src/http/index.js';

const text = (bytes: unknown) => new TextDecoder().decode(bytes as Uint8Array);
async function readStream(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new TextDecoder().decode(new Uint8Array(await new Response(stream).arrayBuffer()));
}

describe('prepareBody (SPEC S8.1: non-replayable bodies)', () => {
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
