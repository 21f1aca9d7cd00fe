/** A value now (the memory store) or later (a networked store such as Redis). */
export type MaybePromise<T> = T | Promise<T>;

/** What `addToWindow` did. */
export interface WindowResult {
  /** False when the add was refused because the sum would have gone below `min`. */
  applied: boolean;
  /** The window's sum after the operation (unchanged when refused). */
  sum: number;
}

/** A stored value with the version `compareAndSet` checks. Versions start at 1. */
export interface Versioned {
  value: string;
  version: number;
}

/**
 * Note: the fleet store that ships (`FleetStore`, `kindly-calls/redis`) is purpose-built
 * rather than made of these primitives: it leases budget tokens (no round trip per call),
 * leases the half-open probe to one owner with a TTL, and sums per-process rate
 * contributions when booking a slot. This interface remains the shape of single-key atomic
 * steps for in-process use (`MemoryStore`).
 *
 * Where budgets, breakers and pacers can keep state that a fleet shares. The
 * policies themselves are synchronous and local; a fleet runtime mirrors them through a
 * store. Every operation is a single atomic step on one key — the shape of one Redis Lua
 * script — and every time it needs comes from the caller's injected clock (bucket numbers,
 * `notBeforeMs`), never from the store's. Use a clock shared by the fleet for those (the
 * wall clock, `Clock.now()`), not `monotonic()`, whose origin differs per process. TTLs only
 * decide when idle keys may be forgotten.
 *
 * Three primitives cover the three policies:
 *
 * - `addToWindow` — a sliding window of numbered buckets with an optional floor: the sum
 *   over buckets `[bucket − windowBuckets + 1, bucket]`, and an add that is refused when it
 *   would take that sum below `min`. Bucket numbers are `⌊time / bucketMs⌋`.
 * - `get` / `compareAndSet` — a small versioned record (JSON) for state machines.
 * - `bookSlot` — a shared virtual queue: `slot = max(notBeforeMs, next)`, `next = slot + spacingMs`.
 *
 * How each policy maps onto it (keys share a `{downstream}` hash tag so one script may touch
 * several of them on Redis Cluster):
 *
 * - **RetryBudget**, as one Finagle balance per budget key `budget:{ds}:key`, windowBuckets =
 *   `buckets`, ttl = `windowMs`. A first attempt deposits `addToWindow(k, b, +ratio)`; a retry
 *   withdraws `addToWindow(k, b, −1, …, min = −reserve)` and is granted iff `applied` — the
 *   fleet-wide form of `retries + 1 ≤ ratio × requests + reserve` (the reserve is then the
 *   fleet's, not each instance's). `available = ⌊sum + reserve⌋`.
 * - **CircuitBreaker**, state `cb:{ds}` = `{ state, openUntil, opensInRow, generation }`
 *   changed only by `compareAndSet`, so one instance's trip wins and every instance reads the
 *   same `openUntil`. Ratio mode counts in `cb:{ds}:calls` / `cb:{ds}:failures` with
 *   `addToWindow`; consecutive mode keeps its count in the record. Half-open probe slots are a
 *   countdown, `addToWindow(cb:{ds}:probes:{generation}, 0, −1, 1, ttl, min = −halfOpenProbes)`
 *   (released with +1), so the fleet admits at most `halfOpenProbes` probes together.
 * - **Pacer**, the learned curve `pace:{ds}` = `{ W, tₚ, ceiling, cutGate, hintUntil }` via
 *   `compareAndSet` (a cut or an entry is one CAS), and the queue
 *   `bookSlot(pace:{ds}:next, max(now, hintUntil), 1 / rate, ttl)`: one virtual queue for
 *   the whole fleet, which is what lets a fleet recover at the callee's real capacity.
 *   Delivery-rate samples are added per instance with `addToWindow`
 *   (`pace:{ds}:delivered`), so D̂ is the fleet's.
 *
 * A networked store can fail: a runtime using one should fall back to its local policies and
 * report it (fail-open, with an event), never throw into the caller's call.
 */
export interface StateStore {
  /**
   * Adds `by` to bucket `bucket` of the windowed counter `key` — unless `min` is given and
   * the window's sum would end below it — and returns the sum over the last `windowBuckets`
   * buckets ending at `bucket`. Buckets older than the window may be discarded. The key
   * expires `ttlMs` after its last write.
   */
  addToWindow(
    key: string,
    bucket: number,
    by: number,
    windowBuckets: number,
    ttlMs: number,
    min?: number,
  ): MaybePromise<WindowResult>;

  /** Sum of `key` over the `windowBuckets` buckets ending at `bucket` (0 when absent). */
  sumWindow(key: string, bucket: number, windowBuckets: number): MaybePromise<number>;

  /** The record at `key`, or `undefined`. */
  get(key: string): MaybePromise<Versioned | undefined>;

  /**
   * Writes `value` if the record's version is `expectedVersion` (0: only if absent). Returns
   * the new version, or `undefined` when someone else wrote first (read again and retry).
   */
  compareAndSet(key: string, expectedVersion: number, value: string, ttlMs: number): MaybePromise<number | undefined>;

  /**
   * Books a slot in the virtual queue `key`: returns `slot = max(notBeforeMs, next)` and
   * sets `next = slot + spacingMs`.
   */
  bookSlot(key: string, notBeforeMs: number, spacingMs: number, ttlMs: number): MaybePromise<number>;

  /** Forgets `key` (any kind). */
  delete(key: string): MaybePromise<void>;
}
