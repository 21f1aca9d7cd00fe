/**
 * Query parameters whose values are never written into an error or event, compared
 * case-insensitively. Replace the list with the `secretQueryParams` option.
 * @default ['token', 'key', 'api_key', 'apikey', 'api-key', 'access_token', 'refresh_token',
 *   'id_token', 'client_secret', 'secret', 'password', 'passwd', 'auth', 'signature', 'sig',
 *   'x-amz-signature', 'x-amz-credential', 'x-amz-security-token', 'x-goog-signature',
 *   'x-goog-credential']
 */
export const DEFAULT_SECRET_QUERY_PARAMS: readonly string[] = Object.freeze([
  'token',
  'key',
  'api_key',
  'apikey',
  'api-key',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'secret',
  'password',
  'passwd',
  'auth',
  'signature',
  'sig',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'x-goog-signature',
  'x-goog-credential',
]);

/** What replaces a secret. */
export const REDACTED = 'REDACTED';

/**
 * `url` as it may appear in an error message or event: user-info (`user:pass@`) replaced by
 * `REDACTED@`, the value of every query parameter named in `secretParams` replaced by
 * `REDACTED` (other parameters are kept byte for byte), and the fragment dropped (it never
 * leaves the client and OAuth puts tokens there). A relative URL is redacted the same way.
 * Never throws; text that is not a URL at all comes back as `[unparseable URL]`.
 */
export function redactUrl(url: string | URL, secretParams: readonly string[] = DEFAULT_SECRET_QUERY_PARAMS): string {
  let text: string;
  try {
    text = typeof url === 'string' ? url : url.href;
  } catch {
    return '[unparseable URL]';
  }
  if (typeof text !== 'string') return '[unparseable URL]';
  const hash = text.indexOf('#');
  if (hash >= 0) text = text.slice(0, hash);
  const question = text.indexOf('?');
  const beforeQuery = question >= 0 ? text.slice(0, question) : text;
  const query = question >= 0 ? text.slice(question + 1) : undefined;
  return redactUserInfo(beforeQuery) + (query === undefined ? '' : `?${redactQuery(query, secretParams)}`);
}

/**
 * `scheme://user:pass@host/…` ⇒ `scheme://REDACTED@host/…`, the rest kept as spelled. The forms
 * without `//` that the URL parser also reads as credentials for http(s) and the other special
 * schemes (`http:user:pass@host`, `http:/user:pass@host`, `http:\\user:pass@host`) come back in
 * the parser's own spelling, `http://REDACTED@host/…`.
 */
function redactUserInfo(text: string): string {
  const authority = spelledAuthority(text);
  if (authority !== undefined) {
    const at = text.lastIndexOf('@', authority.end - 1);
    if (at >= authority.start) return `${text.slice(0, authority.start)}${REDACTED}@${text.slice(at + 1)}`;
  }
  const url = withCredentials(text);
  return url === undefined ? text : `${url.protocol}//${REDACTED}@${url.host}${url.pathname}`;
}

/**
 * `scheme://` or `//` at the very start: only there does `//` open the authority. A `//` further
 * on is part of the path (`http:user:pass@host/a//b@c`), and taking it for the authority would
 * both miss the real credentials and take a piece of the path for them.
 */
const AUTHORITY_OPENER = /^(?:([a-z][a-z0-9+.-]*):)?\/\//i;

/** Schemes whose URLs the URL parser reads with `\` as a `/`. */
const SPECIAL_SCHEMES: ReadonlySet<string> = new Set(['http', 'https', 'ws', 'wss', 'ftp', 'file']);

/**
 * Where the authority of `text` (a URL without its query and fragment) starts and ends, when it
 * is spelled with `//` right after the scheme (or at the start of a scheme-relative URL); else
 * `undefined`. It ends where the URL parser ends it: at the first `/`, or `\` for a special
 * scheme. Where the scheme is unknown (`//host/…`), only at `/`: an authority read too long
 * hides some of the host, one read too short would show part of a password.
 */
function spelledAuthority(text: string): { start: number; end: number } | undefined {
  const opener = AUTHORITY_OPENER.exec(text);
  if (opener === null) return undefined;
  const start = opener[0].length;
  const scheme = opener[1];
  const backslashEnds = scheme !== undefined && SPECIAL_SCHEMES.has(scheme.toLowerCase());
  let end = start;
  while (end < text.length && text[end] !== '/' && !(backslashEnds && text[end] === '\\')) end++;
  return { start, end };
}

/** `text` parsed as an absolute URL, when it carries a user name or password; else `undefined`. */
function withCredentials(text: string): URL | undefined {
  if (!text.includes('@')) return undefined;
  try {
    const url = new URL(text);
    return url.username === '' && url.password === '' ? undefined : url;
  } catch {
    return undefined;
  }
}

function redactQuery(query: string, secretParams: readonly string[]): string {
  if (query.length === 0) return query;
  const secrets = new Set(secretParams.map((name) => name.toLowerCase()));
  const parts = query.split('&');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as string;
    const eq = part.indexOf('=');
    const rawName = eq < 0 ? part : part.slice(0, eq);
    if (secrets.has(decodeName(rawName).toLowerCase())) parts[i] = `${rawName}=${REDACTED}`;
  }
  return parts.join('&');
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}

