import { delayedClients, type HerdStrategy } from '../src/sim/herd-run.js';

/**
 * A herd strategy that cheats: it knows a rate in advance and sends every retry on one shared
 * schedule at exactly that rate — a rejected caller takes the next free slot, never earlier
 * than its rejection. No client can learn a rate faster than knowing it, so on the same model
 * the best of these rows is what pacing at a fixed rate can achieve, the yardstick for adaptive
 * pacing (bench/herd-best-fixed-rate.ts, bench/real-limiter-herds.ts).
 */
export function fixedRateStrategy(perSecond: number): HerdStrategy {
  if (!(perSecond > 0)) throw new Error(`a fixed rate must be > 0 per second, got ${perSecond}`);
  return {
    name: `fixed ${perSecond}/s`,
    description: `every retry on one shared schedule at ${perSecond}/s, known in advance`,
    random: false,
    create(sim, _setup, wire) {
      const slots = new SharedSchedule(perSecond);
      const attempts = new Map<number, number>();
      return delayedClients(sim, wire, {
        send(client) {
          const attempt = (attempts.get(client) ?? 0) + 1;
          attempts.set(client, attempt);
          return attempt;
        },
        served() {},
        rejected: (_client, now) => slots.next(now) - now,
      });
    },
  };
}

/** One send slot per 1 / rate, handed out in order of asking, never before the asker's `now`. */
export class SharedSchedule {
  private nextSlot = Number.NEGATIVE_INFINITY;
  private readonly gapMs: number;

  constructor(perSecond: number) {
    this.gapMs = 1_000 / perSecond;
  }

  /** The time of the next free slot at or after `now` (ms); it is taken. */
  next(now: number): number {
    const at = Math.max(this.nextSlot, now);
    this.nextSlot = at + this.gapMs;
    return at;
  }
}
