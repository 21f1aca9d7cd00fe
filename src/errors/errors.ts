import type { Outcome } from '../classify/outcome.js';

/**
 * Why a call ended without success. Each step of the retry decision has its
 * own reason, so a log line says which rule stopped the call.
 */
export type GiveUpReason =
  /** (1) The error is not one that retrying could fix (404, TLS error, bug in the code). */
  | 'not-retryable'
  /** (2) `unknown` outcome of a non-idempotent call without a `verify` hook. */
  | 'not-idempotent'
  /** (2) The `verify` hook said the previous attempt took effect. */
  | 'verified-applied'
  /** The callee said not to retry. */
  | 'dont-retry'
  /** (3) `maxAttempts` reached. */
  | 'max-attempts'
  /** (3) `maxElapsedMs` (or the total timeout) would be exceeded. */
  | 'max-elapsed'
  /** (3/5) The deadline would pass before the next attempt could start. */
  | 'deadline'
  /** (4) The retry budget is empty. */
  | 'budget'
  /** (4) The circuit breaker is open. */
  | 'circuit-open'
  /** (5) The callee's wait hint is longer than the time left or `maxRetryAfterMs`. */
  | 'hint-too-long'
  /**
   * The bulkhead refused the attempt (queue full, or no slot within the wait limit), or the
   * adaptive concurrency limit did.
   */
  | 'rejected';

const BRAND = Symbol.for('kindly.error');

/**
 * Base of every error kindly raises. Each carries the `outcome`, how many attempts
 * were made, the time spent, and `cause` (the underlying error, never mutated).
 */
export class KindlyError extends Error {
  override readonly name: string = 'KindlyError';
  readonly code: string = 'ERR_KINDLY';
  readonly outcome: 'failed' | 'unknown';
  readonly attempts: number;
  readonly elapsedMs: number;
  /** When the callee (or an open breaker) said when to come back, ms from now. */
  readonly retryAfterMs: number | undefined;
  /** Name of the downstream the call was for. */
  readonly downstream: string | undefined;

  constructor(
    message: string,
    details: {
      outcome: 'failed' | 'unknown';
      attempts?: number;
      elapsedMs?: number;
      retryAfterMs?: number;
      downstream?: string;
      cause?: unknown;
    },
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.outcome = details.outcome;
    this.attempts = details.attempts ?? 0;
    this.elapsedMs = details.elapsedMs ?? 0;
    this.retryAfterMs = details.retryAfterMs;
    this.downstream = details.downstream;
    (this as unknown as Record<symbol, boolean>)[BRAND] = true;
  }
}

/** The call gave up: retries ran out or a rule said stop. `cause` is the last attempt's error. */
export class GiveUpError extends KindlyError {
  override readonly name = 'GiveUpError';
  override readonly code = 'ERR_KINDLY_GIVE_UP';
  constructor(
    readonly reason: GiveUpReason,
    details: ConstructorParameters<typeof KindlyError>[1],
  ) {
    super(
      `${details.downstream ? `${details.downstream}: ` : ''}gave up after ${details.attempts ?? 0} attempt(s) in ${Math.round(details.elapsedMs ?? 0)} ms (${reason}${hintText(reason, details.retryAfterMs)})${causeText(details.cause)}`,
      details,
    );
  }
}

/** For `hint-too-long`, how long the callee asked to wait: the number the reader needs to act on. */
function hintText(reason: GiveUpReason, retryAfterMs: number | undefined): string {
  if (reason !== 'hint-too-long' || retryAfterMs === undefined || !Number.isFinite(retryAfterMs)) return '';
  return `: the callee asked to wait ${Math.ceil(retryAfterMs)} ms`;
}

/** One attempt ran past its timeout. Outcome `unknown`: the callee may still be working. */
export class AttemptTimeoutError extends KindlyError {
  override readonly name = 'AttemptTimeoutError';
  override readonly code = 'ERR_KINDLY_ATTEMPT_TIMEOUT';
  constructor(
    readonly timeoutMs: number,
    details: { attempts?: number; downstream?: string } = {},
  ) {
    super(`attempt timed out after ${timeoutMs} ms`, { outcome: 'unknown', ...details });
  }
}

/** The deadline (or total timeout) passed. Outcome `unknown` if an attempt was in flight. */
export class DeadlineExceededError extends KindlyError {
  override readonly name = 'DeadlineExceededError';
  override readonly code = 'ERR_KINDLY_DEADLINE';
  constructor(details: ConstructorParameters<typeof KindlyError>[1]) {
    super('deadline exceeded', details);
  }
}

