import { createHash } from 'node:crypto';
import { OptionsValidator } from '../options/validate.js';
import type { Cancel, Clock } from '../time/clock.js';
import { systemClock } from '../time/system-clock.js';
import { FleetLink, type FleetLinkOptions } from './fleet-link.js';
import {
  type BreakerRecord,
  type BreakerSyncRequest,
  type BudgetSyncReply,
  type BudgetSyncRequest,
  type FleetScope,
  type FleetStore,
  type PaceBookReply,
  type PaceBookRequest,
  type PaceSyncReply,
  type PaceSyncRequest,
  RATE_SHARE,
  type StoreAvailability,
} from './fleet-store.js';
import { commandSender, type RedisClientLike, type SendCommand } from './redis-client.js';
import { BreakerNews, newsConnection } from './redis-news.js';
import {
  BATCH_SCRIPT,
  BATCHABLE_SCRIPTS,
  BOOK_SLOT_SCRIPT,
  BREAKER_SCRIPT,
  BUDGET_SCRIPT,
  PACE_SYNC_SCRIPT,
} from './redis-scripts.js';

export interface RedisStoreOptions {
  /**
   * Your Redis client, as configured for your deployment: an ioredis `Redis` or a connected
   * node-redis client (tested: ioredis 6.0.0, redis 6.3.1). kindly sends its scripts through
   * it and never closes it. Tip: ioredis's `enableOfflineQueue: false` (node-redis's
   * `disableOfflineQueue: true`) makes commands fail at once while it is disconnected
   * instead of waiting for `timeoutMs`.
   */
  client: RedisClientLike;
  /** Prefix of every key kindly writes. @default 'kindly' */
  prefix?: string;
  /**
   * An operation slower than this is abandoned and the store counts as down: calls fall back
   * to local policies rather than wait on Redis. @default 5
   */
  timeoutMs?: number;
  /** While down, a `PING` is tried this often (in the background) to find Redis again. @default 500 */
  reconnectMs?: number;
  /**
   * The connection breaker news arrives on (Redis pub/sub: a subscribed connection can do
   * nothing else). By default a `duplicate()` of `client`, opened when the first downstream
   * uses the store and closed by `close()`; a client you pass is yours (kindly only
   * unsubscribes). `false`: no news — downstreams then read the shared breakers every 80 ms
   * while called, as they do whenever news is not arriving (this process still publishes its
   * own breakers' openings for the others).
   */
  subscriber?: RedisClientLike | false;
  /** @default the system clock */
  clock?: Clock;
}

export const REDIS_STORE_DEFAULTS = {
  prefix: 'kindly',
  timeoutMs: 5,
  reconnectMs: 500,
} as const;

/** Timeouts in a row that take the store down (an error does at once). */
const SLOW_TO_DOWN = 3;

const KEYS = ['client', 'prefix', 'timeoutMs', 'reconnectMs', 'subscriber', 'clock'] as const;

interface Script {
  source: string;
  sha: string;
  /** Its id in `BATCH_SCRIPT` (0: not batchable). */
  id: number;
}

function script(source: string): Script {
  const id = (BATCHABLE_SCRIPTS as readonly string[]).indexOf(source) + 1;
  return { source, sha: createHash('sha1').update(source).digest('hex'), id };
}

const BUDGET = script(BUDGET_SCRIPT);
const BREAKER = script(BREAKER_SCRIPT);
const BOOK_SLOT = script(BOOK_SLOT_SCRIPT);
const PACE_SYNC = script(PACE_SYNC_SCRIPT);
const BATCH = script(BATCH_SCRIPT);

/** One operation waiting for the round trip it will be sent in. */
interface PendingOperation {
  script: Script;
  keys: string[];
  argv: string[];
  /** The reply entry kept as sent (a string), −1: none. */
  stringAt: number;
  resolve: (reply: number[] | undefined) => void;
}

/** Counters for tests and benchmarks. */
export interface RedisStoreCounters {
  /** Script runs sent to Redis (each one round trip; a batch of operations is one). */
  commands: number;
  /** Operations asked of the store and sent (several may share one round trip). */
  operations: number;
  /** Operations that failed or timed out (each fell back to local state). */
  failures: number;
  /** Operations not even sent, because the store was known to be down. */
  skipped: number;
}

