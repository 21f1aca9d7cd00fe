// TCP proxies (node:net) on 127.0.0.1, port 0, in front of a real server, that hold bytes on
// their way: a callee across a network, on loopback.
// - `delayProxy` holds every byte the server sends for a fixed time: a way back that takes
//   that long. The way there is untouched, so a server that frees a worker when it answers
//   frees it at once, and its caller learns of it later.
// - `jitterProxy` holds every chunk each way for a drawn time: a path whose latencies spread.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface DelayProxy {
  url: string;
  close(): Promise<void>;
}

/** A proxy to `target` whose `join` wires each client's socket to its own upstream one. */
async function proxyTo(target: { port: number }, join: (client: Socket, upstream: Socket) => void): Promise<DelayProxy> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.on('close', () => upstream.destroy());
    join(client, upstream);
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

export async function delayProxy(target: { port: number }, returnDelayMs: number): Promise<DelayProxy> {
  if (!(returnDelayMs >= 0)) throw new Error(`Expected a delay of 0 ms or more, got ${returnDelayMs}`);
  return proxyTo(target, (client, upstream) => {
    client.pipe(upstream);
    // Every chunk waits the same time, so they leave in the order they came.
    upstream.on('data', (chunk: Buffer) => {
      setTimeout(() => {
        if (!client.destroyed) client.write(chunk);
      }, returnDelayMs);
    });
    upstream.on('close', () => setTimeout(() => client.destroy(), returnDelayMs));
  });
}

/**
 * Each way holds every chunk for `delayMs()` (called once per chunk). Chunks of one connection
 * leave in the order they came, each no sooner than the one before it, as TCP keeps them.
 */
export async function jitterProxy(target: { port: number }, delayMs: () => number): Promise<DelayProxy> {
  /** Passes `from`'s chunks on to `to`; returns when the last one passed leaves (`performance.now()`). */
  const relay = (from: Socket, to: Socket): (() => number) => {
    let freeAt = 0;
    from.on('data', (chunk: Buffer) => {
      const delay = delayMs();
      if (!(delay >= 0)) throw new Error(`Expected a delay of 0 ms or more, got ${delay}`);
      const now = performance.now();
      freeAt = Math.max(freeAt, now + delay);
      setTimeout(() => {
        if (!to.destroyed) to.write(chunk);
      }, freeAt - now);
    });
    return () => freeAt;
  };
  return proxyTo(target, (client, upstream) => {
    relay(client, upstream);
    const backFreeAt = relay(upstream, client);
    // What the server sent before it closed is still on its way back.
    upstream.on('close', () => setTimeout(() => client.destroy(), Math.max(0, backFreeAt() - performance.now())));
  });
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
