import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './redis-server.js';

/** What nginx logged since the last reset: every request, with its status and time. */
export interface LimiterLog {
  requests: number;
  /** ms from the first logged request to the last 200. */
  allSucceededMs: number;
  successes: number;
}

/**
 * A real rate limiter nobody here wrote: nginx's `limit_req` (a leaky bucket) in front of a
 * static file (`return 200` would answer before `limit_req` runs). One zone for all
 * clients: `rate` requests per second with `burst` extra served at once (`nodelay`), 429
 * for the rest. Runs in the foreground with its files in a temp dir; the access log is the
 * measurement (`$msec $status`), read after each run.
 */
export class NginxLimiter {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(options: { rate: number; burst: number }): Promise<NginxLimiter> {
    const dir = mkdtempSync(join(tmpdir(), 'kindly-nginx-'));
    const port = await freePort();
    mkdirSync(join(dir, 'www'));
    mkdirSync(join(dir, 'tmp'));
    writeFileSync(join(dir, 'www', 'index.html'), 'ok\n');
    writeFileSync(
      join(dir, 'nginx.conf'),
      `daemon off;
master_process off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log error;
events { worker_connections 4096; }
http {
  client_body_temp_path ${dir}/tmp;
  proxy_temp_path ${dir}/tmp;
  fastcgi_temp_path ${dir}/tmp;
  uwsgi_temp_path ${dir}/tmp;
  scgi_temp_path ${dir}/tmp;
  log_format timed '$msec $status';
  access_log ${dir}/access.log timed;
  keepalive_requests 100000;
  limit_req_zone $server_name zone=fleet:1m rate=${options.rate}r/s;
  limit_req_status 429;
  server {
    listen 127.0.0.1:${port};
    server_name limiter;
    root ${dir}/www;
    location /warm { try_files /index.html =404; }
    location / {
      limit_req zone=fleet burst=${options.burst} nodelay;
      try_files /index.html =404;
    }
  }
}
`,
    );
    const limiter = new NginxLimiter(port, dir);
    limiter.child = spawn(process.env.NGINX ?? '/usr/sbin/nginx', ['-p', dir, '-c', join(dir, 'nginx.conf')], {
      stdio: 'ignore',
    });
    for (let i = 0; i < 200; i++) {
      if (await listening(port)) return limiter;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`nginx did not start: ${readFileSync(join(dir, 'error.log'), 'utf8')}`);
  }

  /** The rate-limited file. */
  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /** The same file without the limit (for warming connections). */
  get warmUrl(): string {
    return `http://127.0.0.1:${this.port}/warm`;
  }

  /** Empties the access log (nginx appends, so it writes on from the start). */
  reset(): void {
    truncateSync(join(this.dir, 'access.log'), 0);
  }

  read(): LimiterLog {
    const lines = readFileSync(join(this.dir, 'access.log'), 'utf8').split('\n').filter(Boolean);
    let first = Number.POSITIVE_INFINITY;
    let lastOk = Number.NEGATIVE_INFINITY;
    let successes = 0;
    for (const line of lines) {
      const [at, status] = line.split(' ');
      const ms = Number(at) * 1000;
      if (ms < first) first = ms;
      if (status === '200') {
        successes++;
        if (ms > lastOk) lastOk = ms;
      }
    }
    return { requests: lines.length, successes, allSucceededMs: successes === 0 ? 0 : Math.round(lastOk - first) };
  }

  /** Requests and successes per `binMs` since the first request (for FLEET_DEBUG timelines). */
  timeline(binMs: number): string {
    const lines = readFileSync(join(this.dir, 'access.log'), 'utf8').split('\n').filter(Boolean);
    const rows = lines.map((line) => line.split(' ')).map(([at, status]) => [Number(at) * 1000, status === '200' ? 1 : 0]);
    const first = Math.min(...rows.map((r) => r[0]!));
    const bins: Array<[number, number]> = [];
    for (const [ms, ok] of rows) {
      const b = Math.floor((ms! - first) / binMs);
      const bin = (bins[b] ??= [0, 0]);
      bin[0]++;
      bin[1] += ok!;
    }
    return Array.from(bins, (b) => (b === undefined ? '0' : `${b[0]}/${b[1]}`)).join(' ');
  }

  async close(): Promise<void> {
    const child = this.child;
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = new Socket();
    s.once('error', () => {
      s.destroy();
      resolve(false);
    });
    s.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
  });
}
