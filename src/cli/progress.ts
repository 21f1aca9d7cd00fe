import type { Clock } from '../time/clock.js';

/** Anything with `write(text)`, like `process.stderr`. */
export interface Writable {
  write(text: string): unknown;
}

/** Runs shorter than this show no progress at all. */
const QUIET_MS = 1_000;
/** Redraws at most this often. */
const REDRAW_MS = 100;

/**
 * A one-line percentage on a terminal's stderr for long simulations. Silent for the first
 * second (short runs stay clean), then redrawn in place at most ten times a second; `done()`
 * erases it so the output that follows starts on a clean line. Reads wall time through the
 * injected clock: the simulation itself never sees it.
 */
export class Progress {
  private readonly startedAt: number;
  private lastDrawAt = Number.NEGATIVE_INFINITY;
  private drawn = false;

  constructor(
    private readonly out: Writable,
    private readonly clock: Pick<Clock, 'monotonic'>,
    private readonly label: string,
  ) {
    this.startedAt = clock.monotonic();
  }

  update(done: number, total: number): void {
    const now = this.clock.monotonic();
    if (now - this.startedAt < QUIET_MS || now - this.lastDrawAt < REDRAW_MS) return;
    this.lastDrawAt = now;
    const pct = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : 0;
    this.out.write(`\r${this.label}: ${pct}%\x1b[K`);
    this.drawn = true;
  }

  done(): void {
    if (this.drawn) this.out.write('\r\x1b[K');
    this.drawn = false;
  }
}
