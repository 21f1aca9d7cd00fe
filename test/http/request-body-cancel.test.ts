import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { fetchThrough, prepareBody } from '../../src/http/index.js';
import { downstream } from '../../src/runtime/downstream.js';
import { type Loopback, listen } from './support/loopback.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const ticks = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise<void>((resolve) => setImmediate(resolve));
};

/** An async generator yielding `chunks` in turn, telling whether its `finally` ran (the file behind it closed). */
function generator(chunks: readonly unknown[]) {
  const seen = { finalized: false };
  async function* produce() {
    try {
      for (const chunk of chunks) yield chunk;
    } finally {
      seen.finalized = true;
    }
  }
  return { body: produce(), seen };
}

describe('prepareBody — a source that fails is let go, never left open and locked', () => {
  it('a stream yielding a chunk that is not bytes: rejects with a TypeError, cancels the stream with it and unlocks it', async () => {
    const seen: { cancelled: unknown } = { cancelled: 'no' };
    const stream = new ReadableStream<unknown>({
      pull(c) {
        c.enqueue(42);
      },
      cancel(reason) {
        seen.cancelled = reason;
      },
    });
    const error = await prepareBody(stream).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toBe('Request body stream yielded a number; expected bytes or strings');
    expect(seen.cancelled).toBe(error);
    await ticks(); // the lock is released once the cancel has run
    expect(stream.locked).toBe(false);
  });

  it('an async generator yielding a chunk that is not bytes: rejects, and its `finally` runs', async () => {
    const { body, seen } = generator([bytes('a'), { not: 'bytes' }, bytes('never read')]);
    await expect(prepareBody(body)).rejects.toThrow('Request body stream yielded a object; expected bytes or strings');
    expect(seen.finalized).toBe(true);
  });

  it('a Node Readable in object mode yielding an object: rejects, and the Readable is destroyed', async () => {
    const readable = Readable.from([bytes('a'), { not: 'bytes' }, bytes('b')]);
    await expect(prepareBody(readable)).rejects.toThrow(TypeError);
    expect(readable.destroyed).toBe(true);
  });

  it('a stream that errors: rejects with its error, and the stream is unlocked', async () => {
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        c.error(new Error('socket reset'));
      },
    });
    await expect(prepareBody(stream)).rejects.toThrow('socket reset');
    await ticks(); // the lock is released once the cancel has run
    expect(stream.locked).toBe(false);
  });

  it('past the buffering limit, a chunk that is not bytes fails the one-shot body and lets the source go', async () => {
    const { body, seen } = generator([bytes('12345'), bytes('678'), 7, bytes('never read')]);
    const prepared = await prepareBody(body, 4);
    expect(prepared.replayable).toBe(false);
    const reader = (prepared.body as ReadableStream<Uint8Array>).getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('12345');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('678');
    await expect(reader.read()).rejects.toThrow('Request body stream yielded a number; expected bytes or strings');
    expect(seen.finalized).toBe(true);
  });
});

describe('fetchThrough — a request body that yields a chunk that is not bytes', () => {
  let server: Loopback | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('the call fails without sending anything, and the body source is let go', async () => {
    let hits = 0;
    server = await listen((_req, res) => {
      hits++;
      res.writeHead(200).end('ok');
    });
    const { body, seen } = generator([bytes('a'), { not: 'bytes' }]);
    const api = downstream('uploads', { budget: false });
    const error = await fetchThrough(api, server.url, { method: 'PUT', body: body as unknown as BodyInit }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toContain('expected bytes or strings');
    expect(seen.finalized).toBe(true);
    expect(hits).toBe(0);
  });
});
