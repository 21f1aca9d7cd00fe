import { type Random, SeededRandom } from '../random/random.js';
import { EventQueue } from './event-queue.js';

/** Reacts to one event. `arg` is the integer the event was scheduled with (a client id, a slot). */
export type EventHandler = (arg: number, now: number) => void;

/** Identifies a registered handler; what `Simulation.at` schedules. */
export type EventKind = number;

/**
 * A discrete-event simulation on virtual time. One seeded `Random` is created with it, before
 * anything runs, and every random choice of every component draws from it in event order: the
 * same seed gives the same run, bit for bit.
 *
 * Events are `(time, kind, arg)` triples in an allocation-free `EventQueue`; ties run in the order they
 * were scheduled. Handlers are plain synchronous functions — no promises on the hot path, which
 * is what lets a run simulate millions of attempts per second while calling kindly's real
 * policies.
 */
export class Simulation {
  readonly random: Random;
  readonly seed: number;
  private readonly queue = new EventQueue();
  private readonly handlers: EventHandler[] = [];
  private time = 0;
  private fired = 0;
  private stopped = false;

  constructor(options: { seed: number }) {
    this.seed = options.seed;
    this.random = new SeededRandom(options.seed);
  }

  /** Current virtual time, ms. */
  get now(): number {
    return this.time;
  }

  /** Events fired so far. */
  get eventsFired(): number {
    return this.fired;
  }

  /** Events waiting to fire. */
  get pending(): number {
    return this.queue.size;
  }

  /** Registers a handler; the returned kind is what `at`/`after` schedule. */
  on(handler: EventHandler): EventKind {
    this.handlers.push(handler);
    return this.handlers.length - 1;
  }

  /** Schedules `kind(arg)` at absolute time `time` (never in the past: earlier means now). */
  at(time: number, kind: EventKind, arg = 0): void {
    this.queue.push(Math.max(time, this.time), kind, arg);
  }

  /** Schedules `kind(arg)` `delayMs` from now. */
  after(delayMs: number, kind: EventKind, arg = 0): void {
    this.queue.push(delayMs > 0 ? this.time + delayMs : this.time, kind, arg);
  }

  /** Makes `run` return after the current event. */
  stop(): void {
    this.stopped = true;
  }

  /**
   * Fires events in order until none is left, `stop()` is called, or the next event is later
   * than `untilMs` (time then advances to `untilMs`). Returns the number of events fired.
   */
  run(untilMs: number = Number.POSITIVE_INFINITY): number {
    const queue = this.queue;
    const handlers = this.handlers;
    const before = this.fired;
    this.stopped = false;
    while (!this.stopped && queue.size > 0 && queue.peekTime() <= untilMs) {
      queue.pop();
      this.time = queue.poppedTime;
      this.fired++;
      handlers[queue.poppedKind]!(queue.poppedArg, this.time);
    }
    if (!this.stopped && untilMs !== Number.POSITIVE_INFINITY && untilMs > this.time) this.time = untilMs;
    return this.fired - before;
  }
}
