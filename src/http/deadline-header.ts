import { type HeaderSource, headerValue } from '../hints/headers.js';

/**
 * The remaining budget of the caller, in whole milliseconds relative to when the request
 * was sent. Relative, so clock skew between hosts does not matter; the time the
 * request spends in flight is simply not counted, which errs on the generous side by one
 * network transit.
 */
export const REQUEST_TIMEOUT_HEADER = 'x-request-timeout-ms';

/** gRPC's deadline header (`TimeoutValue TimeoutUnit`), accepted on the way in. */
export const GRPC_TIMEOUT_HEADER = 'grpc-timeout';

/**
 * Server-side ceiling on the budget a request can ask for, in ms: a deadline header can
 * shorten the work a request may cause, never lengthen it past this.
 * @default 30_000
 */
export const DEFAULT_MAX_TIMEOUT_MS = 30_000;

/** ms per gRPC TimeoutUnit: Hours, Minutes, Seconds, milliseconds, microseconds, nanoseconds. */
const GRPC_UNITS: Readonly<Record<string, number>> = Object.freeze({
  H: 3_600_000,
  M: 60_000,
  S: 1_000,
  m: 1,
  u: 1e-3,
  n: 1e-6,
});

/**
 * `x-request-timeout-ms` as sent by a client: a non-negative decimal number of ms (digits,
 * optionally a fraction: `250`, `99.5`), optional surrounding whitespace. Anything else —
 * signs, exponents, hex, empty, `Infinity`, more than 15 significant digits — is garbage and
 * yields `undefined`. The result is finite and ≥ 0, rounded down to a whole ms.
 */
export function parseRequestTimeoutMs(value: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!/^\d{1,15}(\.\d{1,9})?$/.test(text)) return undefined;
  return Math.floor(Number(text));
}

/**
 * `grpc-timeout` (gRPC over HTTP/2 spec: `TimeoutValue` is 1–8 ASCII digits, `TimeoutUnit` one
 * of `H M S m u n`), in ms, rounded down: `100m` ⇒ 100, `2S` ⇒ 2000, `1H` ⇒ 3 600 000,
 * `1500u` ⇒ 1. `undefined` for anything that does not match exactly.
 */
export function parseGrpcTimeout(value: string): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{1,8})([HMSmun])$/.exec(value.trim());
  if (match === null) return undefined;
  const unit = GRPC_UNITS[match[2] as string] as number;
  return Math.floor(Number(match[1]) * unit);
}

/** What an inbound request asked for, and what the server grants. */
export interface InboundBudget {
  /** The budget granted, in ms: min(requested, `maxTimeoutMs`), or `maxTimeoutMs` when none was usable. */
  timeoutMs: number;
  /** The budget the client sent, when a header parsed; before clamping. */
  requestedMs: number | undefined;
  /** Which header it came from. */
  source: typeof REQUEST_TIMEOUT_HEADER | typeof GRPC_TIMEOUT_HEADER | undefined;
}

/**
 * Reads the caller's budget from request headers — untrusted input, so: `x-request-timeout-ms`
 * and `grpc-timeout` are both read, and the smaller usable one wins (each is a deadline; the
 * tighter one binds); a garbage, negative or missing value is ignored; the result never
 * exceeds `maxTimeoutMs`, so no header can extend work beyond the server's own limit.
 * A budget of 0 means the caller's deadline has already passed. Never throws.
 */
export function readInboundBudget(headers: HeaderSource, maxTimeoutMs: number = DEFAULT_MAX_TIMEOUT_MS): InboundBudget {
  let requestedMs: number | undefined;
  let source: InboundBudget['source'];
  const kindly = headerValue(headers, REQUEST_TIMEOUT_HEADER);
  const fromKindly = kindly === undefined ? undefined : parseRequestTimeoutMs(kindly);
  if (fromKindly !== undefined) {
    requestedMs = fromKindly;
    source = REQUEST_TIMEOUT_HEADER;
  }
  const grpc = headerValue(headers, GRPC_TIMEOUT_HEADER);
  const fromGrpc = grpc === undefined ? undefined : parseGrpcTimeout(grpc);
  if (fromGrpc !== undefined && (requestedMs === undefined || fromGrpc < requestedMs)) {
    requestedMs = fromGrpc;
    source = GRPC_TIMEOUT_HEADER;
  }
  const timeoutMs = requestedMs === undefined ? maxTimeoutMs : Math.min(requestedMs, maxTimeoutMs);
  return { timeoutMs, requestedMs, source };
}

/**
 * The value to send in `x-request-timeout-ms` for `remainingMs` left: rounded down (a client
 * must never promise more time than it has), never negative.
 */
export function formatRequestTimeout(remainingMs: number): string {
  if (!(remainingMs > 0)) return '0';
  return String(Math.floor(Math.min(remainingMs, Number.MAX_SAFE_INTEGER)));
}
