/**
 * Time, injected. Every policy and runtime in kindly reads time and waits through a
 * `Clock`, never through `Date.now`, `performance.now` or `setTimeout` directly, so the
 * same decision code runs on the real clock and on a virtual one (the simulator, tests).
 */
export interface Clock {
  /** Wall-clock time in ms since the Unix epoch. Used only to interpret HTTP dates. */
  now(): number;
  /** Monotonic time in ms from an arbitrary origin. Used for every duration and deadline. */
  monotonic(): number;
  /**
   * Resolves after `ms` milliseconds. Rejects with `signal.reason` as soon as `signal`
   * aborts (also when it is already aborted). A sleep keeps a Node process alive, because
   * a retry that is waiting is work in progress.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /**
   * Runs `callback` after `ms` milliseconds unless cancelled first. Returns the cancel
   * function. Timers made here do not keep a Node process alive on their own: they guard
   * work that something else (a socket, a promise chain) already keeps alive.
   *
   * `fromMs`, when given, is a `monotonic()` reading the caller has just taken: the delay
   * counts from it, and the clock need not be read again (a hot-path saving; a clock may
   * ignore it, as the delay then counts from a moment later by the time in between).
   */
  schedule(ms: number, callback: () => void, fromMs?: number): Cancel;
}

/** Cancels a scheduled callback. Calling it after the callback ran, or twice, is harmless. */
export type Cancel = () => void;

/** What a timer can run without a closure of its own (`SystemClock.expireAfter`). */
export interface Expiring {
  expire(): void;
}

/** A timer armed by `SystemClock.expireAfter`. Cancelling it after it fired, or twice, is harmless. */
export interface TimerHandle {
  cancel(): void;
}
