/**
 * Breaker news over Redis pub/sub: the connection that listens for "a process opened a
 * breaker" (published by the breaker script), so that calm downstreams need not poll Redis
 * every few dozen milliseconds to hear it.
 *
 * A subscribed connection can do nothing else, so it is a second connection: by default a
 * `duplicate()` of the store's client (same host, TLS, auth and options), opened when the
 * first downstream listens and closed with the store — or when that client ends (its
 * `'end'` event, e.g. after `disconnect()`), so that a process which closes its client
 * without closing the store still exits. Both common clients are handled:
 *
 * - ioredis: `subscribe(channel)` and `'message'` events; it re-subscribes by itself after a
 *   reconnect, and this class subscribes again on every `'ready'` as well (harmless);
 * - node-redis (v4+): `subscribe(channel, listener)`; it re-subscribes by itself too.
 *
 * `live` is true only while the subscription is confirmed and the connection ready. When the
 * connection drops, `onGap` runs once: news may have been lost meanwhile, so listeners go back
 * to reading the shared state at the fast period until `live` is true again.
 */

/** The parts of an ioredis client a subscriber uses. */
interface IoRedisSubscriber {
  status: string;
  call(command: string, ...args: string[]): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  disconnect(): void;
  connect?(): Promise<unknown>;
  duplicate?(): IoRedisSubscriber;
}

/** The parts of a node-redis client a subscriber uses. */
interface NodeRedisSubscriber {
  isReady: boolean;
  isOpen: boolean;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string, channel: string) => void): Promise<unknown>;
  unsubscribe(channel: string, listener?: (message: string, channel: string) => void): Promise<unknown>;
  destroy?(): void;
  disconnect?(): Promise<unknown>;
  duplicate?(): NodeRedisSubscriber;
}

type Subscriber = { kind: 'ioredis'; conn: IoRedisSubscriber } | { kind: 'node-redis'; conn: NodeRedisSubscriber };

/** Whether `client` can be used (or duplicated) as a news subscriber. */
function asSubscriber(client: unknown): Subscriber | undefined {
  if (typeof client !== 'object' || client === null) return undefined;
  const c = client as Partial<IoRedisSubscriber & NodeRedisSubscriber>;
  if (typeof c.on !== 'function' || typeof c.subscribe !== 'function' || typeof c.unsubscribe !== 'function') {
    return undefined;
  }
  // ioredis first, as in `commandSender`: it has `call`; node-redis has `connect` and no `call`.
  if (typeof c.call === 'function' && typeof c.disconnect === 'function') {
    return { kind: 'ioredis', conn: client as IoRedisSubscriber };
  }
  if (typeof c.connect === 'function') return { kind: 'node-redis', conn: client as NodeRedisSubscriber };
  return undefined;
}

/**
 * The connection news will come through: `subscriber` as given (the user's, never closed
 * here), or a duplicate of `client` (owned, closed by `close`). `undefined`: neither works —
 * no news, the store is polled.
 */
export function newsConnection(
  client: unknown,
  subscriber: unknown,
): { sub: Subscriber; owned: boolean; source?: ClientEvents } | undefined {
  if (subscriber === false) return undefined;
  if (subscriber !== undefined) {
    const sub = asSubscriber(subscriber);
    return sub === undefined ? undefined : { sub, owned: false };
  }
  const source = client as { duplicate?: () => unknown } | null;
  if (typeof source?.duplicate !== 'function' || asSubscriber(client) === undefined) return undefined;
  let copy: unknown;
  try {
    copy = source.duplicate();
  } catch {
    return undefined;
  }
  const sub = asSubscriber(copy);
  return sub === undefined ? undefined : { sub, owned: true, source: client as ClientEvents };
}

/** The client a subscriber was duplicated from: its end ends the duplicate. */
interface ClientEvents {
  on(event: string, listener: () => void): unknown;
  removeListener?(event: string, listener: () => void): unknown;
}

export class BreakerNews {
  private subscribed = false;
  private closed = false;
  private readonly listener = (message: string, channel: string) => {
    if (channel === this.channel && typeof message === 'string') this.onMessage(message);
  };
  private readonly sourceEnded = () => this.close();

  constructor(
    private readonly sub: Subscriber,
    private readonly owned: boolean,
    private readonly channel: string,
    private readonly onMessage: (message: string) => void,
    private readonly onGap: () => void,
    private readonly source?: ClientEvents,
  ) {
    source?.on('end', this.sourceEnded);
    const conn = sub.conn;
    // An 'error' event without a listener would throw out of the client: a protection
    // library must not crash its caller because Redis went away.
    conn.on('error', () => this.gap());
    if (sub.kind === 'ioredis') {
      conn.on('close', () => this.gap());
      conn.on('ready', () => this.subscribe());
      conn.on('message', (channel, message) => this.listener(message as string, channel as string));
      if (sub.conn.status === 'ready') this.subscribe();
      // A duplicate of a `lazyConnect` client waits for a first command: connect it now.
      else if (owned && sub.conn.status === 'wait') sub.conn.connect?.().catch(() => this.gap());
    } else {
      conn.on('end', () => this.gap());
      conn.on('reconnecting', () => this.gap());
      conn.on('ready', () => {
        if (!this.closed && !this.subscribed) this.subscribe();
      });
      if (sub.conn.isReady) this.subscribe();
      else if (owned && !sub.conn.isOpen) sub.conn.connect().catch(() => this.gap());
    }
  }

  /** Whether news arrives now: subscribed, and the connection ready. */
  get live(): boolean {
    if (!this.subscribed || this.closed) return false;
    return this.sub.kind === 'ioredis' ? this.sub.conn.status === 'ready' : this.sub.conn.isReady;
  }

  /** Unsubscribes; closes the connection if it was made here. Never throws. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.subscribed = false;
    this.source?.removeListener?.('end', this.sourceEnded);
    const sub = this.sub;
    try {
      if (sub.kind === 'ioredis') {
        if (this.owned) sub.conn.disconnect();
        else sub.conn.unsubscribe(this.channel).catch(() => {});
      } else if (this.owned) {
        if (typeof sub.conn.destroy === 'function') sub.conn.destroy();
        else sub.conn.disconnect?.().catch(() => {});
      } else {
        sub.conn.unsubscribe(this.channel, this.listener).catch(() => {});
      }
    } catch {
      // Closing a connection that is already gone.
    }
  }

  private subscribe(): void {
    if (this.closed) return;
    const sub = this.sub;
    const subscribing =
      sub.kind === 'ioredis' ? sub.conn.subscribe(this.channel) : sub.conn.subscribe(this.channel, this.listener);
    subscribing.then(
      () => {
        if (!this.closed) this.subscribed = true;
      },
      () => this.gap(),
    );
  }

  private gap(): void {
    if (!this.subscribed) return;
    this.subscribed = false;
    if (!this.closed) this.onGap();
  }
}
