// Plain HTTP/2 servers on 127.0.0.1, port 0, that fail the way real infrastructure fails a gRPC
// call: a proxy answering an HTTP status without a gRPC one, and a peer that resets the
// connection. Never another address.
import { createServer, type Http2Server, type OutgoingHttpHeaders } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';

export interface FaultyServer {
  address: string;
  /** Requests (HTTP/2 streams) received so far. */
  readonly requests: number;
  close(): Promise<void>;
}

async function start(server: Http2Server, sockets: Set<Socket>, counted: { requests: number }): Promise<FaultyServer> {
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${port}`,
    get requests() {
      return counted.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Answers every request with HTTP `status` and `headers`, headers only (what a proxy sends). */
export function answeringStatus(status: number, headers: OutgoingHttpHeaders = {}): Promise<FaultyServer> {
  const server = createServer();
  const counted = { requests: 0 };
  server.on('stream', (stream) => {
    counted.requests++;
    stream.respond({ ':status': status, ...headers }, { endStream: true });
  });
  return start(server, new Set(), counted);
}

/** Resets (TCP RST) every connection once a request has arrived on it: the request was sent, no answer comes. */
export function resettingConnections(): Promise<FaultyServer> {
  const server = createServer();
  const sockets = new Set<Socket>();
  const counted = { requests: 0 };
  server.on('stream', () => {
    counted.requests++;
    for (const socket of sockets) socket.resetAndDestroy();
  });
  return start(server, sockets, counted);
}
