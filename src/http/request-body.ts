import { DeadlineExceededError } from '../errors/errors.js';
import type { Clock } from '../time/clock.js';
import { onAbort, type Unsubscribe } from '../time/on-abort.js';

/**
 * Largest request body kindly reads into memory to be able to send it again, in bytes.
 * Bodies that are already replayable (strings, bytes, Blob, FormData, URLSearchParams) are
 * never copied; only one-shot streams are buffered.
 * @default 1_048_576 (1 MiB)
 */
export const DEFAULT_MAX_BUFFERED_BODY = 1_048_576;

/** A request body prepared for one logical call. */
export type PreparedBody =
  /** Can be handed to `fetch` again on every attempt. */
  | { replayable: true; body: unknown }
  /**
   * A stream larger than the limit: the bytes read so far followed by the rest of the
   * original. It can be sent once.
   */
  | { replayable: false; body: ReadableStream<Uint8Array> };

/** Bounds on the buffering done by {@link prepareBody}. */
export interface PrepareBodyOptions {
  /** Aborting stops the buffering: the source is cancelled and `prepareBody` rejects with `signal.reason`. */
  signal?: AbortSignal;
  /**
   * Absolute deadline in `clock`'s monotonic ms: when it passes, the source is cancelled and
   * `prepareBody` rejects with a `DeadlineExceededError` (outcome `failed`: nothing was sent).
   */
  deadline?: number;
  /** Needed with `deadline`. */
  clock?: Clock;
  /** For the error. */
  downstream?: string;
}

/**
 * Makes `body` safe to send more than once, or says it cannot be.
 *
 * - `null`/`undefined`, strings, `ArrayBuffer`, typed arrays and `DataView`, `Blob`,
 *   `FormData`, `URLSearchParams`: replayable as they are (fetch reads them afresh each time);
 * - `ReadableStream`, async iterables (Node `Readable`, generators): read into memory up to
 *   `limit` bytes. A stream that ends within the limit becomes one `Uint8Array` (replayable);
 *   a longer one is handed back as a one-shot stream that replays the bytes already read and
 *   then the rest — nothing is lost, but it can be sent only once. The reading stops, and the
 *   source is cancelled, when `options.signal` aborts or `options.deadline` passes: a stream
 *   that never ends cannot hold the call.
 * - anything else is passed through untouched (fetch will convert or reject it).
 */
export async function prepareBody(
  body: unknown,
  limit: number = DEFAULT_MAX_BUFFERED_BODY,
  options?: PrepareBodyOptions,
): Promise<PreparedBody> {
  const asIs = preparedAsIs(body);
  if (asIs !== undefined) return asIs;
  const source = chunkSource(body) as ChunkSource;
  const stop = stopper(options);
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const next = await (stop === undefined ? source.next() : Promise.race([source.next(), stop.stopped]));
      if (next.done) break;
      const chunk = toBytes(next.value);
      chunks.push(chunk);
      total += chunk.byteLength;
      if (total > limit) return { replayable: false, body: resume(chunks, source) };
    }
  } catch (error) {
    // Whatever ended the reading (a stop, a chunk that is not bytes, the source's own
    // failure), nobody will read the source again: cancel it, so that what stands behind it
    // (a file, a socket, a generator's `finally`) is let go rather than held open and locked.
    const reason = stop?.reason !== undefined ? stop.reason.value : error;
    source.cancel(reason).catch(() => undefined);
    throw reason;
  } finally {
    stop?.dispose();
  }
  return { replayable: true, body: concat(chunks, total) };
}

/**
 * `body` as it is, when it needs no buffering (everything but streams and async iterables);
 * `undefined` when {@link prepareBody} has to read it. Synchronous, for the common case.
 */
export function preparedAsIs(body: unknown): PreparedBody | undefined {
  if (isReplayable(body) || !isChunked(body)) return { replayable: true, body };
  return undefined;
}

interface Stopper {
  /** Rejects when the signal aborts or the deadline passes (never resolves). */
  stopped: Promise<never>;
  /** Set when stopped: why (boxed, since a reason may be `undefined`). */
  reason: { value: unknown } | undefined;
  dispose(): void;
}

