/** Body bytes and text, as the drain tests read them. */
export const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);
export const text = (data: Uint8Array): string => new TextDecoder().decode(data);

/**
 * A failed response whose body arrives chunk by chunk when `push` is called, and ends on `end`
 * (or fails on `fail`); `cancelled()` tells whether its reader let it go.
 */
export function trickle(init: ResponseInit = { status: 503, headers: { 'content-type': 'application/json' } }) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let cancelled = false;
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
    },
    cancel() {
      cancelled = true;
    },
  });
  return {
    response: new Response(stream, init),
    push: (chunk: string) => controller.enqueue(bytes(chunk)),
    end: () => controller.close(),
    fail: (error: Error) => controller.error(error),
    cancelled: () => cancelled,
  };
}

/** Everything a drain handed over, as text (`undefined` when it handed over nothing). */
export async function readAll(body: Uint8Array | ReadableStream<Uint8Array> | undefined): Promise<string | undefined> {
  if (body === undefined) return undefined;
  if (body instanceof Uint8Array) return text(body);
  return text(new Uint8Array(await new Response(body).arrayBuffer()));
}
