// A real nginx (Debian's /usr/sbin/nginx) on a free loopback port, with a temp prefix and a
// config written here: `limit_req` in front of a static file (a `return 200` would bypass it).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scheduler } from 'node:timers/promises';

export const NGINX = '/usr/sbin/nginx';

export interface Nginx {
  url: string;
  /** Requests nginx logged (served and rejected) since start or the last `resetLog`. */
  requests(): { total: number; served: number; rejected: number };
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

/**
 * Starts nginx with `limit_req zone=… rate=<rate>r/s burst=<burst>` (`nodelay` or not) in
 * front of a static file, answering rejections with 429.
 */
export async function startNginx(options: { ratePerSecond: number; burst: number; nodelay: boolean }): Promise<Nginx> {
  const prefix = mkdtempSync(join(tmpdir(), 'kindly-nginx-'));
  mkdirSync(join(prefix, 'logs'));
  mkdirSync(join(prefix, 'html'));
  writeFileSync(join(prefix, 'html', 'index.html'), 'ok\n');
  const port = await freePort();
  const conf = join(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
master_process off;
worker_processes 1;
pid ${join(prefix, 'nginx.pid')};
error_log ${join(prefix, 'logs', 'error.log')} warn;
events { worker_connections 1024; }
http {
  access_log ${join(prefix, 'logs', 'access.log')};
  client_body_temp_path ${join(prefix, 'tmp-body')};
  proxy_temp_path ${join(prefix, 'tmp-proxy')};
  fastcgi_temp_path ${join(prefix, 'tmp-fcgi')};
  uwsgi_temp_path ${join(prefix, 'tmp-uwsgi')};
  scgi_temp_path ${join(prefix, 'tmp-scgi')};
  limit_req_zone $server_name zone=herd:1m rate=${options.ratePerSecond}r/s;
  limit_req_status 429;
  limit_req_log_level info;
  keepalive_requests 100000;
  server {
    listen 127.0.0.1:${port};
    server_name herd;
    root ${join(prefix, 'html')};
    location / {
      limit_req zone=herd burst=${options.burst}${options.nodelay ? ' nodelay' : ''};
    }
  }
}
`,
  );
  const child = spawn(NGINX, ['-p', prefix, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  await waitForPort(port, child, () => stderr);
  const logFile = join(prefix, 'logs', 'access.log');
  // nginx logs a request when it finishes; the probe connection above made none.
  return {
    url: `http://127.0.0.1:${port}/index.html`,
    requests() {
      const lines = readFileSync(logFile, 'utf8')
        .split('\n')
        .filter((l) => l.length > 0);
      const served = lines.filter((l) => l.includes('" 200 ')).length;
      const rejected = lines.filter((l) => l.includes('" 429 ')).length;
      return { total: lines.length, served, rejected };
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
    },
  };
}
