import { type HeaderSource, headerValue } from '../hints/headers.js';

/**
 * Sent on every attempt: the number of attempts made before this one (`0` on the first try,
 * `1` on the first retry). It counts *previous* attempts, like gRPC's
 * `grpc-previous-rpc-attempts`, so a server can tell a retry from a first try at a glance
 *.
 */
export const ATTEMPT_HEADER = 'x-retry-attempt';

/** gRPC (gRFC A6): the number of preceding attempts, the same meaning as `x-retry-attempt`. */
export const GRPC_PREVIOUS_ATTEMPTS_HEADER = 'grpc-previous-rpc-attempts';

/** Envoy: the attempt count *including* this one (1 on the first try). */
export const ENVOY_ATTEMPT_COUNT_HEADER = 'x-envoy-attempt-count';

/** Largest count believed; a header from outside must not produce absurd numbers. */
const MAX_COUNT = 1_000_000;

/**
 * How many attempts preceded this request, read from `x-retry-attempt`, then
 * `grpc-previous-rpc-attempts`, then `x-envoy-attempt-count` (minus one, since Envoy counts
 * this attempt too). `0` when none is present or all are malformed. Never throws.
 */
export function readPreviousAttempts(headers: HeaderSource): number {
  const own = count(headerValue(headers, ATTEMPT_HEADER));
  if (own !== undefined) return own;
  const grpc = count(headerValue(headers, GRPC_PREVIOUS_ATTEMPTS_HEADER));
  if (grpc !== undefined) return grpc;
  const envoy = count(headerValue(headers, ENVOY_ATTEMPT_COUNT_HEADER));
  if (envoy !== undefined && envoy >= 1) return envoy - 1;
  return 0;
}

function count(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (!/^\d{1,7}$/.test(text)) return undefined;
  return Math.min(Number(text), MAX_COUNT);
}
