import { isIdempotentMethod } from '../classify/methods.js';

/** draft-ietf-httpapi-idempotency-key-header: the request header carrying the key. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';

/**
 * A fresh idempotency key: a random UUID (v4) from the platform's CSPRNG (`crypto.randomUUID`,
 * Node ≥ 19 and every browser in a secure context). Keys must be unguessable and unique per
 * logical operation; that is a job for the CSPRNG, not for the seeded jitter PRNG.
 */
export function newIdempotencyKey(): string {
  const crypto = (globalThis as { crypto?: { randomUUID?: () => string } }).crypto;
  if (typeof crypto?.randomUUID !== 'function') {
    throw new TypeError('crypto.randomUUID() is not available here (a browser needs a secure context); pass the key as a string');
  }
  return crypto.randomUUID();
}

/**
 * The key to send for one logical call, decided once and then reused on every attempt:
 * - a header the caller already set wins, untouched;
 * - `option` a string ⇒ that key;
 * - `option === true` ⇒ a generated key for a method that is not idempotent (POST, PATCH, …);
 *   idempotent methods need none;
 * - otherwise none.
 */
export function chooseIdempotencyKey(
  method: string,
  existing: string | null | undefined,
  option: boolean | string | undefined,
): string | undefined {
  if (existing !== null && existing !== undefined && existing !== '') return existing;
  if (typeof option === 'string') return option;
  if (option === true && !isIdempotentMethod(method)) return newIdempotencyKey();
  return undefined;
}

/** What one call decides once about repeating its request. */
export interface RequestIdempotency {
  /** The `Idempotency-Key` to send on every attempt, if any. */
  key: string | undefined;
  /** Whether repeating the request after an `unknown` outcome is safe. */
  idempotent: boolean;
}

/**
 * The key (see {@link chooseIdempotencyKey}) and whether the request may be repeated after an
 * `unknown` outcome: by method (GET, HEAD, OPTIONS, PUT, DELETE, TRACE), or because it carries
 * a key — unless `override` says otherwise. Shared by every HTTP entry point.
 */
export function requestIdempotency(
  method: string,
  existing: string | null | undefined,
  option: boolean | string | undefined,
  override?: boolean,
): RequestIdempotency {
  const key = chooseIdempotencyKey(method, existing, option);
  return { key, idempotent: override ?? (isIdempotentMethod(method) || key !== undefined) };
}
