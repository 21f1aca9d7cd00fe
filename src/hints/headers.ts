/** A WHATWG `Headers`, axios `AxiosHeaders`, or anything with a case-insensitive `get`. */
export interface HeadersLike {
  get(name: string): unknown;
}

/** One header value as node:http, undici, axios or got hand it over. */
export type HeaderRecordValue = string | readonly string[] | number | boolean | null | undefined;

/** `IncomingHttpHeaders`, axios' plain headers, `{ 'Retry-After': '5' }`: any key casing. */
export type HeaderRecord = { readonly [name: string]: HeaderRecordValue };

/**
 * Where response headers come from. Every hint reader accepts this, so callers pass what
 * their HTTP client gave them without converting it. `null`/`undefined` mean "no headers".
 */
export type HeaderSource = HeadersLike | HeaderRecord | null | undefined;

/**
 * The value of header `name` (case-insensitive), or `undefined` when absent.
 *
 * - `get`-objects are asked for the lower-case name (WHATWG `Headers` and axios are
 *   case-insensitive; Map-based stand-ins conventionally store lower-case names).
 * - Records are searched by exact lower-case key first (node:http), then by any casing;
 *   several keys that differ only in case are joined in key order, as repeated fields are.
 * - Arrays are joined with `", "` (RFC 9110 §5.3); finite numbers and booleans become text.
 *
 * Header sources come from outside: a throwing getter, a hostile Proxy or a value of the wrong
 * type yields `undefined`, never an exception.
 */
export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (headers === null || headers === undefined || typeof headers !== 'object') return undefined;
  try {
    const lower = name.toLowerCase();
    const get = (headers as { get?: unknown }).get;
    if (typeof get === 'function') {
      return normalize((get as (n: string) => unknown).call(headers, lower));
    }
    const record = headers as HeaderRecord;
    if (Object.hasOwn(record, lower)) return normalize(record[lower]);
    let found: string | undefined;
    for (const key of Object.keys(record)) {
      if (key.length !== lower.length || key.toLowerCase() !== lower) continue;
      const value = normalize(record[key]);
      if (value !== undefined) found = found === undefined ? value : `${found}, ${value}`;
    }
    return found;
  } catch {
    return undefined;
  }
}

function normalize(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : undefined;
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) {
    // One level only: a header line is text, so nested arrays are not headers.
    const parts: string[] = [];
    for (const item of value as unknown[]) {
      const part = Array.isArray(item) ? undefined : normalize(item);
      if (part !== undefined) parts.push(part);
    }
    return parts.length === 0 ? undefined : parts.join(', ');
  }
  return undefined;
}
