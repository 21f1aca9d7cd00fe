import type { Random } from '../../random/random.js';
import type { Simulation } from '../engine.js';
import {
  type AnswerLatency,
  Answers,
  boundFrom,
  type LowerBound,
  rateValidator,
  type ServerResponse,
  type SimServer,
} from './server.js';

export interface GcraOptions extends AnswerLatency {
  /** Sustained rate, requests per second: one per emission interval T = 1000 / rate ms. */
  ratePerSecond: number;
  /** Requests allowed at once from idle (the tolerance is burst × T). */
  burst: number;
}

/**
 * The generic cell rate algorithm — a sliding-window limiter with one number of state, as in
 * Redis GCRA scripts and redis-cell: the theoretical arrival time TAT advances by T per
 * served request; a request is served when it would not push TAT more than `burst` × T ahead
 * of now, otherwise rejected at once without changing TAT:
 *
 *     TAT′ = max(TAT, now) + T      serve if TAT′ − now ≤ burst × T
 */
export class GcraServer implements SimServer {
  private readonly interval: number;
  private readonly tolerance: number;
  private tat = 0;
  private readonly answers: Answers;

  constructor(sim: Simulation, random: Random, options: GcraOptions, respond: ServerResponse) {
    rateValidator('gcra', options, ['ratePerSecond', 'burst', 'latency', 'rejectLatency'], 1).done();
    this.interval = 1000 / options.ratePerSecond;
    this.tolerance = options.burst * this.interval;
    this.answers = new Answers(sim, random, options, respond);
  }

  arrive(client: number, now: number): void {
    const tat = Math.max(this.tat, now) + this.interval;
    // Rounding tolerance: k × T summed must not reject the k-th request exactly on time.
    if (tat - now <= this.tolerance + 1e-9) {
      this.tat = tat;
      this.answers.serve(client);
    } else {
      this.answers.reject(client);
    }
  }
}

/** `burst` at once, then one per T. */
export function gcraBound(clients: number, options: GcraOptions): LowerBound {
  return boundFrom(clients, Math.floor(options.burst), (k) => (k * 1000) / options.ratePerSecond, options.latency?.ms ?? 1);
}