function stopper(options: PrepareBodyOptions | undefined): Stopper | undefined {
  const signal = options?.signal;
  const clock = options?.clock;
  const deadline = options?.deadline;
  const timed = clock !== undefined && deadline !== undefined && deadline !== Number.POSITIVE_INFINITY;
  if (signal === undefined && !timed) return undefined;
  let reject!: (reason: unknown) => void;
  const stopped = new Promise<never>((_resolve, fail) => {
    reject = fail;
  });
  stopped.catch(() => undefined); // observed through the race; never an unhandled rejection
  let cancelTimer: (() => void) | undefined;
  let unsubscribe: Unsubscribe | undefined;
  const state: Stopper = {
    stopped,
    reason: undefined,
    dispose: () => {
      cancelTimer?.();
      unsubscribe?.();
    },
  };
  const stop = (reason: unknown) => {
    if (state.reason !== undefined) return;
    state.reason = { value: reason };
    state.dispose();
    reject(reason);
  };
  const expired = () => {
    const details: ConstructorParameters<typeof DeadlineExceededError>[0] = { outcome: 'failed', attempts: 0 };
    if (options?.downstream !== undefined) details.downstream = options.downstream;
    stop(new DeadlineExceededError(details));
  };
  if (signal?.aborted) stop(signal.reason);
  else if (timed && clock.monotonic() >= deadline) expired();
  else {
    if (signal !== undefined) unsubscribe = onAbort(signal, () => stop(signal.reason));
    if (timed) cancelTimer = clock.schedule(deadline - clock.monotonic(), expired);
  }
  return state;
}

function isReplayable(body: unknown): boolean {
  if (body === null || body === undefined || typeof body === 'string') return true;
  if (typeof body !== 'object') return false;
  if (body instanceof ArrayBuffer || ArrayBuffer.isView(body)) return true;
  const g = globalThis as { Blob?: Function; FormData?: Function; URLSearchParams?: Function };
  for (const type of [g.Blob, g.FormData, g.URLSearchParams]) {
    if (typeof type === 'function' && body instanceof type) return true;
  }
  return false;
}

interface ChunkSource {
  next(): Promise<IteratorResult<unknown>>;
  cancel(reason: unknown): Promise<void>;
}

/** A stream or async iterable: read chunk by chunk. */
function isChunked(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  return (
    typeof (body as { getReader?: unknown }).getReader === 'function' ||
    typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function chunkSource(body: unknown): ChunkSource | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const stream = body as { getReader?: () => ReadableStreamDefaultReader<unknown> };
  if (typeof stream.getReader === 'function') {
    const reader = stream.getReader();
    return {
      next: () => reader.read() as Promise<IteratorResult<unknown>>,
      // The stream is over for kindly: unlocked, so its owner can see it ended and let it go.
      cancel: (reason) =>
        reader.cancel(reason).finally(() => {
          reader.releaseLock();
        }),
    };
  }
  const iterate = (body as { [Symbol.asyncIterator]?: () => AsyncIterator<unknown> })[Symbol.asyncIterator];
  if (typeof iterate === 'function') {
    const iterator = iterate.call(body);
    return {
      next: () => iterator.next(),
      cancel: async () => {
        await iterator.return?.();
      },
    };
  }
  return undefined;
}

function toBytes(chunk: unknown): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (typeof chunk === 'string') return new TextEncoder().encode(chunk);
  if (chunk instanceof ArrayBuffer) return new Uint8Array(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new TypeError(`Request body stream yielded a ${typeof chunk}; expected bytes or strings`);
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** The bytes already read, then the rest of the source, as one stream. */
function resume(buffered: Uint8Array[], source: ChunkSource): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (i < buffered.length) {
        controller.enqueue(buffered[i] as Uint8Array);
        buffered[i++] = EMPTY; // let the buffered bytes go as soon as they are sent
        return;
      }
      let chunk: Uint8Array;
      try {
        const next = await source.next();
        if (next.done) {
          controller.close();
          return;
        }
        chunk = toBytes(next.value);
      } catch (error) {
        // This stream errors now, and an errored stream is never cancelled by its reader:
        // the source would stay open behind it.
        source.cancel(error).catch(() => undefined);
        throw error;
      }
      controller.enqueue(chunk);
    },
    cancel(reason) {
      return source.cancel(reason);
    },
  });
}

const EMPTY = new Uint8Array(0);
