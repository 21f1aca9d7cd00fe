import { OptionsValidator } from '../options/validate.js';
import { lognormal } from './distributions.js';
import type { EventKind, Simulation } from './engine.js';
import type { SimCallee } from './sim-downstream.js';

export interface QueueingCalleeOptions {
  /** Requests served at once at the start. */
  workers: number;
  /** Changes of `workers` over time (capacity halving, doubling), in time order. @default [] */
  changes?: readonly { atMs: number; workers: number }[];
  /** Median service time of one request, ms. */
  serviceMedianMs: number;
  /** Spread of the log-normal service time (0: always the median). */
  serviceSigma: number;
  /**
   * Requests in the system (served + queued) beyond which service slows down — memory,
   * context switches, lock contention — as a multiple of `workers`. @default 2
   */
  thrashAbove?: number;
  /**
   * Extra service time per `workers` requests beyond that point (0.5: each further
   * `workers` requests make service 50 % slower), at most 10× in all. @default 0.5
   */
  thrashSlowdown?: number;
}

/** Receives the answer to one request when its service ends. */
export type QueueingResponse = (request: number, now: number) => void;

const MAX_SLOWDOWN = 10;

/**
 * A server with `workers` parallel workers and an unbounded FIFO queue (unlike
 * `models/ConcurrencyServer`, it never refuses: it slows down): latency grows with
 * concurrency once every worker is busy, and past `thrashAbove × workers` requests in the
 * system its throughput collapses (each service takes longer). It serves everything it
 * accepted, including requests whose callers stopped waiting — it cannot know.
 */
export class QueueingCallee {
  readonly serviceMedianMs: number;
  readonly serviceSigma: number;
  /** Mean service time: median × e^(σ²/2). */
  readonly serviceMeanMs: number;
  readonly thrashAbove: number;
  readonly thrashSlowdown: number;
  private workersNow: number;
  private busy = 0;
  private queue = new Int32Array(1024);
  private head = 0;
  private length = 0;
  private readonly doneKind: EventKind;
  /** Requests completed. */
  served = 0;

  constructor(
    private readonly sim: Simulation,
    options: QueueingCalleeOptions,
    private readonly respond: QueueingResponse,
  ) {
    new OptionsValidator('queueing callee')
      .knownKeys(options, ['workers', 'changes', 'serviceMedianMs', 'serviceSigma', 'thrashAbove', 'thrashSlowdown'])
      .integer('workers', options.workers, 1)
      .duration('serviceMedianMs', options.serviceMedianMs, { min: Number.MIN_VALUE })
      .number('serviceSigma', options.serviceSigma, 0, 3)
      .number('thrashAbove', options.thrashAbove, 1)
      .number('thrashSlowdown', options.thrashSlowdown, 0)
      .check(
        (options.changes ?? []).every((c) => Number.isInteger(c.workers) && c.workers >= 1),
        'Expected every change to have `workers` ≥ 1',
      )
      .done();
    this.workersNow = options.workers;
    this.serviceMedianMs = options.serviceMedianMs;
    this.serviceSigma = options.serviceSigma;
    this.serviceMeanMs = options.serviceMedianMs * Math.exp((options.serviceSigma * options.serviceSigma) / 2);
    this.thrashAbove = options.thrashAbove ?? 2;
    this.thrashSlowdown = options.thrashSlowdown ?? 0.5;
    this.doneKind = sim.on((request, now) => this.finish(request, now));
    const changeKind = sim.on((workers) => {
      this.workersNow = workers;
      this.startQueued();
    });
    for (const c of options.changes ?? []) sim.at(c.atMs, changeKind, c.workers);
  }

  /** Workers now. */
  get workers(): number {
    return this.workersNow;
  }

  /** Requests in the system: in service plus queued. */
  get inSystem(): number {
    return this.busy + this.length;
  }

  /** This callee as a simulated downstream's: each attempt sent is a request (ids are the calls'). */
  asSimCallee(): SimCallee {
    return { send: (call) => this.arrive(call) };
  }

  /** A request arrives now. */
  arrive(request: number): void {
    if (this.busy < this.workersNow) this.start(request);
    else this.enqueue(request);
  }

  private start(request: number): void {
    this.busy++;
    const excess = (this.inSystem - this.thrashAbove * this.workersNow) / this.workersNow;
    const slowdown = excess > 0 ? Math.min(MAX_SLOWDOWN, 1 + this.thrashSlowdown * excess) : 1;
    this.sim.after(lognormal(this.sim.random, this.serviceMeanMs, this.serviceSigma) * slowdown, this.doneKind, request);
  }

  private finish(request: number, now: number): void {
    this.busy--;
    this.served++;
    this.startQueued();
    this.respond(request, now);
  }

  private startQueued(): void {
    while (this.length > 0 && this.busy < this.workersNow) {
      const request = this.queue[this.head]!;
      this.head = (this.head + 1) % this.queue.length;
      this.length--;
      this.start(request);
    }
  }

  private enqueue(request: number): void {
    if (this.length === this.queue.length) {
      const bigger = new Int32Array(this.queue.length * 2);
      for (let i = 0; i < this.length; i++) bigger[i] = this.queue[(this.head + i) % this.queue.length]!;
      this.queue = bigger;
      this.head = 0;
    }
    this.queue[(this.head + this.length) % this.queue.length] = request;
    this.length++;
  }
}
