import { type Random, SeededRandom } from '../random/random.js';
import { EventQueue } from './event-queue.js';

/** Reacts to one event. `arg` is the integer the event was scheduled with (a client id, a slot). */
export type EventHandler = (arg: number, now: number) => void;

/** Identifies a registered handler; what `Simulation.at` schedules. */
export type EventKind = number;

/** An event scheduled with a payload (`Simulation.schedule`): it can be cancelled until it fires. */
export interface ScheduledEvent {
  /** When it fires (virtual ms). */
  readonly atMs: number;
  /** Stops it from firing; `false` if it already fired or was cancelled. */
  cancel(): boolean;
}

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
  /** Payload events waiting to fire, by slot (`undefined`: free, or cancelled). */
  private readonly payloads: Array<((now: number) => void) | undefined> = [];
  private readonly freeSlots: number[] = [];
  private payloadKind = -1;

  constructor(options: { seed: number }) {
    this.seed = options.seed;
    this.random = new SeededRandom(options.seed);
  }

  /**
   * Schedules `handler(payload, now)` `delayMs` from now, with any payload (an object, a
   * request, a message), and returns a handle that can cancel it — a timeout that an answer
   * makes moot, a retry the caller gave up. Ties run in scheduling order with every other
   * event. Costs an allocation per event: for millions of events, prefer `on` + `after`.
   */
  schedule<T>(delayMs: number, handler: (payload: T, now: number) => void, payload: T): ScheduledEvent {
    if (!(delayMs < Number.POSITIVE_INFINITY)) notATime('schedule', 'delayMs', delayMs);
    return this.scheduleAt(delayMs > 0 ? this.time + delayMs : this.time, handler, payload);
  }

  /** `schedule` at absolute time `timeMs` (never in the past: earlier means now). */
  scheduleAt<T>(timeMs: number, handler: (payload: T, now: number) => void, payload: T): ScheduledEvent {
    if (!(timeMs < Number.POSITIVE_INFINITY)) notATime('scheduleAt', 'timeMs', timeMs);
    if (this.payloadKind < 0) this.payloadKind = this.on((slot, now) => this.firePayload(slot, now));
    const slot = this.freeSlots.length > 0 ? (this.freeSlots.pop() as number) : this.payloads.length;
    let live = true;
    const fire = (now: number) => {
      live = false;
      handler(payload, now);
    };
    this.payloads[slot] = fire;
    const atMs = Math.max(timeMs, this.time);
    this.queue.push(atMs, this.payloadKind, slot);
    const payloads = this.payloads;
    return {
      atMs,
      cancel(): boolean {
        if (!live) return false;
        live = false;
        // The queued event still fires, finds the slot empty and frees it.
        if (payloads[slot] === fire) payloads[slot] = undefined;
        return true;
      },
    };
  }

  private firePayload(slot: number, now: number): void {
    const fire = this.payloads[slot];
    this.payloads[slot] = undefined;
    this.freeSlots.push(slot);
    fire?.(now);
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
    if (!(time < Number.POSITIVE_INFINITY)) notATime('at', 'time', time);
    this.queue.push(Math.max(time, this.time), kind, arg);
  }

  /** Schedules `kind(arg)` `delayMs` from now. */
  after(delayMs: number, kind: EventKind, arg = 0): void {
    if (!(delayMs < Number.POSITIVE_INFINITY)) notATime('after', 'delayMs', delayMs);
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

/**
 * A time that is not a number would fire at once (NaN compares false with everything) and
 * one at +Infinity at the end of a run with no end: both are a scenario's mistake, said here.
 * (A time in the past is allowed: it means now.)
 */
function notATime(method: string, name: string, value: number): never {
  throw new RangeError(`Simulation.${method}: \`${name}\` must be a finite number of ms, got ${value}`);
}
