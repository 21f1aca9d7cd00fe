/**
 * Methods whose repetition has the same effect as one request (RFC 9110 §9.2.2), so a retry
 * after an `unknown` outcome cannot do harm: GET, HEAD, OPTIONS, PUT, DELETE, TRACE.
 * POST and PATCH are not: they are retried after `unknown` only with an idempotency key or
 * when the caller marks the call idempotent.
 * @default ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']
 */
export const IDEMPOTENT_METHODS: readonly string[] = Object.freeze(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

/**
 * Is `method` idempotent? Case-insensitive (`get` is GET, as fetch normalises it);
 * `undefined` is GET, fetch's default. Anything that is not a string is not idempotent.
 */
export function isIdempotentMethod(method: string | undefined): boolean {
  if (method === undefined) return true;
  return typeof method === 'string' && IDEMPOTENT_METHODS.includes(method.toUpperCase());
}