/**
 * Replaces every occurrence of `url` in `text` by its redacted form: for messages written by
 * other libraries, which sometimes quote the URL they failed on.
 */
export function redactUrlIn(text: string, url: string | undefined, secretParams?: readonly string[]): string {
  if (url === undefined || url.length === 0 || !text.includes(url)) return text;
  return text.split(url).join(redactUrl(url, secretParams));
}

/**
 * Headers whose values are credentials, never copied into an error or event:
 * request credentials, and the session cookies a response sets.
 */
export const SECRET_HEADERS: readonly string[] = Object.freeze([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'set-cookie2',
]);

/** Shortest part of a secret header value looked for on its own (shorter parts are names like `sid`). */
const MIN_SECRET_PART = 6;

/** Response headers that hold a URL, which may carry credentials or a secret query parameter. */
const URL_HEADERS: ReadonlySet<string> = new Set(['location', 'content-location']);

/**
 * A copy of `headers` fit for an error or event: the {@link SECRET_HEADERS} left out, the URL
 * in `Location` / `Content-Location` redacted, everything else as it was.
 */
export function redactHeaders(headers: Headers, secretParams?: readonly string[]): Headers {
  const copy = new Headers();
  headers.forEach((value, name) => {
    if (SECRET_HEADERS.includes(name)) return;
    copy.append(name, URL_HEADERS.has(name) ? redactUrl(value, secretParams) : value);
  });
  return copy;
}

/**
 * The same for a client library's header object (axios' `AxiosHeaders`, node:http's
 * `IncomingHttpHeaders`, a plain record): a plain record with lower-case names, fit for an
 * error or event. Never throws; anything that is not a header object gives `{}`.
 */
export function redactHeaderRecord(
  headers: unknown,
  secretParams?: readonly string[],
): Record<string, string | readonly string[]> {
  const out: Record<string, string | readonly string[]> = {};
  try {
    if (headers === null || typeof headers !== 'object') return out;
    // WHATWG Headers: its entries are not own properties.
    if (typeof Headers === 'function' && headers instanceof Headers)
      return Object.fromEntries(redactHeaders(headers, secretParams));
    // AxiosHeaders keeps one own property per header (and methods on its prototype).
    const toJSON = (headers as { toJSON?: unknown }).toJSON;
    const source = typeof toJSON === 'function' ? (toJSON as () => unknown).call(headers) : headers;
    if (source === null || typeof source !== 'object') return out;
    for (const [key, value] of Object.entries(source as Record<string, unknown>)) {
      const name = key.toLowerCase();
      if (SECRET_HEADERS.includes(name)) continue;
      if (typeof value === 'string') out[name] = URL_HEADERS.has(name) ? redactUrl(value, secretParams) : value;
      else if (typeof value === 'number' || typeof value === 'boolean') out[name] = String(value);
      else if (Array.isArray(value)) out[name] = value.filter((v): v is string => typeof v === 'string');
    }
  } catch {
    // A hostile header object: nothing from it.
  }
  return out;
}

/**
 * The secret strings a request carries, to look for in text written by other code (an error
 * message that quotes the URL): the URL's user-info and password (raw and decoded), the values
 * of its secret query parameters (raw and decoded), and the values of its secret headers.
 */
export function secretValues(
  url: string,
  secretParams: readonly string[] = DEFAULT_SECRET_QUERY_PARAMS,
  headers?: { get(name: string): string | null },
): string[] {
  const found = new Set<string>();
  const add = (value: string | undefined | null) => {
    if (value === undefined || value === null || value.length === 0) return;
    found.add(value);
    const decoded = decodeName(value);
    if (decoded.length > 0) found.add(decoded);
  };
  const hash = url.indexOf('#');
  const text = hash >= 0 ? url.slice(0, hash) : url;
  const question = text.indexOf('?');
  const beforeQuery = question >= 0 ? text.slice(0, question) : text;
  const spelled = spelledAuthority(beforeQuery);
  if (spelled !== undefined) {
    const authority = beforeQuery.slice(spelled.start, spelled.end);
    const at = authority.lastIndexOf('@');
    if (at >= 0) {
      const userInfo = authority.slice(0, at);
      add(userInfo);
      const colon = userInfo.indexOf(':');
      if (colon >= 0) add(userInfo.slice(colon + 1));
    }
  }
  const parsed = withCredentials(beforeQuery);
  if (parsed !== undefined) {
    // However the text spelled them (with `//` or without), as the parser read them.
    add(parsed.password === '' ? parsed.username : `${parsed.username}:${parsed.password}`);
    add(parsed.password);
  }
  if (question >= 0) {
    const secrets = new Set(secretParams.map((name) => name.toLowerCase()));
    for (const part of text.slice(question + 1).split('&')) {
      const eq = part.indexOf('=');
      if (eq >= 0 && secrets.has(decodeName(part.slice(0, eq)).toLowerCase())) add(part.slice(eq + 1));
    }
  }
  if (headers !== undefined) {
    for (const name of SECRET_HEADERS) {
      const value = headers.get(name);
      if (value === null) continue;
      add(value);
      // `Bearer <token>`, `a=<x>; b=<y>`: a message may quote one part only.
      for (const part of value.split(/[\s;,=]+/)) if (part.length >= MIN_SECRET_PART) add(part);
    }
  }
  return [...found];
}
