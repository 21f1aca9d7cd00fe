import { Metadata } from '@grpc/grpc-js';
import { readHeaders, readProperty, readString } from '../classify/safe-read.js';
import { GRPC_STATUS } from './status.js';
import { GrpcStatusError } from './status-error.js';

/*
 * Faults injected by kindly-calls/chaos, as a gRPC caller would meet the real ones.
 *
 * Chaos takes the place of an attempt below grpc-js and throws neutral faults (an
 * `HttpStatusError` for a status, a `ChaosFaultError` for a network failure, both marked
 * `chaos: true`; see src/chaos/fault.ts). Handed to the caller as they are, they would end
 * the call UNKNOWN, a status no real outage gives, and a test of the caller's handling of
 * UNAVAILABLE would pass without exercising it. So the interceptor translates them into the
 * status grpc-js reports for the real fault. They are recognised by shape, not by class,
 * so that a second copy of kindly (its CJS build beside the ESM one) is understood too.
 */

/**
 * An injected status as grpc-js reports an HTTP answer that carries no gRPC status (a proxy's
 * or load balancer's 503): the code it maps that HTTP status to, its details, and the answer's
 * headers as the trailers (`retry-after`, `grpc-retry-pushback-ms`). `undefined` for anything
 * else.
 */
export function injectedStatusAsGrpc(error: unknown): GrpcStatusError | undefined {
  if (readProperty(error, 'chaos') !== true || readString(error, 'name') !== 'HttpStatusError') return undefined;
  const status = readProperty(error, 'status');
  if (typeof status !== 'number') return undefined;
  const headers = readProperty(readProperty(error, 'response'), 'headers');
  return new GrpcStatusError(grpcCodeOfHttpStatus(status), `Received HTTP status code ${status}`, trailersOf(headers));
}

/**
 * Any injected fault as the status its caller would get for the real one: a status as
 * {@link injectedStatusAsGrpc} says; a refused connection, a reset or a lost answer
 * UNAVAILABLE without trailers, as grpc-js reports a connection it could not make or lost
 * (details: the fault's message, which says it was injected). `undefined` for anything else.
 */
export function injectedFaultAsGrpc(error: unknown): GrpcStatusError | undefined {
  const answered = injectedStatusAsGrpc(error);
  if (answered !== undefined) return answered;
  if (readProperty(error, 'chaos') !== true || readString(error, 'name') !== 'ChaosFaultError') return undefined;
  const details = readString(error, 'message') ?? 'connection failed (injected by kindly chaos)';
  return new GrpcStatusError(GRPC_STATUS.UNAVAILABLE, details, new Metadata());
}

/** The code grpc-js gives an HTTP status that came without a gRPC status. */
function grpcCodeOfHttpStatus(status: number): number {
  switch (status) {
    case 400:
      return GRPC_STATUS.INTERNAL;
    case 401:
      return GRPC_STATUS.UNAUTHENTICATED;
    case 403:
      return GRPC_STATUS.PERMISSION_DENIED;
    case 404:
      return GRPC_STATUS.UNIMPLEMENTED;
    case 429:
    case 502:
    case 503:
    case 504:
      return GRPC_STATUS.UNAVAILABLE;
    default:
      return GRPC_STATUS.UNKNOWN;
  }
}

/**
 * The injected answer's headers (a fetch `Headers`) as grpc-js reads a trailers-only answer:
 * through `Metadata.fromHttp2Headers`, which also decodes `-bin` values.
 */
function trailersOf(headers: unknown): Metadata {
  return Metadata.fromHttp2Headers(readHeaders(headers));
}
