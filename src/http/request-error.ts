import { readProperty, readString } from '../classify/safe-read.js';
import { HttpRequestError } from './errors.js';
import { REDACTED, redactUrl, redactUrlIn } from './redact.js';

/** What the copy of a fetch error says about the request, and what it must not say. */
export interface RequestErrorContext {
  method: string;
  /** The request URL as given (the copy carries it redacted). */
  url: string;
  secretParams: readonly string[];
  /** The request's secret strings (`secretValues`): hidden in the message; a cause quoting one is dropped. */
  secrets: readonly string[];
  outcome: 'failed' | 'unknown';
  attempts: number;
  downstream: string;
}

/** How deep the cause chain is searched for a secret (undici nests two levels). */
const MAX_DEPTH = 4;

/**
 * kindly's copy of an error thrown by a `fetch` implementation, fit for errors and events
 *. Fetch errors quote what they failed on: undici's
 * `Request cannot be constructed from a URL that includes credentials: http://user:pass@…`,
 * `Failed to parse URL from …`, a header value it refused. The copy has the method and
 * redacted URL, the network `errorCode` (`ECONNREFUSED`, from the error or its cause), and
 * the message of the error and of its cause with the URL redacted and every secret replaced.
 * The original becomes the copy's `cause` only when nothing in it (message, stack, string
 * fields, causes) mentions a secret; otherwise it is dropped.
 */
export function requestErrorFrom(error: unknown, context: RequestErrorContext): HttpRequestError {
  const cause = readProperty(error, 'cause');
  let message = readString(error, 'message') ?? String(error);
  const causeMessage = readString(cause, 'message');
  // undici says only `fetch failed`; the reason (`connect ECONNREFUSED 10.0.0.1:443`) is in its cause.
  if (causeMessage !== undefined && causeMessage.length > 0 && !message.includes(causeMessage)) {
    message = `${message}: ${causeMessage}`;
  }
  const code = readString(error, 'code') ?? readString(cause, 'code') ?? readString(readProperty(cause, 'cause'), 'code');
  const details: ConstructorParameters<typeof HttpRequestError>[4] = {
    outcome: context.outcome,
    attempts: context.attempts,
    downstream: context.downstream,
  };
  if (!mentions(error, context.secrets, 0, new Set())) details.cause = error;
  return new HttpRequestError(
    context.method,
    redactUrl(context.url, context.secretParams),
    code,
    hide(redactUrlIn(message, context.url, context.secretParams), context.secrets),
    details,
  );
}

/** `text` with every secret replaced, longest first (a password inside a longer user-info). */
function hide(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

function mentions(value: unknown, secrets: readonly string[], depth: number, seen: Set<unknown>): boolean {
  if (secrets.length === 0 || depth > MAX_DEPTH || seen.has(value)) return false;
  if (typeof value === 'string') return secrets.some((secret) => value.includes(secret));
  if (value === null || typeof value !== 'object') return false;
  seen.add(value);
  for (const key of ['message', 'stack']) {
    const text = readString(value, key);
    if (text !== undefined && mentions(text, secrets, depth, seen)) return true;
  }
  let keys: string[];
  try {
    keys = Object.keys(value);
  } catch {
    return true; // a hostile object: not worth keeping
  }
  for (const key of keys) {
    const field = readProperty(value, key);
    if (typeof field === 'string' && mentions(field, secrets, depth, seen)) return true;
  }
  if (mentions(readProperty(value, 'cause'), secrets, depth + 1, seen)) return true;
  const errors = readProperty(value, 'errors');
  if (Array.isArray(errors)) {
    for (const inner of errors.slice(0, 8)) if (mentions(inner, secrets, depth + 1, seen)) return true;
  }
  return false;
}
