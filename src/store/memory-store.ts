import type { Clock } from '../time/clock.js';
import type { StateStore, Versioned, WindowResult } from './state-store.js';

type Entry =
  | { kind: 'window'; buckets: Map<number, number>; expiresAt: number }
  | { kind: 'record'; value: string; version: number; expiresAt: number }
  | { kind: 'slot'; next: number; expiresAt: number };

/** Writes between two sweeps of expired keys: amortises the sweep to O(1) per write. */
const SWEEP_EVERY = 1024;

/**
 * The in-process `StateStore` (the default). Synchronous: every method returns its
 * value directly. TTLs run on the injected clock's monotonic time; an expired key reads as
 * absent and is swept lazily, so memory stays bounded by the keys written within their TTL.
 */
export class MemoryStore implements StateStore {
  private readonly entries = new Map<string, Entry>();
  private writes = 0;

  constructor(private readonly clock: Pick<Clock, 'monotonic'>) {}

  /** Live keys (for tests and leak checks). */
  get size(): number {
    this.sweep();
    return this.entries.size;
  }

  addToWindow(key: string, bucket: number, by: number, windowBuckets: number, ttlMs: number, min?: number): WindowResult {
    const now = this.clock.monotonic();
    let entry = this.live(key, now);
    if (entry !== undefined && entry.kind !== 'window') throw kindError(key, entry.kind, 'window');
    if (entry === undefined) {
      entry = { kind: 'window', buckets: new Map(), expiresAt: 0 };
      this.entries.set(key, entry);
    }
    const buckets = entry.buckets;
    const oldest = bucket - windowBuckets + 1;
    let sum = 0;
    for (const [b, count] of buckets) {
      if (b < oldest) buckets.delete(b);
      else if (b <= bucket) sum += count;
    }
    const applied = min === undefined || sum + by >= min;
    if (applied) {
      buckets.set(bucket, (buckets.get(bucket) ?? 0) + by);
      sum += by;
    }
    entry.expiresAt = now + ttlMs;
    this.wrote();
    return { applied, sum };
  }

  sumWindow(key: string, bucket: number, windowBuckets: number): number {
    const entry = this.live(key, this.clock.monotonic());
    if (entry === undefined) return 0;
    if (entry.kind !== 'window') throw kindError(key, entry.kind, 'window');
    const oldest = bucket - windowBuckets + 1;
    let sum = 0;
    for (const [b, count] of entry.buckets) if (b >= oldest && b <= bucket) sum += count;
    return sum;
  }

  get(key: string): Versioned | undefined {
    const entry = this.live(key, this.clock.monotonic());
    if (entry === undefined) return undefined;
    if (entry.kind !== 'record') throw kindError(key, entry.kind, 'record');
    return { value: entry.value, version: entry.version };
  }

  compareAndSet(key: string, expectedVersion: number, value: string, ttlMs: number): number | undefined {
    const now = this.clock.monotonic();
    const entry = this.live(key, now);
    if (entry !== undefined && entry.kind !== 'record') throw kindError(key, entry.kind, 'record');
    const current = entry?.version ?? 0;
    if (current !== expectedVersion) return undefined;
    const version = current + 1;
    this.entries.set(key, { kind: 'record', value, version, expiresAt: now + ttlMs });
    this.wrote();
    return version;
  }

  bookSlot(key: string, notBeforeMs: number, spacingMs: number, ttlMs: number): number {
    const now = this.clock.monotonic();
    let entry = this.live(key, now);
    if (entry !== undefined && entry.kind !== 'slot') throw kindError(key, entry.kind, 'slot');
    if (entry === undefined) {
      entry = { kind: 'slot', next: Number.NEGATIVE_INFINITY, expiresAt: 0 };
      this.entries.set(key, entry);
    }
    const slot = Math.max(entry.next, notBeforeMs);
    entry.next = slot + spacingMs;
    entry.expiresAt = now + ttlMs;
    this.wrote();
    return slot;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }

  private live(key: string, now: number): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private wrote(): void {
    if (++this.writes % SWEEP_EVERY === 0) this.sweep();
  }

  private sweep(): void {
    const now = this.clock.monotonic();
    for (const [key, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(key);
  }
}

function kindError(key: string, actual: string, wanted: string): TypeError {
  return new TypeError(`State store key ${JSON.stringify(key)} holds a ${actual}, not a ${wanted}`);
}
