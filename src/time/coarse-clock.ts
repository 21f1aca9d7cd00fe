/**
 * A monotonic reading refreshed by a ticker instead of on every read.
 *
 * Reading the real clock costs ~40 ns on this machine (Node 20–26: `performance.now()`,
 * `Date.now()` and `process.hrtime()` alike), a tenth of a whole call through budget,
 * breaker, bulkhead, retry and attempt timeout. The common call reads time only to file its
 * start in windows seconds wide (the retry budget's, the breaker's) and to arm its attempt
 * timeout, so it takes this reading instead: one the ticker took at most `tickMs` ago while
 * the event loop turns (longer only while something blocks the loop, when no timer can fire
 * either). It is never ahead of the real clock. Envoy's event loop keeps an approximate
 * monotonic time for the same reason: code on its hot path need not read the clock.
 *
 * The ticker runs only while read: the first read after a quiet spell reads the real clock
 * and starts it; a tick that finds nobody read since the previous one stops it. It is unref'd,
 * so it never keeps a process alive. At each tick `onTick` gets the fresh reading (the timer
 * wheel files the timeouts armed from coarse starts then, so they never expire early).
 */
export class CoarseClock {
  private value = 0;
  private handle: ReturnType<typeof setInterval> | undefined;
  private readSinceTick = false;

  constructor(
    private readonly precise: () => number,
    readonly tickMs: number,
    private readonly onTick: (nowMs: number) => void,
  ) {}

  /** Whether the ticker runs (for tests). */
  get ticking(): boolean {
    return this.handle !== undefined;
  }

  /** The latest reading: at most `tickMs` old while the loop turns, never ahead of the clock. */
  now(): number {
    if (this.handle === undefined) this.start();
    this.readSinceTick = true;
    return this.value;
  }

  private start(): void {
    this.value = this.precise();
    this.handle = setInterval(() => this.tick(), this.tickMs);
    (this.handle as { unref?: () => void }).unref?.();
  }

  private tick(): void {
    const now = this.precise();
    this.value = now;
    this.onTick(now);
    if (this.readSinceTick) {
      this.readSinceTick = false;
      return;
    }
    clearInterval(this.handle);
    this.handle = undefined;
  }
}
