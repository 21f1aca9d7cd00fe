/**
 * The breaker / bulkhead / pacer lane of a request: its URL's host with port (`new URL(url).host`,
 * relative URLs against the page's location), so one failing host does not open the breaker
 * for another; the URL itself when it does not parse.
 *
 * The common absolute `http(s)://host[:port]/…` whose host is already canonical (lower-case
 * ASCII name, or dotted-quad IPv4, no user-info, no default port) is read without parsing the
 * URL: same answer, a fraction of the cost on every call. Anything else goes to the parser.
 */
export function laneKeyOf(url: string): string {
  const fast = canonicalAuthority(url);
  if (fast !== undefined) return fast;
  const location = (globalThis as { location?: { href?: string } }).location;
  try {
    return new URL(url, location?.href).host;
  } catch {
    return url;
  }
}

const AUTHORITY = /^([a-z0-9.-]+)(?::([1-9][0-9]{0,4}))?$/;
/** A last label the URL parser reads as a number, making the host IPv4 (`0x7f.1` is `127.0.0.1`). */
const NUMERIC_LABEL = /^(?:[0-9]+|0x[0-9a-f]*)$/;
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

function canonicalAuthority(url: string): string | undefined {
  const secure = url.startsWith('https://');
  const start = secure ? 8 : url.startsWith('http://') ? 7 : -1;
  if (start < 0) return undefined;
  let end = start;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 0x2f || c === 0x3f || c === 0x23) break; // / ? #
    end++;
  }
  const origin = url.slice(0, end);
  // The host of the previous request, remembered: most calls go to the same host, and the
  // checks below (three regular expressions) cost more than the rest of the lookup.
  if (origin === lastOrigin) return lastKey;
  const authority = url.slice(start, end);
  const key = checkedAuthority(authority, secure);
  lastOrigin = key === undefined ? undefined : origin;
  lastKey = key;
  return key;
}

let lastOrigin: string | undefined;
let lastKey: string | undefined;

function checkedAuthority(authority: string, secure: boolean): string | undefined {
  const match = AUTHORITY.exec(authority);
  if (match === null) return undefined;
  const host = match[1] as string;
  const port = match[2];
  // The parser drops a default port and refuses one above 65535.
  if (port !== undefined && (Number(port) > 65_535 || port === (secure ? '443' : '80'))) return undefined;
  const labels = host.split('.');
  const last = labels[labels.length - 1] === '' ? labels[labels.length - 2] : labels[labels.length - 1];
  if (last === undefined || last === '') return undefined;
  if (NUMERIC_LABEL.test(last) && !DOTTED_QUAD.test(host)) return undefined;
  return authority;
}
