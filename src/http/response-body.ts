import type { Clock } from '../time/clock.js';
import { redactHeaders } from './redact.js';

/**
 * Largest body of a failed response kept in memory when the attempt is retried, in bytes.
 * Reading a small error body to its end lets the connection go back to the pool (keep-alive)
 * instead of being torn down by a cancel. A larger one is read no further than this (plus the
 * chunk that crossed it) and held until the next attempt starts, which cancels it; a call that
 * stops before then hands it back whole.
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
 * How long a failed body too large to drain is held, in ms, in case the call stops before its
 * retry and hands it back whole; after that it is cancelled (closing the connection), and a
 * call that stops then hands back a body that fails when read. Held for the whole backoff, a
 * herd behind one `Retry-After: 60` would keep a connection (and the callee's unsent bytes) per
 * call open for a minute.
 * @default 1_000
 */
export const HELD_BODY_MS = 1_000;

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
   * The bytes, or `undefined` when the body was too large or failed (both held, see `take`),
   * was cancelled or taken. Never rejects.
   */
  readonly bytes: Promise<Uint8Array | undefined>;
  /** True once `bytes` is known (read, held, dropped, cancelled or taken). */
  readonly settled: boolean;
  /** True while the body is held unread (too large to drain, or its read failed): see `HELD_BODY_MS`. */
  readonly held: boolean;
  /**
   * Gives up on the body (closing the connection): one still being read, or one held.
   * Harmless once read, dropped or taken.
   */
  cancel(): void;
  /**
   * Stops draining and hands the body over, without waiting: all of it when it was read to
   * its end, else a stream of the bytes read so far followed by the rest — also for a body
   * held for being too large (the rest is still on the wire) or for failing (the rest is
   * that failure); `undefined` when it was cancelled or already taken.
   */
  take(): Uint8Array | ReadableStream<Uint8Array> | undefined;
}

/**
 * Starts reading `response`'s body to the end when it fits in `limit` bytes (freeing the
 * connection and keeping the bytes). A larger body is read no further than the chunk that
 * crosses `limit` and held as it is, never cancelled here: the call may still stop and hand
 * it back, and a body cut short would read as a truncated (or empty) one. Whoever planned the
 * retry `cancel`s it (closing the connection) when the retry starts.
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

/** A drain that is over already: the body was read to its end into `bytes` (or dropped: `undefined`). */
export function settledDrain(bytes: Uint8Array | undefined): Drain {
  let taken = false;
  return {
    bytes: Promise.resolve(bytes),
    settled: true,
    held: false,
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
  /** `held`: reading stopped (too large to drain, or the read failed); what was read and the stream are kept for `take`. */
  private state: 'reading' | 'read' | 'held' | 'dropped' | 'taken' = 'reading';
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

  get held(): boolean {
    return this.state === 'held';
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
        // Kept with the failed read still `pending`: a body handed back after all gives the
        // bytes read, then this failure — never a body that reads as shorter than it was.
        if (this.state === 'reading') this.hold();
        return;
      }
      if (this.state !== 'reading') return; // taken over (the taker replays `pending`) or cancelled
      this.pending = undefined;
      if (next.done) {
        this.settle('read', concat(this.chunks, this.total));
        return;
      }
      this.total += next.value.byteLength;
      this.chunks.push(next.value);
      if (this.total > this.limit) {
        // Too large to keep the connection: stop reading (memory stays bounded by the limit
        // plus this chunk) but keep what was read and the stream, in case the body is
        // handed back after all.
        this.hold();
        return;
      }
    }
  }

  /** Stops reading, keeping the body for `take`; `bytes` settles now, so a retry does not wait for it. */
  private hold(): void {
    this.state = 'held';
    this.resolve(undefined);
  }

  private settle(state: 'read' | 'dropped' | 'taken', bytes: Uint8Array | undefined): void {
    this.state = state;
    this.result = bytes;
    this.chunks = [];
    this.resolve(bytes);
  }

  cancel(): void {
    if (this.state !== 'reading' && this.state !== 'held') return;
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
    if (this.state !== 'reading' && this.state !== 'held') return undefined;
    const buffered = this.chunks;
    const pending = this.pending;
    this.settle('taken', undefined);
    return replayThenRest(buffered, pending, this.reader);
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

/** Bounds on {@link peekBody}'s wait. */
export interface PeekLimits {
  /** Bytes read at most. */
  maxBytes: number;
  /** ms waited at most; the text is then given up (`undefined`). */
  waitMs: number;
  clock: Clock;
  /** Aborting gives the text up too. */
  signal?: AbortSignal;
}

/** What {@link peekBody} found. */
export interface PeekedBody {
  /**
   * The first `maxBytes` bytes at most, as text; `undefined` when they did not arrive within
   * the wait, the signal aborted or the body failed.
   */
  text: string | undefined;
  /**
   * The whole body, when the peek read it to its end (`undefined` otherwise): a caller that
   * keeps these bytes needs no stand-in at all.
   */
  whole: Uint8Array | undefined;
  /**
   * Stands in for the response peeked at: same status, headers and URL; its body is the bytes
   * read followed by the rest, untouched (an error in the rest surfaces when it is read). Made
   * when first read: a `Response` and its body stream cost a rejected attempt more than the
   * peek itself, and a retried attempt's response is usually dropped unread.
   */
  readonly response: Response;
}

/** A {@link PeekedBody} whose stand-in is made when first asked for. */
function peeked(
  text: string | undefined,
  original: Response,
  rest: Uint8Array | ReadableStream<Uint8Array> | undefined,
  whole: Uint8Array | undefined,
): PeekedBody {
  let standIn: Response | undefined;
  return {
    text,
    whole,
    get response() {
      standIn ??= rest === undefined ? original : rebuildResponse(original, rest);
      return standIn;
    },
  };
}

/**
 * Reads the start of `response`'s body (at most `maxBytes` bytes) to look for a wait hint in
 * an error body, without taking the body away from whoever reads the response next.
 *
 * Reads the body itself, never a `clone()`: a clone is a tee, and cancelling one branch of a
 * tee waits for the other (a body over the limit then holds the attempt until it times out),
 * while a cancelled branch left behind makes Node 20's undici throw from `abortFetch` when the
 * request is later aborted. Here nothing is cancelled: when the bytes do not arrive within
 * `waitMs`, or `signal` aborts, the peek stops waiting — the read in progress is handed on to
 * the stand-in's body, which replays the bytes read and then continues with the rest. Memory
 * stays bounded by `maxBytes` plus one chunk.
 */
export function peekBody(response: Response, limits: PeekLimits): Promise<PeekedBody> {
  const body = response.body;
  if (body === null) return Promise.resolve(peeked('', response, undefined, undefined));
  const { signal } = limits;
  if (signal?.aborted || limits.waitMs <= 0 || body.locked)
    return Promise.resolve(peeked(undefined, response, undefined, undefined));
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  /** The read in progress; the stand-in's body consumes it when the peek stops before it settles. */
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  let finished = false;
  return new Promise<PeekedBody>((resolve) => {
    const finish = (ending: 'whole' | 'enough' | 'stopped'): void => {
      if (finished) return;
      finished = true;
      cancelTimer();
      signal?.removeEventListener('abort', stop);
      const bytes = ending === 'stopped' ? undefined : concat(chunks, total);
      const text = bytes === undefined ? undefined : decodeText(bytes, limits.maxBytes);
      if (ending === 'whole') resolve(peeked(text, response, bytes, bytes));
      else resolve(peeked(text, response, replayThenRest(chunks, pending, reader), undefined));
    };
    const stop = (): void => finish('stopped');
    const cancelTimer = limits.clock.schedule(limits.waitMs, stop);
    signal?.addEventListener('abort', stop);
    void (async () => {
      while (!finished) {
        const read = reader.read();
        pending = read;
        // Whoever ends up with this read (this loop or the stand-in's body) may never await
        // it: its failure (an aborted request) must not become an unhandled rejection.
        read.catch(() => undefined);
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await read;
        } catch {
          finish('stopped'); // the stand-in's body replays the failure when read
          return;
        }
        if (finished) return; // the stand-in's body replays this read
        pending = undefined;
        if (next.done) {
          finish('whole');
          return;
        }
        chunks.push(next.value);
        total += next.value.byteLength;
        if (total >= limits.maxBytes) finish('enough');
      }
    })();
  });
}