/**
 * The fleet store on Redis. Every operation is one Lua script (`EVALSHA`, loaded with `EVAL`
 * after a `NOSCRIPT`, e.g. after a restart), atomic and timed by the server's `TIME`.
 *
 * Keys are `<prefix>:{<downstream>}:<policy>:<key>`: the `{downstream}` hash tag puts every
 * key of one downstream in one Redis Cluster slot. Every key has a TTL refreshed on write,
 * so keys of downstreams no longer called expire.
 *
 * Operations of one downstream asked for in the same turn of the event loop (a background
 * sync's budget and breaker steps, a herd's slot bookings) are sent together, as one script
 * run (`BATCH_SCRIPT`): one round trip instead of one each, and each operation still atomic,
 * in the order asked.
 *
 * Failure semantics: an operation that errors or takes longer than `timeoutMs` resolves to
 * `undefined` (its caller uses local state); an error, or three timeouts in a row, mark the
 * store down. While down, operations are not sent at all (the
 * callers use their local policies at no extra cost) and a `PING` every `reconnectMs` looks
 * for Redis in the background; when it answers, the store is up again and listeners
 * (`onAvailability`) resync. Keys that vanish (eviction, a restart without persistence)
 * read as fresh state: a closed breaker, an empty budget window, an idle pacer.
 */
export class RedisStore implements FleetStore {
  readonly fleetStore = true as const;
  readonly prefix: string;
  readonly timeoutMs: number;
  readonly reconnectMs: number;
  readonly counters: RedisStoreCounters = { commands: 0, operations: 0, failures: 0, skipped: 0 };
  /** Operations waiting for this turn's round trip, per downstream (hash tag). */
  private readonly pending = new Map<string, PendingOperation[]>();
  private flushQueued = false;
  private readonly send: SendCommand;
  private readonly clock: Clock;
  private readonly listeners = new Set<(change: StoreAvailability) => void>();
  private up = true;
  private reconnecting: Cancel | undefined;
  private closed = false;
  private slowInRow = 0;
  private lastSlowAt = Number.NEGATIVE_INFINITY;
  private readonly client: unknown;
  private readonly subscriber: unknown;
  /** Made when the first listener asks for news (`undefined`: not yet, or none possible). */
  private news: BreakerNews | undefined;
  private newsTried = false;
  private readonly newsListeners = new Set<(scope: FleetScope | undefined) => void>();
  /** Where breakers' opening is published: `<prefix>:breaker-news`. */
  readonly newsChannel: string;

  constructor(options: RedisStoreOptions) {
    const v = new OptionsValidator('redis store');
    v.knownKeys(options, KEYS)
      .duration('timeoutMs', options?.timeoutMs, { min: 1 })
      .duration('reconnectMs', options?.reconnectMs, { min: 1 });
    const send = commandSender(options?.client);
    v.check(
      send !== undefined,
      `Expected \`client\` to be an ioredis or node-redis client (with call() or sendCommand()), got ${typeof options?.client}`,
    );
    v.check(
      options?.prefix === undefined || (typeof options.prefix === 'string' && options.prefix.length > 0),
      `Expected \`prefix\` to be a non-empty string, got ${JSON.stringify(options?.prefix)}`,
    );
    v.check(
      options?.subscriber === undefined || options.subscriber === false || commandSender(options.subscriber) !== undefined,
      `Expected \`subscriber\` to be an ioredis or node-redis client, or false, got ${typeof options?.subscriber}`,
    );
    v.done();
    this.client = options.client;
    this.subscriber = options.subscriber;
    this.send = send as SendCommand;
    this.prefix = options.prefix ?? REDIS_STORE_DEFAULTS.prefix;
    this.timeoutMs = options.timeoutMs ?? REDIS_STORE_DEFAULTS.timeoutMs;
    this.reconnectMs = options.reconnectMs ?? REDIS_STORE_DEFAULTS.reconnectMs;
    this.clock = options.clock ?? systemClock;
    this.newsChannel = `${this.prefix}:breaker-news`;
  }

  get available(): boolean {
    // Closed, nothing is sent: a link that still saw the store as available offered the
    // shared queue, every booking answered \`undefined\` at once, and paced calls spun.
    return this.up && !this.closed;
  }

  /** Links one downstream to this store (`FleetStore.link`). */
  link(options: Omit<FleetLinkOptions, 'store'>): FleetLink {
    return new FleetLink({ ...options, store: this });
  }

