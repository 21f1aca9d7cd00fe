// A TCP proxy (node:net) on 127.0.0.1, port 0, in front of a real server, whose way there and
// way back each hold every chunk for a drawn time (`delayMs`, called once per chunk): a path
// whose latencies spread, as a callee across a network has. Chunks of one connection leave in
// the order they came, each no sooner than the one before it, as TCP keeps them in order.
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface JitterProxy {
  url: string;
  close(): Promise<void>;
}

export async function jitterProxy(target: { port: number }, delayMs: () => number): Promise<JitterProxy> {
  const sockets = new Set<Socket>();
  /** Passes `from`'s chunks on to `to`; returns when the last one passed leaves (ms, `performance.now()`). */
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
  const server: Server = createServer((client) => {
    const upstream = connect(target.port, '127.0.0.1');
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    relay(client, upstream);
    const backFreeAt = relay(upstream, client);
    client.on('close', () => upstream.destroy());
    // What the server sent before it closed is still on its way back.
    upstream.on('close', () => setTimeout(() => client.destroy(), Math.max(0, backFreeAt() - performance.now())));
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
