/**
 * Largest body of a failed response kept in memory when the attempt is retried, in bytes.
 * Reading a small error body to its end lets the connection go back to the pool (keep-alive)
 * instead of being torn down by a cancel; a larger one is cancelled.
 * @default 65_536 (64 KiB)
 */
export const DRAIN_LIMIT = 64 * 1024;

/** A body being read to its end in the background; `cancel` gives up on it (closing the connection). */
export interface Drain {
  /** The bytes, or `undefined` when the body was too large, failed or was cancelled. Never rejects. */
  readonly bytes: Promise<Uint8Array | undefined>;
  cancel(): void;
}

/**
 * Starts reading `response`'s body to the end when it fits in `limit` bytes (freeing the
 * connection and keeping the bytes), otherwise cancels it (the connection is closed, never
 * leaked).
 */
export function drainBody(response: Response, limit: number = DRAIN_LIMIT): Drain {
  const body = response.body;
  if (body === null) return { bytes: Promise.resolve(new Uint8Array(0)), cancel: () => undefined };
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = body.getReader();
  } catch {
    return { bytes: Promise.resolve(undefined), cancel: () => undefined }; // locked or already read elsewhere
  }
  return { bytes: readAll(reader, limit), cancel: () => void reader.cancel().catch(() => undefined) };
}

async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>, limit: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        return undefined;
      }
      chunks.push(value);
    }
  } catch {
    return undefined;
  }
  if (total === 0 && chunks.length === 0) return new Uint8Array(0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * Reads at most `limit` bytes of a copy of `response`'s body as text, leaving the original
 * readable (the copy is a `clone()`: a tee of the stream). For looking for a wait hint in an
 * error body (SPEC S4) without taking the body away from the caller.
 */
export async function peekText(response: Response, limit: number): Promise<string | undefined> {
  let copy: Response;
  try {
    copy = response.clone();
  } catch {
    return undefined;
  }
  const body = copy.body;
  if (body === null) return '';
  const reader = body.getReader();
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
 * The same response without its URL, for errors and events: `Response.url` holds the query
 * string, and `util.inspect` of an error prints its `response` in full (SPEC S9). Status,
 * headers and the (shared, still unread) body stream are kept, so hints can be read from it
 * and a caller that catches the error can still read the body.
 */
export function withoutUrl(response: Response): Response {
  try {
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers: response.headers });
  } catch {
    return new Response(null, { status: response.status, statusText: response.statusText, headers: response.headers });
  }
}

/**
 * A fresh response standing in for `original`, whose body was drained into `bytes` (or
 * dropped, when `bytes` is undefined). Keeps status, status text, headers and URL.
 */
export function rebuildResponse(original: Response, bytes: Uint8Array | undefined): Response {
  const copy = new Response(bytes === undefined ? null : (bytes as BodyInit), {
    status: original.status,
    statusText: original.statusText,
    headers: original.headers,
  });
  // The caller knows its own URL; fetch-compatible code may read it (an own property on our own object).
  Object.defineProperty(copy, 'url', { value: original.url, enumerable: true });
  return copy;
}
