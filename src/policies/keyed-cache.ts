/**
 * Values by string key, at most `maxKeys` of them, the least recently used evicted first;
 * every operation O(1) (a `Map` keeps recency: a use moves the key to the recent end).
 *
 * A value that must not be dropped yet — `keep(value)` says so: work in flight, a breaker
 * in its break — is moved to the recent end instead of being evicted, and the next one is
 * tried. After `MAX_SKIPS` of them the cache holds one key more than `maxKeys` rather than
 * lose state that protects a callee; once values become droppable, each insertion evicts two
 * and adds one until the cache is back at its limit. `keep` must turn false in time for a
 * value nobody uses any more, or the cache grows with every such key. Used for the per-key
 * lanes and the keyed retry budgets.
 */
export class KeyedCache<V> {
  /** How many kept values one insertion steps over before it lets the cache grow. */
  static readonly MAX_SKIPS = 8;

  readonly maxKeys: number;
  private readonly map = new Map<string, V>();
  private readonly create: (key: string) => V;
  private readonly keep: ((value: V) => boolean) | undefined;
  // The last key used is the most recent already; skipping its refresh keeps the common case
  // (one hot key) free of Map deletes and inserts — and, with its value kept beside it, free
  // of the Map lookup too (every call draws on its budget through here).
  private lastKey: string | undefined;
  private lastValue: V | undefined;
  private evictedCount = 0;

  constructor(options: { maxKeys: number; create: (key: string) => V; keep?: (value: V) => boolean }) {
    this.maxKeys = options.maxKeys;
    this.create = options.create;
    this.keep = options.keep;
  }

  /** The value of `key`, created if needed; marks it most recently used. */
  get(key: string): V {
    if (key === this.lastKey) return this.lastValue as V;
    const map = this.map;
    let value = map.get(key);
    if (value === undefined) {
      // Two tries: one makes room, the other brings a cache that grew over kept values back down.
      if (map.size >= this.maxKeys) {
        this.evictOne();
        if (map.size >= this.maxKeys) this.evictOne();
      }
      value = this.create(key);
      map.set(key, value);
    } else {
      map.delete(key);
      map.set(key, value);
    }
    this.lastKey = key;
    this.lastValue = value;
    return value;
  }

  /** The value of `key` if held, without creating it or changing its recency. */
  find(key: string): V | undefined {
    return this.map.get(key);
  }

  has(key: string): boolean {
    return this.map.has(key);
  }

  delete(key: string): boolean {
    if (key === this.lastKey) this.forgetLast();
    return this.map.delete(key);
  }

  /** Keys held, least recently used first. */
  keys(): IterableIterator<string> {
    return this.map.keys();
  }

  /** Values held, least recently used first. */
  values(): IterableIterator<V> {
    return this.map.values();
  }

  get size(): number {
    return this.map.size;
  }

  /** Values evicted because `maxKeys` was reached. */
  get evicted(): number {
    return this.evictedCount;
  }

  private evictOne(): void {
    const map = this.map;
    for (let skips = 0; skips <= KeyedCache.MAX_SKIPS; skips++) {
      const oldest = map.keys().next();
      if (oldest.done) return;
      const key = oldest.value;
      const value = map.get(key) as V;
      map.delete(key);
      if (this.keep === undefined || !this.keep(value)) {
        if (key === this.lastKey) this.forgetLast();
        this.evictedCount++;
        return;
      }
      map.set(key, value);
    }
  }

  private forgetLast(): void {
    this.lastKey = undefined;
    this.lastValue = undefined;
  }
}
