/**
 * Query parameters whose values are never written into an error or event (SPEC S9), compared
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

/** `scheme://user:pass@host/…` ⇒ `scheme://REDACTED@host/…`; the authority ends at the first `/`. */
function redactUserInfo(text: string): string {
  const scheme = text.indexOf('//');
  if (scheme < 0) return text;
  const authorityStart = scheme + 2;
  const slash = text.indexOf('/', authorityStart);
  const authorityEnd = slash < 0 ? text.length : slash;
  const at = text.lastIndexOf('@', authorityEnd - 1);
  if (at < authorityStart) return text;
  return `${text.slice(0, authorityStart)}${REDACTED}@${text.slice(at + 1)}`;
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
