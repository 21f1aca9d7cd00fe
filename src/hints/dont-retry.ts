import { type HeaderSource, headerValue } from './headers.js';
import { trimOws } from './hint-ms.js';
import { GRPC_RETRY_PUSHBACK_HEADER, isGrpcPushbackStop } from './rate-limit-fields.js';

/**
 * The header a kindly server sets on a failure it already retried: its retries,
 * budget or breaker are exhausted, so an upstream kindly client must not retry again.
 * Only the layer next to the failing dependency retries, which keeps a chain of N layers
 * at N attempts instead of Nᴸ.
 */
export const RETRY_EXHAUSTED_HEADER = 'x-retry-exhausted';

/** Envoy sets this (any value) when it rejected the request for overload; Envoy itself does not retry it. */
export const ENVOY_OVERLOADED_HEADER = 'x-envoy-overloaded';

/**
 * Did the callee say "don't retry this"? True for any of:
 * - `x-retry-exhausted: 1` (also `true`, any case, or either among a list: `1, 1`; `0`, empty or
 *   other values are not a stop);
 * - `x-envoy-overloaded` present, whatever its value;
 * - a negative `grpc-retry-pushback-ms` (gRFC A6's "do not retry").
 * Never throws.
 */
export function readDontRetry(headers: HeaderSource): boolean {
  const exhausted = headerValue(headers, RETRY_EXHAUSTED_HEADER);
  // Set by two layers (or a proxy and a layer), the field arrives as a list: `1, 1`.
  if (exhausted?.split(',').some(isStop)) return true;
  if (headerValue(headers, ENVOY_OVERLOADED_HEADER) !== undefined) return true;
  const pushback = headerValue(headers, GRPC_RETRY_PUSHBACK_HEADER);
  return pushback !== undefined && isGrpcPushbackStop(pushback);
}

function isStop(element: string): boolean {
  const text = trimOws(element).toLowerCase();
  return text === '1' || text === 'true';
}
