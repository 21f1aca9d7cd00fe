import { OptionsValidator } from '../../options/validate.js';
import type { Random } from '../../random/random.js';
import { type Latency, sampleLatency } from '../distributions.js';
import type { Simulation } from '../engine.js';
import { Answers, answerValidator, type LowerBound, type ServerResponse, type SimServer, validateLatency } from './server.js';

export interface ConcurrencyOptions {
  /** Requests served at the same time (workers). */
  concurrency: number;
  /** Requests that may wait for a worker; beyond that, 503 at once. @default 0 */
  queue?: number;
  /** Time a worker spends on one request (the served answer's latency when nothing waits). */
  service: Latency;
  /** Time from arrival to a rejection reaching the client. @default { ms: 1 } */
  rejectLatency?: Latency;
  /**
   * Time from a request's service ending to its answer reaching the client (the way back a
   * rejection's latency includes too). @default { ms: 0 }
   */
  latency?: Latency;
}

/**
 * A server with a fixed number of workers and a bounded FIFO queue (a thread pool, nginx
 * `limit_conn` with a backlog): a request starts at once when a worker is free, waits in the
 * queue when none is, and is rejected at once (503) when the queue is full. The answer arrives
 * when its service ends, so latency grows with load: queueing time plus service time.
 */
export class ConcurrencyServer implements SimServer {
  private readonly concurrency: number;
  private readonly queueLimit: number;
  private readonly service: Latency;
  private readonly latency: Latency | undefined;
  private busy = 0;
  private waiting: number[] = [];
  private head = 0;
  private readonly answers: Answers;
  private readonly doneKind: number;
  private readonly servedKind: number;

  constructor(
    private readonly sim: Simulation,
    private readonly random: Random,
    options: ConcurrencyOptions,
    private readonly respond: ServerResponse,
  ) {
    const v = answerValidator('concurrency server', { rejectLatency: options.rejectLatency })
      .knownKeys(options, ['concurrency', 'queue', 'service', 'rejectLatency', 'latency'])
      .integer('concurrency', options.concurrency, 1)
      .check(options.concurrency !== undefined, 'Expected `concurrency`, got undefined')
      .integer('queue', options.queue, 0)
      .check(options.service !== undefined, 'Expected `service`, got undefined');
    validateLatency(v, 'service', options.service);
    validateLatency(v, 'latency', options.latency);
    v.done();
    this.concurrency = options.concurrency;
    this.queueLimit = options.queue ?? 0;
    this.service = options.service;
    this.latency = options.latency !== undefined && options.latency.ms > 0 ? options.latency : undefined;
    this.answers = new Answers(sim, random, { rejectLatency: options.rejectLatency }, respond);
    this.doneKind = sim.on((client, now) => this.finish(client, now));
    this.servedKind = sim.on((client, now) => this.respond(client, true, now));
  }

  /** Requests waiting for a worker now. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  arrive(client: number, _now: number): void {
    if (this.busy < this.concurrency) {
      this.busy++;
      this.start(client);
    } else if (this.queued < this.queueLimit) {
      this.waiting.push(client);
    } else {
      this.answers.reject(client);
    }
  }

  private start(client: number): void {
    this.sim.after(sampleLatency(this.service, this.random), this.doneKind, client);
  }

  private finish(client: number, now: number): void {
    if (this.head < this.waiting.length) {
      this.start(this.waiting[this.head++]!);
      if (this.head > 1024 && this.head * 2 > this.waiting.length) {
        this.waiting = this.waiting.slice(this.head);
        this.head = 0;
      }
    } else {
      this.busy--;
    }
    if (this.latency === undefined) this.respond(client, true, now);
    else this.sim.after(sampleLatency(this.latency, this.random), this.servedKind, client);
  }
}

/** concurrency + queue admitted at once; `concurrency` finish per service time. */
export function concurrencyBound(clients: number, options: ConcurrencyOptions): LowerBound {
  const admitted = options.concurrency + (options.queue ?? 0);
  return {
    totalRequests: clients + Math.max(0, clients - admitted),
    allSucceededMs: Math.ceil(clients / options.concurrency) * options.service.ms + (options.latency?.ms ?? 0),
  };
}

/**
 * The earliest a pool of `concurrency` workers can have finished `serviceTimes` (ms): the
 * services it ran, in the order they started, as a pool that draws one per request it starts
 * (a real one timed by its handler, or a model) ran them. The j-th of them can start no earlier
 * than the j-th earliest of `arrivals` (ms): every worker busy from the first moment there is
 * work for it, as if every caller had filled an unbounded queue on arrival. No client finishes
 * that work sooner, whatever the pool's queue: starting a request later never lets a later one
 * start sooner (a multi-server queue's start and finish times only move later when any of its
 * arrivals does). With service times that spread this is later than the rounds of workers times
 * the mean service time — workers that drew short services run out of work while others still
 * hold long ones — so it bounds a herd against such a pool where `serverLowerBound`, which
 * takes every service at its mean, is out of reach. Add the way back to the last answer.
 */
export function workConservingFinish(serviceTimes: readonly number[], arrivals: readonly number[], concurrency: number): number {
  const v = new OptionsValidator('workConservingFinish').integer('concurrency', concurrency, 1);
  v.check(Array.isArray(serviceTimes) && Array.isArray(arrivals), 'Expected `serviceTimes` and `arrivals` to be arrays');
  if (Array.isArray(serviceTimes) && Array.isArray(arrivals)) {
    const bad = [...serviceTimes, ...arrivals].find((ms) => typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0);
    v.check(bad === undefined, `Expected every service time and arrival to be a finite number ≥ 0 ms, got ${String(bad)}`);
    v.check(
      serviceTimes.length <= arrivals.length,
      `Expected no more service times (${serviceTimes.length}) than arrivals (${arrivals.length}): each is one caller's request`,
    );
  }
  v.done();
  const ready = [...arrivals].sort((a, b) => a - b);
  const free = new Array<number>(concurrency).fill(0);
  let finish = 0;
  for (let j = 0; j < serviceTimes.length; j++) {
    let worker = 0;
    for (let w = 1; w < concurrency; w++) if ((free[w] as number) < (free[worker] as number)) worker = w;
    const end = Math.max(ready[j] as number, free[worker] as number) + (serviceTimes[j] as number);
    free[worker] = end;
    if (end > finish) finish = end;
  }
  return finish;
}
