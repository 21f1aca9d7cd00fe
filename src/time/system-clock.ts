import type { Cancel, Clock, Expiring, TimerHandle } from './clock.js';
import { CoarseClock } from './coarse-clock.js';
import { onAbort, type Unsubscribe } from './on-abort.js';
import { MAX_NATIVE_DELAY_MS, TimerWheel, type WheelEntry } from './timer-wheel.js';

/**
 * Timeouts at least this long go through the shared wheel; shorter ones get a native timer
 * each, because a bucket's lateness would be a noticeable fraction of them.
 */
const WHEEL_THRESHOLD_MS = 1000;
/** Wheel granularity: a long timeout fires at most this much late (never early). */
const WHEEL_RESOLUTION_MS = 25;

/** Set at the clock's first reading (see `monotonicNow`). */
let perf: Performance | undefined;

/**
 * `performance.now()`, the `performance` global read at the clock's first use rather than when
 * this module loads: on Node that global is a lazy getter whose first read loads `perf_hooks`
 * (1–3 ms of a cold start on this machine, Node 20–26), which every `import 'kindly-calls'` paid.
 * Kept once read: on Node 20 the getter costs more than the `now()` call itself. (Node's
 * `process.hrtime` avoids the load, but allocates per read: `bench/clock-read.mjs` reads it
 * 1.5–2.6 ns dearer, and `kindly:retry+timeout` measured 3–5 % dearer on Node 26.)
 */
function monotonicNow(): number {
  if (perf === undefined) perf = globalThis.performance;
  return perf.now();
}

/**
 * How old a coarse reading may be while the event loop turns. Every unstamped timeout waits at
 * most this long to be filed, so a long attempt timeout armed from a coarse start fires at most
 * this plus `WHEEL_RESOLUTION_MS` late. The ticker runs only while calls are made, and then
 * costs one timer callback per tick (~200 a second: well under 0.1 % of a core).
 */
const COARSE_TICK_MS = 5;

/**
 * Node, Bun and Deno run intervals on time; a browser throttles them in background tabs (to
 * once a second, or a minute), which would leave a coarse reading that old. Browsers read
 * `performance.now()` without a system call, so they keep reading it.
 */
const TIMERS_RUN_ON_TIME = globalThis.process?.versions?.node !== undefined;

/** The real clock: `Date`, `performance.now()` and Node/browser timers. */
export class SystemClock implements Clock {
  private readonly wheel = new TimerWheel(monotonicNow, WHEEL_RESOLUTION_MS);
  private readonly coarse = new CoarseClock(monotonicNow, COARSE_TICK_MS, (nowMs) => this.wheel.stamp(nowMs));

  /**
   * The system's wall clock, `Date.now()` — the one other code reads: grpc-js turns a deadline
   * into `grpc-timeout` against it, and servers date their `Retry-After`s by it. (It was
   * `performance.timeOrigin + performance.now()`, which reads ~0.4–0.7 ms ahead of `Date.now()`
   * on this machine, Node 20 and 24, and drifts further from it whenever the system clock is
   * adjusted: a deadline handed to grpc-js went out that much longer than the call had left.)
   */
  now(): number {
    return Date.now();
  }

  monotonic(): number {
    return monotonicNow();
  }

  /**
   * A `monotonic()` reading at most `COARSE_TICK_MS` old while the event loop turns (see
   * `CoarseClock`), for what files a time only in windows seconds wide; never ahead of
   * `monotonic()`. A timeout counted from it is armed with `expireAfterCoarse`.
   */
  coarseMonotonic(): number {
    return this.coarse.now();
  }

  /**
   * Whether `coarseMonotonic` stays that fresh on this runtime: not in a browser, whose
   * background tabs run the ticker once a second or less often. Callers read `monotonic()`
   * where it does not.
   */
  readonly coarseKeepsTime = TIMERS_RUN_ON_TIME;

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const until = monotonicNow() + ms;
      let handle: ReturnType<typeof setTimeout>;
      let unsubscribe: Unsubscribe | undefined;
      // Native timers hold at most 2^31 − 1 ms; a longer sleep is taken in pieces.
      const wait = (left: number) => {
        handle = setTimeout(
          () => {
            const rest = until - monotonicNow();
            if (rest >= 1 && left > MAX_NATIVE_DELAY_MS) wait(rest);
            else {
              unsubscribe?.();
              resolve();
            }
          },
          Math.min(MAX_NATIVE_DELAY_MS, Math.max(0, left)),
        );
      };
      wait(ms);
      if (signal !== undefined) {
        unsubscribe = onAbort(signal, () => {
          clearTimeout(handle);
          reject(signal.reason);
        });
      }
    });
  }

  schedule(ms: number, callback: () => void, fromMs?: number): Cancel {
    if (ms >= WHEEL_THRESHOLD_MS) return this.wheel.add(ms, callback, fromMs);
    const handle = setTimeout(callback, ms);
    handle.unref?.();
    return () => clearTimeout(handle);
  }

  /**
   * As `schedule(ms, () => entry.expire(), fromMs)`, without a closure or a handle object: a
   * long timeout links `entry` itself into the shared wheel (cancel it with `entry.wheel?.cancel(entry)`) and
   * returns `undefined`; a short one gets a native timer and returns its handle.
   */
  expireAfter(ms: number, entry: WheelEntry, fromMs?: number): TimerHandle | undefined {
    if (ms >= WHEEL_THRESHOLD_MS) {
      this.wheel.expireAfter(ms, entry, fromMs);
      return undefined;
    }
    return new NativeTimer(ms, entry);
  }

  /**
   * As `expireAfter(ms, entry, fromMs)` where `fromMs` came from `coarseMonotonic()`: the delay
   * counts from the next tick's reading instead (a long timeout waits unstamped in the wheel
   * until then), so it never expires early. A short one counts from now, as always.
   */
  expireAfterCoarse(ms: number, entry: WheelEntry): TimerHandle | undefined {
    if (ms >= WHEEL_THRESHOLD_MS) {
      this.wheel.expireAfterUnstamped(ms, entry);
      return undefined;
    }
    return new NativeTimer(ms, entry);
  }

  /** Whether the coarse reading's ticker runs (it stops once nobody reads it); for tests. */
  get coarseTicking(): boolean {
    return this.coarse.ticking;
  }

  /** Live wheel entries; used by leak tests. */
  get pendingWheelTimers(): number {
    return this.wheel.size;
  }
}

/** A short timeout on a native timer of its own. */
class NativeTimer implements TimerHandle {
  private readonly handle: ReturnType<typeof setTimeout>;
  constructor(ms: number, target: Expiring) {
    this.handle = setTimeout(expireTarget, ms, target);
    this.handle.unref?.();
  }

  cancel(): void {
    clearTimeout(this.handle);
  }
}

function expireTarget(target: Expiring): void {
  target.expire();
}

/** The process-wide real clock, the default for every downstream. */
export const systemClock = new SystemClock();