  onAvailability(listener: (change: StoreAvailability) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Stops using Redis: operations are skipped (downstreams keep their local policies) and the
   * reconnect loop ends. The client is yours to close, after this.
   */
  close(): void {
    if (this.closed) return;
    const wasUp = this.up;
    this.closed = true;
    this.reconnecting?.();
    this.reconnecting = undefined;
    this.news?.close();
    this.news = undefined;
    this.newsListeners.clear();
    // Links fall back to their local policies as when Redis goes down (claims decided, the
    // fleet's queue no longer followed); a store already down told them so then.
    if (wasUp) this.emit({ available: false, reason: 'store closed' });
  }

  get newsLive(): boolean {
    return this.news?.live === true;
  }

  onBreakerNews(listener: (scope: FleetScope | undefined) => void): () => void {
    this.newsListeners.add(listener);
    if (!this.newsTried && !this.closed) {
      this.newsTried = true;
      const connection = newsConnection(this.client, this.subscriber);
      if (connection !== undefined) {
        this.news = new BreakerNews(
          connection.sub,
          connection.owned,
          this.newsChannel,
          (message) => this.tellNews(parseNews(message)),
          () => this.tellNews(undefined),
          connection.source,
        );
      }
    }
    return () => this.newsListeners.delete(listener);
  }

  private tellNews(scope: FleetScope | undefined | null): void {
    // Anyone with access to the channel can publish on it: what does not parse is dropped.
    if (scope === null) return;
    for (const listener of this.newsListeners) {
      try {
        listener(scope);
      } catch {
        // A listener's bug must not stop the others or the subscription.
      }
    }
  }

  /** The Redis key of one policy's record, e.g. `kindly:{payments}:breaker:payments`. */
  key(scope: FleetScope, policy: string): string {
    return `${this.prefix}:{${escapeTag(scope.downstream)}}:${policy}:${scope.key}`;
  }

  async budget(scope: FleetScope, r: BudgetSyncRequest): Promise<BudgetSyncReply | undefined> {
    const reply = await this.run(
      BUDGET,
      scope,
      [this.key(scope, 'budget')],
      [
        r.bucketMs,
        r.windowBuckets,
        r.ratio,
        r.reserve,
        r.requests,
        r.returned,
        r.returnBucket,
        r.spent,
        r.want,
        ttl(r.bucketMs * r.windowBuckets),
        r.owner,
      ],
    );
    if (reply === undefined) return undefined;
    const [now, bucket, granted, available, requests, retries, owners] = reply;
    return { now, bucket, granted, available, requests, retries, owners } as BudgetSyncReply;
  }

  async breaker(scope: FleetScope, r: BreakerSyncRequest): Promise<BreakerRecord | undefined> {
    const reply = await this.run(
      BREAKER,
      scope,
      [this.key(scope, 'breaker')],
      [
        r.owner,
        r.generation,
        r.report,
        r.breakMs,
        r.breakGrowth,
        r.maxBreakMs,
        r.breakJitter,
        r.u,
        r.wantProbe ? '1' : '0',
        r.probeLeaseMs,
        ttl(r.ttlMs),
        // Only a report can open the breaker; news goes out only if it did — from every
        // process, also one that does not listen itself (`subscriber: false`).
        ...(r.report === 'open' ? [this.newsChannel, JSON.stringify([scope.downstream, scope.key])] : []),
      ],
      5,
    );
    if (reply === undefined) return undefined;
    return {
      now: Number(reply[0]),
      state: Number(reply[1]) as BreakerRecord['state'],
      generation: Number(reply[2]),
      openUntil: Number(reply[3]),
      opensInRow: Number(reply[4]),
      probeOwner: String(reply[5]),
      probeUntil: Number(reply[6]),
    };
  }

  async bookSlot(scope: FleetScope, r: PaceBookRequest): Promise<PaceBookReply | undefined> {
    const reply = await this.run(
      BOOK_SLOT,
      scope,
      [this.key(scope, 'pace'), this.key(scope, 'pace-rates'), this.key(scope, 'pace-answers')],
      [
        r.owner,
        r.rate,
        r.contributionMs,
        r.minRate,
        ttl(r.ttlMs),
        r.kind ?? RATE_SHARE,
        r.served ?? 0,
        r.rejected ?? 0,
        // No limit goes as −1 (store times are positive); a limit in the past still books nothing.
        r.latest === undefined || !(r.latest < Number.POSITIVE_INFINITY) ? -1 : Math.max(r.latest, 0),
        r.unpaced ?? 0,
      ],
    );
    if (reply === undefined) return undefined;
    return {
      now: reply[0],
      ticket: reply[1],
      baseTicket: reply[2],
      baseAt: reply[3],
      gap: reply[4],
      estimate: reply[5],
    } as PaceBookReply;
  }

  async pace(scope: FleetScope, r: PaceSyncRequest): Promise<PaceSyncReply | undefined> {
    const reply = await this.run(
      PACE_SYNC,
      scope,
      [this.key(scope, 'pace'), this.key(scope, 'pace-rates'), this.key(scope, 'pace-answers')],
      [
        r.owner,
        r.rate,
        r.contributionMs,
        r.active ? '1' : '0',
        r.quietMs,
        r.hintMs,
        ttl(r.ttlMs),
        r.kind ?? RATE_SHARE,
        r.minRate,
        r.served ?? 0,
        r.rejected ?? 0,
        r.unpaced ?? 0,
      ],
    );
    if (reply === undefined) return undefined;
    return {
      now: reply[0],
      activeUntil: reply[1],
      hintUntil: reply[2],
      baseTicket: reply[3],
      baseAt: reply[4],
      gap: reply[5],
      estimate: reply[6],
    } as PaceSyncReply;
  }

  /**
   * Runs one operation's script; resolves to its reply as numbers (the entry at `stringAt`, if
   * any, kept as sent), or `undefined` on failure, timeout or while down. Never rejects. The
   * operation is sent at the end of this turn of the event loop, with any other operations of
   * the same downstream asked for meanwhile.
   */
  private run(
    s: Script,
    scope: FleetScope,
    keys: string[],
    args: (string | number)[],
    stringAt = -1,
  ): Promise<number[] | undefined> {
    if (!this.up || this.closed) {
      this.counters.skipped++;
      return Promise.resolve(undefined);
    }
    return new Promise((resolve) => {
      let queue = this.pending.get(scope.downstream);
      if (queue === undefined) this.pending.set(scope.downstream, (queue = []));
      queue.push({ script: s, keys, argv: args.map(String), stringAt, resolve });
      if (!this.flushQueued) {
        this.flushQueued = true;
        // A microtask: what runs before it — the rest of this synchronous code and the
        // microtasks already queued — joins the batch; the write is not delayed to a later task.
        queueMicrotask(() => this.flush());
      }
    });
  }

  /** Sends every waiting operation: one round trip per downstream. */
  private flush(): void {
    this.flushQueued = false;
    const queues = [...this.pending.values()];
    this.pending.clear();
    for (const queue of queues) this.sendOperations(queue);
  }

  private sendOperations(ops: PendingOperation[]): void {
    if (!this.up || this.closed) {
      this.counters.skipped += ops.length;
      for (const op of ops) op.resolve(undefined);
      return;
    }
    this.counters.operations += ops.length;
    if (ops.length === 1) {
      const op = ops[0] as PendingOperation;
      void this.execute(op.script, op.keys, op.argv, 1).then((reply) => op.resolve(asNumbers(reply, op.stringAt)));
      return;
    }
    const keys: string[] = [];
    const argv: string[] = [String(ops.length)];
    for (const op of ops) {
      keys.push(...op.keys);
      argv.push(String(op.script.id), String(op.keys.length), String(op.argv.length), ...op.argv);
    }
    void this.execute(BATCH, keys, argv, ops.length).then((replies) => {
      if (replies !== undefined && replies.length !== ops.length) {
        this.fail(`unexpected batch reply of ${replies.length} entries for ${ops.length} operations`);
        replies = undefined;
      }
      for (let i = 0; i < ops.length; i++) {
        const op = ops[i] as PendingOperation;
        op.resolve(asNumbers(replies?.[i], op.stringAt));
      }
    });
  }

  /**
   * Sends one script run (one round trip) for `weight` operations; resolves to its reply
   * array, or `undefined` on failure, timeout or a reply that is not an array. Never rejects.
   */
  private execute(s: Script, keys: string[], argv: string[], weight: number): Promise<unknown[] | undefined> {
    this.counters.commands++;
    const sentAt = this.clock.monotonic();
    return new Promise((resolve) => {
      let settled = false;
      // The verdict waits one more turn of the event loop: on a busy loop our timer and the
      // answer become due together, and timers run first — an answer already on the socket
      // (or, with node-redis, a command whose write was deferred to setImmediate) wins.
      let cancel = this.clock.schedule(this.timeoutMs, () => {
        if (!settled) cancel = this.clock.schedule(0, timedOut);
      });
      const timedOut = () => {
        if (settled) return;
        settled = true;
        // One slow answer (a busy event loop here or there) only skips these operations;
        // several in a row mean Redis is slow, and the store is taken down. Operations that
        // were in flight together (a burst at start-up) count as one piece of evidence.
        this.counters.failures += weight;
        if (sentAt >= this.lastSlowAt) {
          this.lastSlowAt = this.clock.monotonic();
          if (++this.slowInRow >= SLOW_TO_DOWN) this.fail(`${SLOW_TO_DOWN} answers in a row slower than ${this.timeoutMs} ms`);
        }
        resolve(undefined);
      };
      const done = (value: unknown) => {
        if (settled) return;
        settled = true;
        cancel();
        this.slowInRow = 0;
        if (!Array.isArray(value)) {
          this.fail(`unexpected reply ${typeof value}`);
          resolve(undefined);
          return;
        }
        resolve(value);
      };
      const failed = (error: unknown) => {
        if (settled) return;
        settled = true;
        cancel();
        this.fail(error instanceof Error ? error.message : String(error));
        resolve(undefined);
      };
      this.send(['EVALSHA', s.sha, String(keys.length), ...keys, ...argv]).then(done, (error: unknown) => {
        if (settled) return;
        if (!String((error as Error)?.message ?? error).includes('NOSCRIPT')) {
          failed(error);
          return;
        }
        // First use, or Redis restarted and lost its script cache: EVAL also caches it.
        this.counters.commands++;
        this.send(['EVAL', s.source, String(keys.length), ...keys, ...argv]).then(done, failed);
      });
    });
  }

  private fail(reason: string): void {
    this.counters.failures++;
    this.slowInRow = 0;
    if (!this.up) return;
    this.up = false;
    this.emit({ available: false, reason });
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnecting !== undefined) return;
    this.reconnecting = this.clock.schedule(this.reconnectMs, () => {
      this.reconnecting = undefined;
      this.ping();
    });
  }

