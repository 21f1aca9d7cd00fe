// kindly-calls/grpc: protection for @grpc/grpc-js clients and deadline scopes for its servers.
export {
  GRPC_PREVIOUS_ATTEMPTS,
  type GrpcClientOptions,
  type GrpcKeyBy,
  grpcClientInterceptor,
  statusOf,
} from './client-interceptor.js';
export { grpcServerInterceptor } from './server-interceptor.js';
export { type ClassifyGrpcStatusOptions, classifyGrpcStatus, GRPC_STATUS, grpcCodeName } from './status.js';
export { GrpcStatusError } from './status-error.js';
