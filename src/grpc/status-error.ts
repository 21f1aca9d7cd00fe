import type { Metadata } from '@grpc/grpc-js';
import { grpcCodeName } from './status.js';

/**
 * One gRPC attempt that ended with a non-OK status. It is what `classify` sees for the
 * attempt and the `cause` of the `GiveUpError` when the call gives up; the caller itself
 * receives the status (code, details, trailers) the way grpc-js reports any status.
 */
export class GrpcStatusError extends Error {
  override readonly name = 'GrpcStatusError';
  /** The code's name, `UNAVAILABLE`, as Node errors carry a string `code`. */
  readonly code: string;
  constructor(
    /** The gRPC status code (`GRPC_STATUS`). */
    readonly grpcCode: number,
    readonly details: string,
    /** The trailers that came with the status. */
    readonly metadata: Metadata,
  ) {
    super(`${grpcCodeName(grpcCode)}: ${details}`);
    this.code = grpcCodeName(grpcCode);
  }
}
