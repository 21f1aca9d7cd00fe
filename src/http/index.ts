// kindly's HTTP integration: fetch through a downstream, idempotency keys,
// deadline and attempt headers, and server middleware for node:http, Express and Fastify.
export {
  ATTEMPT_HEADER,
  ENVOY_ATTEMPT_COUNT_HEADER,
  GRPC_PREVIOUS_ATTEMPTS_HEADER,
  readPreviousAttempts,
} from './attempt-header.js';
export { connectTimeoutFetch, type FetchFunction } from './connect-timeout.js';
export {
  DEFAULT_MAX_TIMEOUT_MS,
  formatRequestTimeout,
  GRPC_TIMEOUT_HEADER,
  type InboundBudget,
  parseGrpcTimeout,
  parseRequestTimeoutMs,
  REQUEST_TIMEOUT_HEADER,
  readInboundBudget,
} from './deadline-header.js';
export {
  BodyTimeoutError,
  HttpRequestError,
  isBodyTimeoutError,
  isHttpRequestError,
  isRequestBodyNotReplayableError,
  RequestBodyNotReplayableError,
} from './errors.js';
export { expressMiddleware } from './express.js';
export { fastifyPlugin } from './fastify.js';
export { type CreateFetchOptions, createFetch, FETCH_DEFAULTS, type FetchThroughInit, fetchThrough } from './fetch.js';
export { chooseIdempotencyKey, IDEMPOTENCY_KEY_HEADER, newIdempotencyKey } from './idempotency-key.js';
export { nodeHttpHandler } from './node-http.js';
export { type PageEnvironment, pageEnvironment, waitUntilOnline, waitUntilVisible } from './online.js';
export { type PropagateHeaders, propagatesTo } from './propagation.js';
export { DEFAULT_SECRET_QUERY_PARAMS, REDACTED, redactHeaders, redactUrl, SECRET_HEADERS } from './redact.js';
export { DEFAULT_MAX_BUFFERED_BODY, type PrepareBodyOptions, type PreparedBody, prepareBody } from './request-body.js';
export { BODY_HINT_WAIT_MS, DRAIN_LIMIT, DRAIN_WAIT_MS } from './response-body.js';
export {
  EXHAUSTED_REASONS,
  getRequestContext,
  getRequestSignal,
  type RequestContext,
  SERVER_DEFAULTS,
  type ServerContextOptions,
} from './server-context.js';
export { httpStatusError } from './status-error.js';
