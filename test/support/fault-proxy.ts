// A TCP proxy (node:net) on 127.0.0.1, port 0, in front of a real server, that breaks the
// connection on the wire in one chosen way. Faults are injected here, not by mocking fetch.
import { connect, createServer, type Server, type Socket } from 'node:net';

export type WireFault =
  /** Passes bytes through untouched. */
  | 'none'
  /** Resets the connection as soon as it is accepted, before the request is read. */
  | 'reset-before-request'
  /** Reads the request, then resets. */
  | 'reset-after-request'
  /** Reads the request and never answers. */
  | 'accept-then-hang'
  /** Sends half a status line and headers, then nothing. */
  | 'half-headers'
  /** Forwards the response's first 300 bytes (headers and a little body), then resets. */
  | 'half-body'
  /** Forwards the response one byte every 100 ms. */
  | 'one-byte-per-100ms';

export interface FaultProxy {
  url: string;
  /** Connections the proxy holds open right now (client side). */
  readonly open: number;
  close(): Promise<void>;
}

export async function faultProxy(target: { port: number }, fault: WireFault): Promise<FaultProxy> {
  const sockets = new Set<Socket>();
  const timers = new Set<ReturnType<typeof setInterval>>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => undefined);
    if (fault === 'reset-before-request') {
      client.resetAndDestroy();
      return;
    }
    if (fault === 'reset-after-request') {
      client.once('data', () => client.resetAndDestroy());
      return;
    }
    if (fault === 'accept-then-hang') {
      client.resume();
      return;
    }
    if (fault === 'half-headers') {
      client.once('data', () => client.write('HTTP/1.1 200 OK\r\nContent-Le'));
      return;
    }
    const upstream = connect(target.port, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => {
      sockets.delete(upstream);
      if (fault !== 'one-byte-per-100ms') client.destroy();
    });
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    client.pipe(upstream);
    if (fault === 'none') {
      upstream.pipe(client);
    } else if (fault === 'half-body') {
      let sent = 0;
      upstream.on('data', (chunk: Buffer) => {
        if (sent >= 300) return;
        const part = chunk.subarray(0, 300 - sent);
        sent += part.length;
        // Reset once the part is handed to the kernel: a reset with the write still queued in
        // Node would drop it, and the client would see no response at all.
        if (sent >= 300) client.write(part, () => client.resetAndDestroy());
        else client.write(part);
      });
    } else {
      const pending: number[] = [];
      upstream.on('data', (chunk: Buffer) => {
        for (const byte of chunk) pending.push(byte);
      });
      const timer = setInterval(() => {
        const byte = pending.shift();
        if (byte !== undefined && !client.destroyed) client.write(Buffer.from([byte]));
      }, 100);
      timers.add(timer);
      client.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    get open() {
      return [...sockets].length;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
