// A real nginx (Debian's /usr/sbin/nginx) on a free loopback port, with a temp prefix and a
// config written here: `limit_req` in front of a static file (a `return 200` would bypass it), or
// `limit_conn` in front of a slow loopback server.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scheduler } from 'node:timers/promises';
import { type Arrival, callerOf } from './limiter-servers.js';

export const NGINX = '/usr/sbin/nginx';

export interface Nginx {
  url: string;
  /** Requests nginx logged (served and rejected) since start or the last `resetLog`. */
  requests(): { total: number; served: number; rejected: number };
  /**
   * Every request logged since start or the last `resetLog`, in log order: when (ms after the
   * first of them; nginx logs to the millisecond, when it has answered) and whether it was served.
   */
  arrivals(): Arrival[];
  resetLog(): void;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  // Up to ~10 s: nginx may take a while to start on a loaded machine.
  for (let i = 0; i < 500; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}: ${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await scheduler.wait(20);
  }
  throw new Error(`nginx did not listen on ${port}: ${log()}`);
}

/** The access log's lines so far. */
function logLines(logFile: string): string[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
}

/** The whole config: `zones` (the limit's zone and status) and `server` in its `http` block, logs and temp paths under `prefix`. */
function httpBlock(prefix: string, zones: string, server: string): string {
  return `daemon off;
master_process off;
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'logs', 'error.log')} warn;
events { worker_connections 4096; }
http {
  # The time first (to the ms), so that a herd's arrivals can be read back.
  log_format timed '$msec "$request" $status $body_bytes_sent "$http_x_retry_attempt"';
  access_log ${join(prefix, 'logs', 'access.log')} timed;
  client_body_temp_path ${join(prefix, 'tmp-body')};
  proxy_temp_path ${join(prefix, 'tmp-proxy')};
  fastcgi_temp_path ${join(prefix, 'tmp-fcgi')};
  uwsgi_temp_path ${join(prefix, 'tmp-uwsgi')};
  scgi_temp_path ${join(prefix, 'tmp-scgi')};
${zones}
  keepalive_requests 100000;
${server}
}
`;
}

/**
 * Runs nginx on `port` with the config `conf(prefix)` (a temp prefix with a `logs` and an
 * `html` folder), until `stop`. `rejected` is the status its limit answers with; requests are
 * read from its access log. `onStop` runs after nginx has exited.
 */
async function runNginx(
  port: number,
  path: string,
  rejected: number,
  conf: (prefix: string) => string,
  onStop: () => Promise<void> = async () => {},
): Promise<Nginx> {
  const prefix = mkdtempSync(join(tmpdir(), 'kindly-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  mkdirSync(join(prefix, 'html'));
  writeFileSync(join(prefix, 'html', 'index.html'), 'ok\n');
  const confFile = join(prefix, 'nginx.conf');
  writeFileSync(confFile, conf(prefix));
  const child = spawn(NGINX, ['-p', prefix, '-c', confFile], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  try {
    await waitForPort(port, child, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(prefix, { recursive: true, force: true });
    await onStop();
    throw error;
  }
  const logFile = join(prefix, 'logs', 'access.log');
  // nginx logs a request when it finishes; the probe connection above made none.
  return {
    url: `http://127.0.0.1:${port}${path}`,
    requests() {
      const lines = logLines(logFile);
      const served = lines.filter((l) => l.includes('" 200 ')).length;
      const rejectedCount = lines.filter((l) => l.includes(`" ${rejected} `)).length;
      return { total: lines.length, served, rejected: rejectedCount };
    },
    arrivals() {
      const entries = logLines(logFile).map((line): Arrival => {
        const attempts = /"(\d+)"$/.exec(line)?.[1];
        const caller = callerOf(/"\S+ (\S+)/.exec(line)?.[1] ?? '');
        return {
          atMs: Number(line.slice(0, line.indexOf(' '))) * 1000,
          served: line.includes('" 200 '),
          ...(attempts === undefined ? {} : { previousAttempts: Number(attempts) }),
          ...(caller === undefined ? {} : { caller }),
        };
      });
      const first = entries[0]?.atMs ?? 0;
      return entries.map((e) => ({ ...e, atMs: e.atMs - first }));
    },
    resetLog() {
      writeFileSync(logFile, '');
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(prefix, { recursive: true, force: true });
      await onStop();
    },
  };
}

/**
 * Starts nginx with `limit_req zone=… rate=<rate>r/s burst=<burst>` (`nodelay` or not) in
 * front of a static file, answering rejections with 429.
 */
export async function startNginx(options: { ratePerSecond: number; burst: number; nodelay: boolean }): Promise<Nginx> {
  const port = await freePort();
  return runNginx(port, '/index.html', 429, (prefix) =>
    httpBlock(
      prefix,
      `  limit_req_zone $server_name zone=herd:1m rate=${options.ratePerSecond}r/s;
  limit_req_status 429;
  limit_req_log_level info;`,
      `  server {
    listen 127.0.0.1:${port};
    server_name herd;
    root ${join(prefix, 'html')};
    location / {
      limit_req zone=herd burst=${options.burst}${options.nodelay ? ' nodelay' : ''};
    }
  }`,
    ),
  );
}

/**
 * Starts nginx with `limit_conn` (`connections` requests at once, 503 beyond, no queue) in
 * front of a loopback Node server that answers each request after `serviceMs`: a worker pool
 * with no waiting place, as the simulator's concurrency model with `queue: 0`.
 */
export async function startNginxConnLimit(options: { connections: number; serviceMs: number }): Promise<Nginx> {
  const backend = createHttpServer((_req, res) => {
    setTimeout(() => res.end('ok\n'), options.serviceMs);
  });
  await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
  const backendPort = (backend.address() as AddressInfo).port;
  const closeBackend = async () => {
    backend.closeAllConnections();
    await new Promise<void>((resolve) => backend.close(() => resolve()));
  };
  const port = await freePort();
  return runNginx(
    port,
    '/',
    503,
    (prefix) =>
      httpBlock(
        prefix,
        `  limit_conn_zone $server_name zone=pool:1m;
  limit_conn_status 503;
  upstream backend { server 127.0.0.1:${backendPort}; keepalive 64; }`,
        `  server {
    listen 127.0.0.1:${port};
    server_name pool;
    location / {
      limit_conn pool ${options.connections};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_pass http://backend;
    }
  }`,
      ),
    closeBackend,
  );
}
