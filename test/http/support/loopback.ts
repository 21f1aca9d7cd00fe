// Real HTTP servers on 127.0.0.1, port 0, for integration tests. Never another address.
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach } from 'vitest';

export interface Loopback {
  server: Server;
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** Connections accepted since start. */
  readonly accepted: number;
  /** Connections currently open (counted from 'connection' and each socket's 'close'). */
  readonly open: number;
  close(): Promise<void>;
}

export async function listen(handler: RequestListener<typeof IncomingMessage, typeof ServerResponse>): Promise<Loopback> {
  const server = createServer(handler);
  const sockets = new Set<Socket>();
  let accepted = 0;
  server.on('connection', (socket) => {
    accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    get accepted() {
      return accepted;
    },
    get open() {
      return sockets.size;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * For one test file: the returned `serve` starts a loopback server, and every server a test
 * started is closed after it.
 */
export function serverPerTest(): (handler: Parameters<typeof listen>[0]) => Promise<Loopback> {
  const servers: Loopback[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });
  return async (handler) => {
    const server = await listen(handler);
    servers.push(server);
    return server;
  };
}

/** A port on 127.0.0.1 with nothing listening: a connection attempt is refused. */
export async function refusedPort(): Promise<string> {
  const probe = await listen(() => undefined);
  const url = probe.url;
  await probe.close();
  return url;
}

/** Reads a request body to the end. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Waits until `condition()` holds, polling the event loop (for server-side bookkeeping that settles after a response). */
export async function until(condition: () => boolean, what: string, limitMs = 5_000): Promise<void> {
  const started = performance.now();
  while (!condition()) {
    if (performance.now() - started > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