  private ping(): void {
    let settled = false;
    const cancel = this.clock.schedule(this.timeoutMs * 10, () => {
      if (settled) return;
      settled = true;
      this.scheduleReconnect();
    });
    this.send(['PING']).then(
      () => {
        if (settled) return;
        settled = true;
        cancel();
        if (this.closed) return;
        this.up = true;
        this.emit({ available: true });
      },
      () => {
        if (settled) return;
        settled = true;
        cancel();
        this.scheduleReconnect();
      },
    );
  }

  private emit(change: StoreAvailability): void {
    for (const listener of this.listeners) {
      try {
        listener(change);
      } catch {
        // A listener's bug must not stop the others or the store.
      }
    }
  }
}

/** Creates the Redis fleet store: `downstream(name, { store: redisStore({ client }) })`. */
export function redisStore(options: RedisStoreOptions): RedisStore {
  return new RedisStore(options);
}

/** One operation's reply as numbers (the entry at `stringAt` kept as sent); `undefined` if it is not an array. */
function asNumbers(reply: unknown, stringAt: number): number[] | undefined {
  if (!Array.isArray(reply)) return undefined;
  return reply.map((x, i) => (i === stringAt ? x : Number(x))) as number[];
}

/** A news message, `[downstream, key]` as JSON; `null` when it is anything else. */
function parseNews(message: string): FleetScope | null {
  if (message.length > 64 * 1024) return null;
  try {
    const value: unknown = JSON.parse(message);
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { downstream: value[0], key: value[1] };
    }
  } catch {
    // Not JSON: not ours.
  }
  return null;
}

/** TTL of a key: at least a minute, so a brief lull does not reset fleet state. */
function ttl(activeMs: number): number {
  return Math.ceil(Math.max(60_000, 2 * activeMs));
}

/** Braces would end or empty the hash tag; downstream names keep their meaning percent-encoded. */
function escapeTag(name: string): string {
  return name.replace(/[{}%]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
