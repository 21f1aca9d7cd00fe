import { isKindlyError, KindlyError } from '../errors/errors.js';

/**
 * A retry was needed but the request body was a stream too large to buffer
 * (`maxBufferedBody`), already sent once, and cannot be sent again. kindly never retries with
 * a half-sent or empty body; it stops and says so. `cause` is the attempt's own error, and the
 * outcome is that attempt's outcome.
 */
export class RequestBodyNotReplayableError extends KindlyError {
  override readonly name = 'RequestBodyNotReplayableError';
  override readonly code = 'ERR_KINDLY_BODY_NOT_REPLAYABLE';
  constructor(
    /** The request, for the message: `POST https://api.example.com/upload` (redacted). */
    readonly request: string,
    /** The buffering limit the stream exceeded; `undefined` when streams are never buffered (axios). */
    readonly maxBufferedBody: number | undefined,
    details: ConstructorParameters<typeof KindlyError>[1],
  ) {
    super(
      maxBufferedBody === undefined
        ? `${request}: the request body is a stream, already sent once, so the request cannot be retried; pass a Buffer, ArrayBuffer or string body to make it retryable`
        : `${request}: the request body is a stream larger than maxBufferedBody (${maxBufferedBody} bytes), already sent once, so the request cannot be retried; pass a Blob, ArrayBuffer or string body, or raise maxBufferedBody`,
      details,
    );
  }
}

/**
 * An HTTP request failed without a response (refused, reset, timed out), as reported by a
 * client library whose own error carries the request configuration — axios' `AxiosError`
 * holds `config.headers.Authorization`. This copy keeps what is needed to understand and
 * classify the failure and nothing secret: method, redacted URL, the network `errorCode`
 * (`ECONNREFUSED`, …) and a message with the URL redacted.
 */
export class HttpRequestError extends KindlyError {
  override readonly name = 'HttpRequestError';
  override readonly code = 'ERR_KINDLY_HTTP_REQUEST';
  constructor(
    readonly method: string,
    /** Redacted. */
    readonly url: string,
    /** The library's or OS's code, e.g. `ECONNREFUSED`, `ECONNABORTED`, `ERR_NETWORK`. */
    readonly errorCode: string | undefined,
    message: string,
    details: ConstructorParameters<typeof KindlyError>[1],
  ) {
    super(`${method} ${url}: ${message}`, details);
  }
}

/**
 * The body of a response kindly handed back was not read within `bodyTimeoutMs` ms of the
 * response's arrival: reading it rejects with this error (the connection is closed). When the
 * call's deadline comes first, the read rejects with `DeadlineExceededError` instead.
 */
export class BodyTimeoutError extends KindlyError {
  override readonly name = 'BodyTimeoutError';
  override readonly code = 'ERR_KINDLY_BODY_TIMEOUT';
  constructor(
    readonly bodyTimeoutMs: number,
    details: ConstructorParameters<typeof KindlyError>[1],
  ) {
    super(`the response body was not read within bodyTimeoutMs (${bodyTimeoutMs} ms)`, details);
  }
}

export const isBodyTimeoutError = (value: unknown): value is BodyTimeoutError =>
  isKindlyError(value) && value.name === 'BodyTimeoutError';

export const isRequestBodyNotReplayableError = (value: unknown): value is RequestBodyNotReplayableError =>
  isKindlyError(value) && value.name === 'RequestBodyNotReplayableError';

export const isHttpRequestError = (value: unknown): value is HttpRequestError =>
  isKindlyError(value) && value.name === 'HttpRequestError';
