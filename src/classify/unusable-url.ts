import type { Classification } from './outcome.js';
import { readProperty, readString } from './safe-read.js';

/**
 * Codes of errors about the URL itself: no retry can fix it. Node's `new URL()` and
 * `http.request` codes, and axios' code for an unsupported protocol (a 4xx response also
 * carries `ERR_BAD_REQUEST`, but its status is read first).
 */
const URL_CODES: ReadonlySet<string> = new Set(['ERR_INVALID_URL', 'ERR_INVALID_URL_SCHEME', 'ERR_INVALID_PROTOCOL']);

/**
 * What undici's `fetch` puts in the `cause` of its `TypeError: fetch failed` when the URL
 * can never be fetched: a scheme it does not speak (`ftp:`, `ws:`), a port on the Fetch
 * standard's "bad port" list (`:1`, `:6000`, `:10080`, …), `file:` URLs; and axios' message
 * for an unsupported protocol.
 */
const URL_MESSAGES = ['unknown scheme', 'bad port', 'not implemented... yet...'];
const URL_MESSAGE_PREFIXES = ['Unsupported protocol '];

const MAX_DEPTH = 4;

/**
 * `failed`, not retryable, when the error (or its `cause`, up to 4 levels) says the URL can
 * never be fetched: invalid, an unsupported scheme, a forbidden port. Such a request never
 * leaves the process, so retrying it only spends attempts and budget. `undefined` otherwise.
 * Never throws.
 */
export function classifyUnusableUrl(error: unknown): Classification | undefined {
  let node = error;
  for (let depth = 0; depth <= MAX_DEPTH && node !== null && typeof node === 'object'; depth++) {
    const code = readString(node, 'code');
    const message = readString(node, 'message');
    if (
      (code !== undefined && URL_CODES.has(code)) ||
      (message !== undefined &&
        (URL_MESSAGES.includes(message) || URL_MESSAGE_PREFIXES.some((prefix) => message.startsWith(prefix))))
    ) {
      return { outcome: 'failed', retryable: false };
    }
    node = readProperty(node, 'cause');
  }
  return undefined;
}
