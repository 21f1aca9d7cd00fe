import { OptionsValidator } from '../options/validate.js';
import type { EventKind, Simulation } from './engine.js';

export interface SlotServerOptions {
  /** Requests served per slot; the rest of the slot's arrivals are rejected. */
  capacity: number;
  /** Slot length in whole ms; slot k covers [k × slotMs, (k + 1) × slotMs). */
  slotMs: number;
}

/**
 * Receives the server's answer to one request: `ok` is true for the served ones, false for
 * a 429 rejection (with no wait hint). Called at the end of the request's slot.
 */
export type SlotResponse = (client: number, ok: boolean, now: number) => void;

/**
 * A server with a fixed capacity per time slot: of the requests that arrive in a
 * slot, the first `capacity` — in arrival order — are served and the rest are rejected with
 * 429, and every response (served or not) is delivered at the end of the slot, in arrival
 * order. One event per busy slot, however many requests it holds.
 */
export class SlotServer {
  readonly capacity: number;
  readonly slotMs: number;
  private readonly endKind: EventKind;
  // Two buffers, by slot parity: at a slot boundary the ending slot's responses are still
  // waiting while requests for the next slot may already arrive (same instant, earlier seq).
  private readonly buffers: [Int32Array, Int32Array] = [new Int32Array(256), new Int32Array(256)];
  private readonly lengths: [number, number] = [0, 0];
  private currentSlot = -1;

  constructor(
    private readonly sim: Simulation,
    options: SlotServerOptions,
    private readonly respond: SlotResponse,
  ) {
    // Whole milliseconds keep slot boundaries exact in floating point, so a request sent at
    // the very instant a slot ends is always counted in the next one.
    new OptionsValidator('slot server')
      .knownKeys(options, ['capacity', 'slotMs'])
      .check(options.capacity !== undefined, 'Expected `capacity`, got undefined')
      .integer('capacity', options.capacity, 1)
      .check(options.slotMs !== undefined, 'Expected `slotMs`, got undefined')
      .integer('slotMs', options.slotMs, 1)
      .done();
    this.capacity = options.capacity;
    this.slotMs = options.slotMs;
    this.endKind = sim.on((slot, now) => this.endSlot(slot, now));
  }

  /** Slot index of time `t`. */
  slotOf(t: number): number {
    return Math.floor(t / this.slotMs);
  }

  /** A request from `client` arrives now. */
  arrive(client: number, now: number): void {
    const slot = Math.floor(now / this.slotMs);
    const b = slot & 1;
    if (slot !== this.currentSlot) {
      this.currentSlot = slot;
      this.sim.at((slot + 1) * this.slotMs, this.endKind, slot);
    }
    let buffer = this.buffers[b]!;
    const n = this.lengths[b]!;
    if (n === buffer.length) {
      const bigger = new Int32Array(n * 2);
      bigger.set(buffer);
      this.buffers[b] = buffer = bigger;
    }
    buffer[n] = client;
    this.lengths[b] = n + 1;
  }

  private endSlot(slot: number, now: number): void {
    const b = slot & 1;
    const buffer = this.buffers[b]!;
    const n = this.lengths[b]!;
    const capacity = this.capacity;
    // Responses may trigger immediate retries; those land in the next slot, i.e. the other
    // buffer, so this one can be read and cleared safely.
    this.lengths[b] = 0;
    for (let i = 0; i < n; i++) this.respond(buffer[i]!, i < capacity, now);
  }
}
