// Runs test/fixtures/http-client-child.ts in a child process and reads its report. The child
// has no rejection handler: a crash or an unhandled rejection shows as a non-zero exit code;
// a call that never settles, or a handle that keeps the process alive, as a kill after
// `limitMs`.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export type Entry = 'fetch' | 'createFetch' | 'axios' | 'node-http' | 'express' | 'fastify';

export interface ClientSpec {
  /** A label carried into the report. */
  name?: string;
  entry: Entry;
  url: string;
  /** Options of the child's `downstream('child', …)`. */
  downstream?: Record<string, unknown>;
  /** The fetch init (JSON-able part). */
  init?: Record<string, unknown>;
  /** `createFetch` options. */
  fetchOptions?: Record<string, unknown>;
  /** Abort the caller's signal this many ms after the call starts. */
  abortAfterMs?: number;
  /** `none`: leave the body unread; `after-abort`: read it only once the abort has happened. */
  read?: 'text' | 'none' | 'after-abort';
  /** Middleware entries: the `x-request-timeout-ms` the inbound request carries. */
  inboundTimeoutMs?: number;
  /** Load the built `dist/` instead of the sources. */
  dist?: boolean;
}

export interface ClientReport {
  name?: string;
  outcome: 'resolved' | 'rejected';
  status?: number;
  error?: string;
  reason?: string;
  exhausted?: string;
  /** Middleware entries: errors that escaped the handler (answered by the middleware). */
  handlerErrors?: number;
  bodyBytes?: number;
  bodyError?: string;
  resolvedMs?: number;
  attempts: number;
  ms: number;
  /** TCP handles still keeping the event loop alive once the call is done. */
  sockets: number;
  rssGrowthKb: number;
}

export interface ChildResult {
  /** The last case's report. */
  report: ClientReport | undefined;
  /** Every case's report, in order (a list of specs runs them one after the other). */
  reports: ClientReport[];
  code: number | null;
  /** True when the child had to be killed: it hung, or something kept it alive. */
  killed: boolean;
  stderr: string;
  /** Wall time until the child exited. */
  exitMs: number;
}

const child = fileURLToPath(new URL('../fixtures/http-client-child.ts', import.meta.url));
const tsx = fileURLToPath(new URL('../../node_modules/.bin/tsx', import.meta.url));

export function runClient(spec: ClientSpec | ClientSpec[], limitMs = 15_000): Promise<ChildResult> {
  const started = performance.now();
  const proc = spawn(tsx, [child, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (err += d));
  let killed = false;
  const timer = setTimeout(() => {
    killed = true;
    proc.kill('SIGKILL');
  }, limitMs);
  return new Promise((resolve) => {
    proc.on('exit', (code) => {
      clearTimeout(timer);
      const reports: ClientReport[] = [];
      for (const line of out.split('\n')) {
        if (!line.startsWith('{')) continue;
        try {
          reports.push(JSON.parse(line) as ClientReport);
        } catch {
          // a partial line from a killed child
        }
      }
      resolve({ report: reports.at(-1), reports, code, killed, stderr: err, exitMs: Math.round(performance.now() - started) });
    });
  });
}

/** One line of figures for a child's run. */
export function figures(label: string, r: ChildResult): string {
  const p = r.report;
  const what =
    p === undefined
      ? 'no report'
      : `${p.outcome}${p.status === undefined ? '' : ` ${p.status}`}${p.error ? ` ${p.error}` : ''}${p.reason ? ` (${p.reason})` : ''}`;
  return `[figure] ${label}: ${what}, attempts ${p?.attempts ?? '?'}, ${p?.ms ?? '?'} ms, sockets left ${p?.sockets ?? '?'}, RSS +${p?.rssGrowthKb ?? '?'} KiB, exit ${r.killed ? 'KILLED (hung)' : r.code} after ${r.exitMs} ms`;
}
