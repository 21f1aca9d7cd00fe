import { OptionsValidator } from '../options/validate.js';
import type { Simulation } from './engine.js';

export interface SteadyArrivalsOptions {
  /** New requests per second. */
  ratePerSecond: number;
  /** How long requests keep arriving, ms. */
  durationMs: number;
  /** @default 0 */
  startMs?: number;
}

/**
 * Open-loop steady load: request i (0-based) arrives at `startMs + i × 1000 / rate`, whatever
 * happened to earlier ones — the way independent users keep clicking while a service
 * struggles. Each time is computed from i, not by adding intervals, so no rounding drift
 * accumulates; only the next arrival is ever queued.
 */
export class SteadyArrivals {
  /** Requests that will arrive in total: ⌈duration × rate / 1000⌉. */
  readonly count: number;
  private readonly startMs: number;
  private readonly rate: number;
  private readonly kind: number;

  constructor(
    private readonly sim: Simulation,
    options: SteadyArrivalsOptions,
    onArrival: (request: number, now: number) => void,
  ) {
    new OptionsValidator('steady arrivals')
      .knownKeys(options, ['ratePerSecond', 'durationMs', 'startMs'])
      .number('ratePerSecond', options.ratePerSecond, Number.MIN_VALUE, Number.MAX_VALUE)
      .check(options.ratePerSecond !== undefined, 'Expected `ratePerSecond`, got undefined')
      .duration('durationMs', options.durationMs)
      .check(options.durationMs !== undefined, 'Expected `durationMs`, got undefined')
      .duration('startMs', options.startMs)
      .done();
    this.startMs = options.startMs ?? 0;
    this.rate = options.ratePerSecond;
    this.count = Math.ceil((options.durationMs * options.ratePerSecond) / 1000);
    this.kind = sim.on((i, now) => {
      if (i + 1 < this.count) sim.at(this.timeOf(i + 1), this.kind, i + 1);
      onArrival(i, now);
    });
  }

  /** When request `i` arrives. */
  timeOf(i: number): number {
    return this.startMs + (i * 1000) / this.rate;
  }

  /** Queues the first arrival; call once before `sim.run()`. */
  start(): void {
    if (this.count > 0) this.sim.at(this.timeOf(0), this.kind, 0);
  }
}
