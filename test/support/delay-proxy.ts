// A TCP proxy (node:net) on 127.0.0.1, port 0, in front of a real server, that holds every
// byte the server sends for a fixed time before passing it on: a way back that takes that
// long, as a callee across a network has. The way there is untouched, so a server that
// frees a worker when it answers frees it at once, and its caller learns of it later.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DelayProxy {
  url: string;
  close(): Promise<void>;
}

export async function delayProxy(target: { port: number }, returnDelayMs: number): Promise<DelayProxy> {
  if (!(returnDelayMs >= 0)) throw new Error(`Expected a delay of 0 ms or more, got ${returnDelayMs}`);
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream);
    client.on('close', () => upstream.destroy());
    // Every chunk waits the same time, so they leave in the order they came.
    upstream.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
      }, returnDelayMs);
    });
    upstream.on('close', () => setTimeout(() => client.destroy(), returnDelayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/**
 * `server` (anything with a `url` and a `close`) behind a `delayProxy` holding its answers
 * `returnDelayMs`: the same object, its `url` the proxy's (same path), its `close` closing both.
 */
export async function withReturnDelay<T extends { url: string; close(): Promise<void> }>(
  server: T,
  returnDelayMs: number,
): Promise<T> {
  const url = new URL(server.url);
  const proxy = await delayProxy({ port: Number(url.port) }, returnDelayMs);
  return {
    ...server,
    url: proxy.url + url.pathname,
    close: async () => {
      await proxy.close();
      await server.close();
    },
  };
}
