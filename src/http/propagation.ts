import type { OptionsValidator } from '../options/validate.js';
import type { CallContext } from '../runtime/attempt.js';
import { currentDeadlineScope } from '../runtime/deadline-context.js';
import { ATTEMPT_HEADER } from './attempt-header.js';
import { formatRequestTimeout, REQUEST_TIMEOUT_HEADER } from './deadline-header.js';

/**
 * Who receives kindly's internal headers — `x-retry-attempt` and `x-request-timeout-ms` —
 * on outgoing requests. They are meant for services that take part (they read them with
 * kindly's middleware, gRPC or Envoy conventions); a third-party API has no use for them and
 * should not learn your retry or deadline settings.
 *
 * - `true`: every request; `false`: none;
 * - `{ hosts: [...] }`: only requests to these hosts: `payments.internal` (any port),
 *   `payments.internal:8443` (that port only), `*.svc.cluster.local` (any subdomain);
 * - not set (the default): only requests made **while a deadline scope is active** — inside
 *   a request handled by kindly's server middleware (`nodeHttpHandler`, `expressMiddleware`,
 *   `fastifyPlugin`) or `runWithDeadline` — i.e. by a service that itself takes part; and in
 *   a web page only to the page's own origin (a custom header on a cross-origin request would
 *   trigger a CORS preflight). A script, job or CLI calling an API sends neither header.
 */
export type PropagateHeaders = boolean | { readonly hosts: readonly string[] };

/** Whether a request to `url` carries the internal headers under `setting` (see {@link PropagateHeaders}). */
export function propagatesTo(url: string, setting: PropagateHeaders | undefined): boolean {
  if (setting === true || setting === false) return setting;
  const page = pageOrigin();
  if (setting !== undefined) return matchesHost(url, setting.hosts, page?.href);
  if (page !== undefined) return sameOrigin(url, page);
  return currentDeadlineScope() !== undefined;
}

/** Records a problem when `value` is not a {@link PropagateHeaders}. */
export function checkPropagateHeaders(v: OptionsValidator, value: unknown): void {
  if (value === undefined || typeof value === 'boolean') return;
  const hosts = (value as { hosts?: unknown } | null)?.hosts;
  const ok =
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).every((key) => key === 'hosts') &&
    Array.isArray(hosts) &&
    hosts.every((h) => typeof h === 'string' && h.length > 0);
  v.check(
    ok,
    `Expected \`propagateHeaders\` to be a boolean or { hosts: string[] } (non-empty host names), got ${describe(value)}`,
  );
}

function matchesHost(url: string, hosts: readonly string[], base: string | undefined): boolean {
  let target: URL;
  try {
    target = new URL(url, base);
  } catch {
    return false;
  }
  const hostname = target.hostname.toLowerCase();
  const port = target.port === '' ? defaultPort(target.protocol) : target.port;
  for (const entry of hosts) {
    const rule = entry.toLowerCase();
    const colon = rule.lastIndexOf(':');
    // `[::1]:8080` and `host:8080` name a port; a bare IPv6 literal `[::1]` does not.
    const hasPort = colon > rule.lastIndexOf(']') && colon !== -1;
    const name = hasPort ? rule.slice(0, colon) : rule;
    if (hasPort && rule.slice(colon + 1) !== port) continue;
    if (name.startsWith('*.') ? hostname.endsWith(name.slice(1)) : hostname === name) return true;
  }
  return false;
}

function defaultPort(protocol: string): string {
  return protocol === 'https:' ? '443' : protocol === 'http:' ? '80' : '';
}

function pageOrigin(): { href: string; origin: string } | undefined {
  const location = (globalThis as { location?: { href?: string; origin?: string } }).location;
  if (location?.href === undefined || location.origin === undefined) return undefined;
  return { href: location.href, origin: location.origin };
}

function sameOrigin(url: string, page: { href: string; origin: string }): boolean {
  try {
    return new URL(url, page.href).origin === page.origin;
  } catch {
    return false;
  }
}

function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * Writes one attempt's internal headers through `set`: `x-retry-attempt` (attempts before
 * this one) and, when the attempt has a deadline, `x-request-timeout-ms` (ms left). Shared
 * by every HTTP entry point, whatever its headers type.
 */
export function setAttemptHeaders(set: (name: string, value: string) => void, ctx: CallContext): void {
  set(ATTEMPT_HEADER, String(ctx.attempt - 1));
  if (ctx.deadline !== undefined) set(REQUEST_TIMEOUT_HEADER, formatRequestTimeout(ctx.timeLeft()));
}
