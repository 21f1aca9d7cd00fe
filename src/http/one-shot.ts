import type { Classification } from '../classify/outcome.js';
import { RequestBodyNotReplayableError } from './errors.js';

/** What the one-shot guard needs to know about one request. */
export interface OneShotRequest {
  /** `POST https://api.example.com/upload`, redacted. */
  request: string;
  /** The buffering limit the body exceeded; `undefined` when streams are never buffered (axios). */
  maxBufferedBody: number | undefined;
  downstream: string;
}

/** The error that stops a retry a one-shot body cannot make. */
export function notReplayable(
  req: OneShotRequest,
  attempt: number,
  outcome: 'failed' | 'unknown',
  cause: unknown,
): RequestBodyNotReplayableError {
  return new RequestBodyNotReplayableError(req.request, req.maxBufferedBody, {
    outcome,
    attempts: attempt,
    downstream: req.downstream,
    cause,
  });
}

/**
 * A body that can be sent only once (a stream): when the pipeline would retry `error` — by
 * `classification`, the one it will use — stop it with `RequestBodyNotReplayableError`
 * instead of sending a half-sent or empty body again. Otherwise `error` unchanged. Shared by
 * every HTTP entry point.
 */
export function stopRetryOfOneShot(
  req: OneShotRequest,
  error: unknown,
  attempt: number,
  classification: Classification,
): unknown {
  if (!classification.retryable || classification.dontRetry) return error;
  return notReplayable(req, attempt, classification.outcome, error);
}