function decodeText(bytes: Uint8Array, maxBytes: number): string {
  return new TextDecoder().decode(bytes.byteLength > maxBytes ? bytes.subarray(0, maxBytes) : bytes);
}

/**
 * A body that yields `buffered`, then the read in progress (if any), then the rest of
 * `reader`'s stream. Cancelling it cancels the source.
 */
function replayThenRest(
  buffered: Uint8Array[],
  pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined,
  reader: ReadableStreamDefaultReader<Uint8Array>,
): ReadableStream<Uint8Array> {
  let i = 0;
  let inProgress = pending;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (i < buffered.length) {
          controller.enqueue(buffered[i] as Uint8Array);
          buffered[i++] = EMPTY;
          return;
        }
        const read = inProgress ?? reader.read();
        inProgress = undefined;
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
 * error can still read the body. Given `whole`, the body already read to its end, the copy
 * gets those bytes instead (a body of its own: reading it takes nothing from `response`).
 * A body already read (or being read) and no `whole`: the copy's body fails when read.
 */
export function withoutSecrets(response: Response, secretParams?: readonly string[], whole?: Uint8Array): Response {
  const init = {
    status: response.status,
    statusText: response.statusText,
    headers: redactHeaders(response.headers, secretParams),
  };
  // A body read to its end already (`whole`): the copy gets the bytes, and shares nothing.
  if (whole !== undefined) return new Response(whole as BodyInit, init);
  let copy: Response;
  try {
    copy = new Response(response.body, init);
  } catch {
    // Its body was read, or is being read, by then (say, an error's copy made when first asked
    // for, after a retry drained the body or the caller read it): the copy's body fails when
    // read, as the shared one would, rather than reading as empty.
    return new Response(
      failingBody('kindly-calls: the body of this response was already read when this copy of it was made'),
      init,
    );
  }
  originals.set(copy, response);
  return copy;
}

/**
 * The body of a failed response handed back on give-up when its drain has nothing left to
 * hand over (it was cancelled, or the body was read elsewhere first): it fails when read,
 * rather than reading as an empty body.
 */
export function lostBody(): ReadableStream<Uint8Array> {
  return failingBody(
    'kindly-calls: the body of this response was let go (cancelled, or read elsewhere) while a retry was planned, before the call stopped',
  );
}

function failingBody(message: string): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      controller.error(new TypeError(message));
    },
  });
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
  // The stand-in's body may still be reading the original's stream.
  originals.set(copy, original);
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
