// kindly-calls/grpc: protection for @grpc/grpc-js clients and deadline scopes for its servers.
// Sent on retries (gRFC A6): how many attempts came before this one; the HTTP layer reads it too.
export { GRPC_PREVIOUS_ATTEMPTS_HEADER } from '../http/attempt-header.js';
export type { ServerContextOptions } from '../http/server-context.js';
export {
  type GrpcClientOptions,
  type GrpcKeyBy,
  grpcClientInterceptor,
  statusOf,
} from './client-interceptor.js';
export { grpcServerInterceptor } from './server-interceptor.js';
export { type ClassifyGrpcStatusOptions, classifyGrpcStatus, GRPC_STATUS, grpcCodeName } from './status.js';
export { GrpcStatusError } from './status-error.js';
