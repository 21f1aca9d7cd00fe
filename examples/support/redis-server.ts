import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real `redis-server` for tests: a free loopback port, a temp dir, no persistence.
 * `stop()` kills it (SIGKILL: a crash, not a shutdown); `start()` brings it back on the same
 * port, empty.
 */
export class RedisServer {
  private child: ChildProcess | undefined;
  private readonly dir = mkdtempSync(join(tmpdir(), 'kindly-redis-'));

  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const server = new RedisServer(await freePort());
    await server.start();
    return server;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      process.env.REDIS_SERVER ?? '/usr/bin/redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.child = child;
    for (let i = 0; i < 200; i++) {
      if (await answers(this.port)) return;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`redis-server did not start on port ${this.port}`);
  }

  /** Kills the server and waits until it is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  async dispose(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('error', () => done(false));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (d) => done(d.toString().startsWith('+PONG')));
  });
}

/**
 * An ioredis client for fleet tests, set up as a fleet user would: commands fail at once
 * while disconnected (no offline queue, no per-command retries) and it reconnects every 50 ms.
 */
export async function connectRedis(port: number): Promise<import('ioredis').Redis> {
  const { Redis } = await import('ioredis');
  const client = new Redis(port, '127.0.0.1', {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
  });
  await new Promise((resolve, reject) => {
    client.once('ready', resolve);
    client.once('end', () => reject(new Error('redis connection ended')));
  });
  client.on('error', () => {
    // Connection errors are expected while a test has the server down.
  });
  return client;
}

/**
 * A node-redis (`redis`) client set up the same way: commands fail at once while
 * disconnected (`disableOfflineQueue`) and it reconnects every 50 ms.
 */
export async function connectNodeRedis(port: number): Promise<import('redis').RedisClientType> {
  const { createClient } = await import('redis');
  const client = createClient({
    socket: { host: '127.0.0.1', port, reconnectStrategy: () => 50 },
    disableOfflineQueue: true,
  });
  client.on('error', () => {
    // Connection errors are expected while a test has the server down.
  });
  await client.connect();
  return client as import('redis').RedisClientType;
}
