import type { HttpStatusError } from './errors.js';

/**
 * What stands for the `response` of an `HttpStatusError` that is made when first read: the
 * function that makes it, and the headers the classifier reads meanwhile. Kept here, not on
 * the error: the headers are the response's own, secrets included, and nothing reachable from
 * the error (`util.inspect` with `showHidden` prints every property) may hold them.
 */
interface Pending {
  make: () => unknown;
  headers: unknown;
}

const pending = new WeakMap<object, Pending>();

/**
 * Gives `error` a `response` made by `make` when first read, then kept (an own, enumerable,
 * writable property from then on, as a response given to the constructor is). A rejected
 * attempt that is retried is rarely looked at, and on Node 20 a `Response` with a body costs
 * it ~40–60 µs: more than everything else kindly does for that attempt. `headers`: the
 * response's headers, for `pendingHeaders` (the classifier reads wait hints and don't-retry
 * markers from them, which the made response carries unchanged).
 */
export function makeResponseWhenRead(error: HttpStatusError, make: () => unknown, headers: unknown): void {
  pending.set(error, { make, headers });
  Object.defineProperty(error, 'response', {
    configurable: true,
    enumerable: true,
    get(this: HttpStatusError): unknown {
      const entry = pending.get(this);
      pending.delete(this);
      return keep(this, entry === undefined ? undefined : entry.make());
    },
    set(this: HttpStatusError, value: unknown) {
      pending.delete(this);
      keep(this, value);
    },
  });
}

function keep(error: HttpStatusError, value: unknown): unknown {
  Object.defineProperty(error, 'response', { configurable: true, enumerable: true, writable: true, value });
  return value;
}

/** The headers of `error`'s response while it is still to be made; `undefined` once made (or never deferred). */
export function pendingHeaders(error: object): unknown {
  return pending.get(error)?.headers;
}

/** Whether `error`'s response is still to be made (reading `response` would make it). */
export function isResponsePending(error: object): boolean {
  return pending.has(error);
}
