import type { Clock } from '../time/clock.js';
import { redactHeaders } from './redact.js';

/**
 * Largest body of a failed response kept in memory when the attempt is retried, in bytes.
 * Reading a small error body to its end lets the connection go back to the pool (keep-alive)
 * instead of being torn down by a cancel; a larger one is cancelled.
 * @default 65_536 (64 KiB)
 */
export const DRAIN_LIMIT = 64 * 1024;

/**
 * How long the next attempt waits, in ms, for the previous attempt's failed body to finish
 * draining before it cancels it (closing that connection). The body has had the whole backoff
 * to arrive already; one that is still coming is slow, and waiting longer would spend the
 * next attempt's time on a response nobody needs.
 * @default 50
 */
export const DRAIN_WAIT_MS = 50;

/**
 * How long, in ms, an attempt may wait for a failed response's body to look for a wait hint
 * in it. A small error body comes with its headers; one that does not is not worth
 * turning a `failed` attempt into a timed-out (`unknown`) one: the hint is then skipped.
 * Never more than half of the attempt's time left.
 * @default 50
 */
export const BODY_HINT_WAIT_MS = 50;

/**
 * A failed response's body being read to its end in the background, so that its connection
 * can be reused.
 */
export interface Drain {
  /**
   * The bytes, or `undefined` when the body was too large, failed, was cancelled or taken.
   * Never rejects.
   */
  readonly bytes: Promise<Uint8Array | undefined>;
  /** True once `bytes` is known (read, dropped, cancelled or taken). */
  readonly settled: boolean;
  /** Gives up on the body (closing the connection); harmless once settled. */
  cancel(): void;
  /**
   * Stops draining and hands the body over, without waiting: all of it when it was read to
   * its end, else a stream of the bytes read so far followed by the rest; `undefined` when it
   * was dropped (too large, failed, cancelled) or already taken.
   */
  take(): Uint8Array | ReadableStream<Uint8Array> | undefined;
}

/**
 * Starts reading `response`'s body to the end when it fits in `limit` bytes (freeing the
 * connection and keeping the bytes), otherwise cancels it (the connection is closed, never
 * leaked).
 */
export function drainBody(response: Response, limit: number = DRAIN_LIMIT): Drain {
  const body = response.body;
  if (body === null) return settledDrain(new Uint8Array(0));
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = body.getReader();
  } catch {
    return settledDrain(undefined); // locked or already read elsewhere
  }
  return new BodyDrain(reader, limit);
}

function settledDrain(bytes: Uint8Array | undefined): Drain {
  let taken = false;
  return {
    bytes: Promise.resolve(bytes),
    settled: true,
    cancel: () => undefined,
    take: () => {
      if (taken) return undefined;
      taken = true;
      return bytes;
    },
  };
}

class BodyDrain implements Drain {
  readonly bytes: Promise<Uint8Array | undefined>;
  private state: 'reading' | 'read' | 'dropped' | 'taken' = 'reading';
  private chunks: Uint8Array[] = [];
  private total = 0;
  private result: Uint8Array | undefined;
  /** The read in progress; whoever takes the body over consumes its result. */
  private pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  private resolve!: (bytes: Uint8Array | undefined) => void;

  constructor(
    private readonly reader: ReadableStreamDefaultReader<Uint8Array>,
    private readonly limit: number,
  ) {
    this.bytes = new Promise((resolve) => {
      this.resolve = resolve;
    });
    void this.loop();
  }

  get settled(): boolean {
    return this.state !== 'reading';
  }

  private async loop(): Promise<void> {
    for (;;) {
      const read = this.reader.read();
      this.pending = read;
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await read;
      } catch {
        if (this.state === 'reading') this.settle('dropped', undefined);
        return;
      }
      if (this.state !== 'reading') return; // taken over (the taker replays `pending`) or cancelled
      this.pending = undefined;
      if (next.done) {
        this.settle('read', concat(this.chunks, this.total));
        return;
      }
      this.total += next.value.byteLength;
      if (this.total > this.limit) {
        this.cancel();
        return;
      }
      this.chunks.push(next.value);
    }
  }

  private settle(state: 'read' | 'dropped' | 'taken', bytes: Uint8Array | undefined): void {
    this.state = state;
    this.result = bytes;
    this.chunks = [];
    this.resolve(bytes);
  }

  cancel(): void {
    if (this.state !== 'reading') return;
    this.settle('dropped', undefined);
    this.reader.cancel().catch(() => undefined);
  }

  take(): Uint8Array | ReadableStream<Uint8Array> | undefined {
    if (this.state === 'read') {
      const bytes = this.result;
      this.state = 'taken';
      this.result = undefined;
      return bytes;
    }
    if (this.state !== 'reading') return undefined;
    const buffered = this.chunks;
    let pending = this.pending;
    const reader = this.reader;
    this.settle('taken', undefined);
    let i = 0;
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (i < buffered.length) {
            controller.enqueue(buffered[i] as Uint8Array);
            buffered[i++] = EMPTY;
            return;
          }
          const read = pending ?? reader.read();
          pending = undefined;
          const next = await read;
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
        cancel(reason) {
          return reader.cancel(reason);
        },
      },
      { highWaterMark: 0 },
    );
  }
}

