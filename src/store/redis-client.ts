/**
 * The smallest part of a Redis client kindly needs: send one command, get its reply. Both
 * common clients are accepted as they are, so a user passes the client they already have
 * (with its own TLS, auth, Sentinel or Cluster setup):
 *
 * - ioredis: `client.call(command, ...args)`;
 * - node-redis (`redis` / `@redis/client`, v4+): `client.sendCommand([command, ...args])`.
 */
export type SendCommand = (args: readonly string[]) => Promise<unknown>;

/** An ioredis client (or anything with its `call`). */
export interface IoRedisLike {
  call(command: string, ...args: string[]): Promise<unknown>;
}

/** A node-redis client (or anything with its `sendCommand`). */
export interface NodeRedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}

export type RedisClientLike = IoRedisLike | NodeRedisLike;

/** Wraps a client in `SendCommand`, or returns `undefined` when it is neither kind. */
export function commandSender(client: unknown): SendCommand | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const c = client as Partial<IoRedisLike & NodeRedisLike>;
  // ioredis first: it also has a `sendCommand`, but one that takes its own Command objects.
  if (typeof c.call === 'function') {
    const call = c.call.bind(client);
    return (args) => call(args[0] as string, ...args.slice(1));
  }
  if (typeof c.sendCommand === 'function') {
    const send = c.sendCommand.bind(client);
    return (args) => send([...args]);
  }
  return undefined;
}
