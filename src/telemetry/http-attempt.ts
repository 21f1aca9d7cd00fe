import type { AttemptTelemetry } from './call-wrapper.js';

/** The methods the HTTP semantic conventions name; anything else is reported as `_OTHER`. */
const KNOWN_METHODS: ReadonlySet<string> = new Set([
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
]);

/**
 * Names an HTTP attempt's span the way the OpenTelemetry HTTP client conventions do (span
 * name `{method}`; `http.request.method`, `server.address`, `server.port`, `url.full`) and,
 * when `setHeader` is given, adds the attempt's trace-context headers through it.
 *
 * `redactedUrl` must already have its secrets removed (credentials, secret query values):
 * spans are exported to places the caller does not control.
 */
export function describeHttpAttempt(
  telemetry: AttemptTelemetry,
  method: string,
  redactedUrl: string,
  setHeader: ((name: string, value: string) => void) | undefined,
): void {
  const known = KNOWN_METHODS.has(method);
  telemetry.updateName(known ? method : 'HTTP');
  telemetry.setAttribute('http.request.method', known ? method : '_OTHER');
  let url: URL | undefined;
  try {
    url = new URL(redactedUrl);
  } catch {
    url = undefined;
  }
  if (url !== undefined) {
    telemetry.setAttribute('server.address', url.hostname);
    const port =
      url.port === '' ? (url.protocol === 'https:' ? 443 : url.protocol === 'http:' ? 80 : undefined) : Number(url.port);
    if (port !== undefined) telemetry.setAttribute('server.port', port);
  }
  telemetry.setAttribute('url.full', redactedUrl);
  if (setHeader !== undefined) telemetry.inject(setHeader);
}
