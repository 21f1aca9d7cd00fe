import type { Classification } from './outcome.js';
import { readProperty, readString } from './safe-read.js';

/**
 * Never reached the callee, and trying again could help: refused, DNS temporarily failing,
 * no route, connect timeout, local address exhaustion. Outcome `failed`.
 */
const FAILED_RETRYABLE: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EAI_AGAIN',
  'ENETUNREACH',
  'ENETDOWN',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

/**
 * The connection broke or timed out after the request may have been sent: the callee may
 * have processed it. Outcome `unknown`, retryable. `ERR_NETWORK` is axios' code for a
 * browser network error, which says no more than the browser did (see below).
 */
const UNKNOWN_RETRYABLE: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_NETWORK',
]);

/** Codes that are timeouts (flagged `timeout: true`: they feed the timeout ratio and the breaker). */
const TIMEOUTS: ReadonlySet<string> = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'ERR_TLS_HANDSHAKE_TIMEOUT',
]);

/** OpenSSL certificate-verification codes (Node exposes them as `code`) without a common prefix. */
const TLS_CODES: ReadonlySet<string> = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'HOSTNAME_MISMATCH',
]);
const TLS_PREFIXES = ['ERR_TLS_', 'ERR_SSL_', 'ERR_OSSL_', 'CERT_', 'UNABLE_TO_', 'ERROR_IN_CERT_'];

/**
 * What `fetch` rejects with when the network failed, per engine: Chromium, Firefox, Safari,
 * React Native / whatwg-fetch, and undici when the cause carries no known code.
 */
const FETCH_NETWORK_MESSAGES = [
  'Failed to fetch',
  'NetworkError when attempting to fetch resource.',
  'Load failed',
  'Network request failed',
  'fetch failed',
];

/** How far down `cause` / `errors` chains to look; chains in the wild are 1–3 deep. */
const MAX_DEPTH = 8;
const MAX_NODES = 32;

/**
 * Classifies a network-level failure from its `code`, looked up on the error and along its
 * `cause` chain and AggregateError `errors` (breadth-first, depth ≤ 8, cycle-safe — undici's
 * `TypeError: fetch failed` keeps the real error in `cause`; Node's happy-eyeballs connect
 * wraps one error per address in an AggregateError). The outermost known code wins.
 *
 * | code                                                       | outcome   | retryable | timeout |
 * |------------------------------------------------------------|-----------|-----------|---------|
 * | ECONNREFUSED, EAI_AGAIN, ENETUNREACH, ENETDOWN,            | `failed`  | yes       |         |
 * |   EHOSTUNREACH, EHOSTDOWN, EADDRNOTAVAIL                   |           |           |         |
 * | UND_ERR_CONNECT_TIMEOUT, ERR_SOCKET_CONNECTION_TIMEOUT,    | `failed`  | yes       | yes     |
 * |   ERR_TLS_HANDSHAKE_TIMEOUT                                |           |           |         |
 * | ECONNRESET, EPIPE, UND_ERR_SOCKET, ERR_NETWORK,            | `unknown` | yes       |         |
 * |   message "socket hang up"                                 |           |           |         |
 * | ECONNABORTED                                               | `unknown` | yes       | when its message says "timeout" (axios) |
 * | ETIMEDOUT, ESOCKETTIMEDOUT, UND_ERR_HEADERS_TIMEOUT,       | `unknown` | yes       | yes     |
 * |   UND_ERR_BODY_TIMEOUT                                     |           |           |         |
 * | ENOTFOUND (the name does not exist)                        | `failed`  | no        |         |
 * | TLS / certificate: ERR_TLS_*, ERR_SSL_*, ERR_OSSL_*,       | `failed`  | no        |         |
 * |   CERT_*, UNABLE_TO_*, DEPTH_ZERO_SELF_SIGNED_CERT, …      |           |           |         |
 *
 * A `TypeError` with a browser's network message ("Failed to fetch", "NetworkError when
 * attempting to fetch resource.", "Load failed") is `unknown` and retryable: the browser
 * hides whether the request left (and even whether it was CORS), so kindly cannot say
 * `failed`, and a retry is the only way to find out. A non-idempotent call is still protected
 * by the `unknown` outcome.
 *
 * `undefined` when nothing network-shaped is found. Never throws.
 */
export function classifyNetworkError(error: unknown): Classification | undefined {
  const queue: Array<{ node: unknown; depth: number }> = [{ node: error, depth: 0 }];
  const seen = new Set<unknown>();
  let fromMessage: Classification | undefined;
  for (let i = 0; i < queue.length && i < MAX_NODES; i++) {
    const entry = queue[i];
    if (entry === undefined) break;
    const { node, depth } = entry;
    if (node === null || typeof node !== 'object' || seen.has(node)) continue;
    seen.add(node);

    const code = readString(node, 'code');
    if (code !== undefined) {
      const classification = classifyCode(code, node);
      if (classification !== undefined) return classification;
    }
    fromMessage ??= classifyMessage(node);

    if (depth < MAX_DEPTH) {
      queue.push({ node: readProperty(node, 'cause'), depth: depth + 1 });
      const errors = readProperty(node, 'errors');
      if (isArray(errors)) {
        const count = Math.min(readLength(errors), 8);
        for (let j = 0; j < count; j++) queue.push({ node: readProperty(errors, String(j)), depth: depth + 1 });
      }
    }
  }
  return fromMessage;
}

function classifyCode(code: string, node: unknown): Classification | undefined {
  if (FAILED_RETRYABLE.has(code)) {
    return withTimeout({ outcome: 'failed', retryable: true, code }, TIMEOUTS.has(code));
  }
  if (UNKNOWN_RETRYABLE.has(code)) {
    // axios reports its own timeout as ECONNABORTED "timeout of 1000ms exceeded".
    const timeout = TIMEOUTS.has(code) || (code === 'ECONNABORTED' && /timeout/i.test(readString(node, 'message') ?? ''));
    return withTimeout({ outcome: 'unknown', retryable: true, code }, timeout);
  }
  if (code === 'ENOTFOUND') return { outcome: 'failed', retryable: false, code };
  if (TLS_CODES.has(code) || TLS_PREFIXES.some((prefix) => code.startsWith(prefix))) {
    return { outcome: 'failed', retryable: false, code };
  }
  return undefined;
}

function classifyMessage(node: unknown): Classification | undefined {
  const message = readString(node, 'message');
  if (message === undefined) return undefined;
  if (message === 'socket hang up') return { outcome: 'unknown', retryable: true };
  if (readString(node, 'name') !== 'TypeError') return undefined;
  // Chromium may add detail after "Failed to fetch"; the others are exact.
  if (FETCH_NETWORK_MESSAGES.includes(message) || message.startsWith('Failed to fetch')) {
    return { outcome: 'unknown', retryable: true };
  }
  return undefined;
}

function withTimeout(classification: Classification, timeout: boolean): Classification {
  if (timeout) classification.timeout = true;
  return classification;
}

function isArray(value: unknown): boolean {
  try {
    return Array.isArray(value);
  } catch {
    return false; // a revoked Proxy throws here
  }
}

function readLength(value: unknown): number {
  const length = readProperty(value, 'length');
  return typeof length === 'number' && Number.isInteger(length) && length > 0 ? length : 0;
}
