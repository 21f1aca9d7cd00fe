import type { Classification } from '../classify/outcome.js';
import { readDontRetry } from '../hints/dont-retry.js';
import type { HeaderSource } from '../hints/headers.js';
import { readWaitHint } from '../hints/wait-hint.js';

/**
 * gRPC status codes (the numbers are fixed by the gRPC protocol, so kindly spells them out
 * instead of loading `@grpc/grpc-js` to read them).
 */
export const GRPC_STATUS = Object.freeze({
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16,
} as const);

type Reading = Pick<Classification, 'outcome' | 'retryable' | 'timeout' | 'throttled'>;

/**
 * kindly's reading of each non-OK code. `failed` means the server did not carry the call
 * out; `unknown` that it may have.
 *
 * | code                                   | outcome   | retryable | flags       |
 * |----------------------------------------|-----------|-----------|-------------|
 * | UNAVAILABLE                            | `failed`  | yes       |             |
 * | RESOURCE_EXHAUSTED                     | `failed`  | yes       | `throttled` |
 * | ABORTED                                | `failed`  | yes       |             |
 * | DEADLINE_EXCEEDED                      | `unknown` | yes       | `timeout`   |
 * | UNKNOWN, INTERNAL                      | `unknown` | yes       |             |
 * | CANCELLED, DATA_LOSS                   | `unknown` | no        |             |
 * | every other code (client errors)       | `failed`  | no        |             |
 *
 * UNAVAILABLE is gRPC's "the service could not take the call" (connection refused, server
 * shutting down, overloaded proxy), which the gRPC retry design (gRFC A6) treats as safe to
 * retry; DEADLINE_EXCEEDED may arrive after the server did the work, like an HTTP 504.
 */
const READINGS: ReadonlyMap<number, Reading> = new Map<number, Reading>([
  [GRPC_STATUS.UNAVAILABLE, { outcome: 'failed', retryable: true }],
  [GRPC_STATUS.RESOURCE_EXHAUSTED, { outcome: 'failed', retryable: true, throttled: true }],
  [GRPC_STATUS.ABORTED, { outcome: 'failed', retryable: true }],
  [GRPC_STATUS.DEADLINE_EXCEEDED, { outcome: 'unknown', retryable: true, timeout: true }],
  [GRPC_STATUS.UNKNOWN, { outcome: 'unknown', retryable: true }],
  [GRPC_STATUS.INTERNAL, { outcome: 'unknown', retryable: true }],
  [GRPC_STATUS.CANCELLED, { outcome: 'unknown', retryable: false }],
  [GRPC_STATUS.DATA_LOSS, { outcome: 'unknown', retryable: false }],
]);

const CLIENT_ERROR: Reading = { outcome: 'failed', retryable: false };

export interface ClassifyGrpcStatusOptions {
  /** Codes worth retrying; replaces the default set (UNAVAILABLE, RESOURCE_EXHAUSTED, ABORTED, DEADLINE_EXCEEDED, UNKNOWN, INTERNAL). */
  retryableCodes?: readonly number[];
}

/**
 * Classifies a non-OK gRPC status, reading the trailers for hints:
 * `grpc-retry-pushback-ms` (a wait, or "don't retry" when negative), `retry-after`,
 * `x-retry-exhausted` and the other don't-retry markers. `undefined` for OK or a value that
 * is not a status code (0–16). Never throws: trailers come from the network.
 */
export function classifyGrpcStatus(
  code: number,
  trailers: HeaderSource,
  nowMs: number,
  options?: ClassifyGrpcStatusOptions,
): Classification | undefined {
  if (!Number.isInteger(code) || code <= 0 || code > 16) return undefined;
  const reading = READINGS.get(code) ?? CLIENT_ERROR;
  const retryable = options?.retryableCodes === undefined ? reading.retryable : options.retryableCodes.includes(code);
  const classification: Classification = { outcome: reading.outcome, retryable, code: grpcCodeName(code) };
  if (reading.timeout) classification.timeout = true;
  if (reading.throttled) classification.throttled = true;
  const hint = readWaitHint(trailers, nowMs);
  if (hint !== undefined) {
    classification.hintMs = hint.ms;
    classification.hintSource = hint.source;
    // A server that says when to come back is pacing us, whatever the code.
    classification.throttled = true;
  }
  if (readDontRetry(trailers)) classification.dontRetry = true;
  return classification;
}

const NAMES: ReadonlyMap<number, string> = new Map(Object.entries(GRPC_STATUS).map(([name, code]) => [code, name]));

/** `UNAVAILABLE` for 14, …; `CODE_<n>` for a number outside the protocol. */
export function grpcCodeName(code: number): string {
  return NAMES.get(code) ?? `CODE_${code}`;
}