/** The circuit breaker is open; the call never reached the callee. */
export class CircuitOpenError extends KindlyError {
  override readonly name = 'CircuitOpenError';
  override readonly code = 'ERR_KINDLY_CIRCUIT_OPEN';
  constructor(details: Omit<ConstructorParameters<typeof KindlyError>[1], 'outcome'>) {
    super(`circuit open${details.retryAfterMs === undefined ? '' : `, retry in ${Math.ceil(details.retryAfterMs)} ms`}`, {
      outcome: 'failed',
      ...details,
    });
  }
}

/** The bulkhead is full (or its queue wait timed out); the call never reached the callee. */
export class BulkheadRejectedError extends KindlyError {
  override readonly name = 'BulkheadRejectedError';
  override readonly code = 'ERR_KINDLY_BULKHEAD_FULL';
  constructor(
    readonly why: 'queue-full' | 'queue-timeout',
    details: Omit<ConstructorParameters<typeof KindlyError>[1], 'outcome'> = {},
  ) {
    super(why === 'queue-full' ? 'bulkhead full' : 'timed out waiting for a bulkhead slot', {
      outcome: 'failed',
      ...details,
    });
  }
}

/** The adaptive concurrency limit was reached; the call never reached the callee. */
export class ConcurrencyLimitError extends KindlyError {
  override readonly name = 'ConcurrencyLimitError';
  override readonly code = 'ERR_KINDLY_CONCURRENCY_LIMIT';
  constructor(
    /** The learned limit when the attempt was refused. */
    readonly limit: number,
    /** Refused at once, or after waiting in the limit's queue (`concurrency.maxQueue`). */
    readonly why: 'at-limit' | 'queue-full' | 'queue-timeout' = 'at-limit',
    details: Omit<ConstructorParameters<typeof KindlyError>[1], 'outcome'> = {},
  ) {
    super(
      why === 'queue-timeout'
        ? `timed out waiting for a slot of the adaptive concurrency limit (${limit})`
        : `adaptive concurrency limit reached (${limit} attempts in flight)`,
      { outcome: 'failed', ...details },
    );
  }
}

/** A value returned by `fetch` or an adapter for a response whose status counts as failure. */
export class HttpStatusError extends KindlyError {
  override readonly name = 'HttpStatusError';
  override readonly code = 'ERR_KINDLY_HTTP_STATUS';
  constructor(
    readonly status: number,
    details: ConstructorParameters<typeof KindlyError>[1] & { response?: unknown },
  ) {
    super(`HTTP ${status}`, details);
    this.response = details.response;
  }
  readonly response: unknown;

  /**
   * `util.inspect`: a response made when first read (`fetchThrough`'s retried attempts) is
   * made first, so that the error prints as one given its response at once does.
   */
  [Symbol.for('nodejs.util.inspect.custom')](): this {
    void this.response;
    return this;
  }
}

function causeText(cause: unknown): string {
  if (cause instanceof Error) return `: ${cause.message}`;
  if (cause === undefined) return '';
  return `: ${String(cause)}`;
}

function brandedAs<T extends KindlyError>(name: string) {
  return (value: unknown): value is T =>
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true &&
    (name === 'KindlyError' || (value as { name?: unknown }).name === name);
}

/** Brand checks that survive two copies of kindly in one process (unlike `instanceof`). */
export const isKindlyError = brandedAs<KindlyError>('KindlyError');
export const isGiveUpError = brandedAs<GiveUpError>('GiveUpError');
export const isAttemptTimeoutError = brandedAs<AttemptTimeoutError>('AttemptTimeoutError');
export const isDeadlineExceededError = brandedAs<DeadlineExceededError>('DeadlineExceededError');
export const isCircuitOpenError = brandedAs<CircuitOpenError>('CircuitOpenError');
export const isBulkheadRejectedError = brandedAs<BulkheadRejectedError>('BulkheadRejectedError');
export const isConcurrencyLimitError = brandedAs<ConcurrencyLimitError>('ConcurrencyLimitError');
export const isHttpStatusError = brandedAs<HttpStatusError>('HttpStatusError');

/** Outcome of any error: kindly's own carry it; others are read by the classifier. */
export type ErrorOutcome = Exclude<Outcome, 'ok'>;