const EMPTY = new Uint8Array(0);

function concat(chunks: readonly Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Bounds on {@link peekText}'s wait. */
export interface PeekLimits {
  /** Bytes read at most. */
  maxBytes: number;
  /** ms waited at most; the text is then given up (`undefined`). */
  waitMs: number;
  clock: Clock;
  /** Aborting gives the text up too. */
  signal?: AbortSignal;
}

/**
 * Reads at most `maxBytes` bytes of a copy of `response`'s body as text, leaving the original
 * readable (the copy is a `clone()`: a tee of the stream), for looking for a wait hint in an
 * error body without taking the body away from the caller. Gives up — `undefined`,
 * the copy cancelled, the original untouched — when the bytes do not arrive within `waitMs`
 * or `signal` aborts: a slow body must not hold the attempt.
 */
export function peekText(response: Response, limits: PeekLimits): Promise<string | undefined> {
  let copy: Response;
  try {
    copy = response.clone();
  } catch {
    return Promise.resolve(undefined);
  }
  const body = copy.body;
  if (body === null) return Promise.resolve('');
  const reader = body.getReader();
  const { signal } = limits;
  if (signal?.aborted || limits.waitMs <= 0) {
    reader.cancel().catch(() => undefined);
    return Promise.resolve(undefined);
  }
  let stopped = false;
  const stop = (): void => {
    stopped = true;
    reader.cancel().catch(() => undefined); // a pending read then ends as `done`
  };
  const cancelTimer = limits.clock.schedule(limits.waitMs, stop);
  signal?.addEventListener('abort', stop);
  return readText(reader, limits.maxBytes).then((text) => {
    cancelTimer();
    signal?.removeEventListener('abort', stop);
    return stopped ? undefined : text;
  });
}

async function readText(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number): Promise<string | undefined> {
  const decoder = new TextDecoder();
  let text = '';
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = limit - total;
      const part = value.byteLength > room ? value.subarray(0, room) : value;
      text += decoder.decode(part, { stream: true });
      total += part.byteLength;
      if (total >= limit) {
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } catch {
    return undefined;
  }
  return text + decoder.decode();
}

/**
 * Originals of the copies made by {@link withoutSecrets}: a copy shares its original's body
 * stream, and undici cancels an unread body when its own response is garbage-collected — the
 * copy's body would then become unusable while the copy is still held.
 */
const originals = new WeakMap<Response, Response>();

/**
 * The same response fit for an error or event: no URL (`Response.url` holds the
 * query string, and `util.inspect` of an error prints its `response` in full), no
 * `Set-Cookie` or other secret header, `Location` redacted. Status and the (shared, still
 * unread) body stream are kept, so hints can be read from it and a caller that catches the
 * error can still read the body.
 */
export function withoutSecrets(response: Response, secretParams?: readonly string[]): Response {
  const init = {
    status: response.status,
    statusText: response.statusText,
    headers: redactHeaders(response.headers, secretParams),
  };
  let copy: Response;
  try {
    copy = new Response(response.body, init);
  } catch {
    copy = new Response(null, init);
  }
  originals.set(copy, response);
  return copy;
}

/**
 * A fresh response standing in for `original`, whose body was drained into `body` (bytes, or
 * a stream of the rest) or dropped (`undefined`). Keeps status, status text, headers, URL,
 * `redirected` and `type`.
 */
export function rebuildResponse(original: Response, body: Uint8Array | ReadableStream<Uint8Array> | undefined): Response {
  const copy = new Response(body === undefined ? null : (body as BodyInit), {
    status: original.status,
    statusText: original.statusText,
    headers: original.headers,
  });
  keepIdentity(original, copy);
  return copy;
}

/**
 * Copies what `fetch` sets and `new Response` cannot onto a stand-in for `original` (own
 * properties shadowing the prototype's getters): its URL — the caller knows its own URL, and
 * fetch-compatible code reads it — whether it was redirected, and its type.
 */
export function keepIdentity(original: Response, copy: Response): void {
  Object.defineProperties(copy, {
    url: { value: original.url, enumerable: true },
    redirected: { value: original.redirected, enumerable: true },
    type: { value: original.type, enumerable: true },
  });
}
