import type { Random } from '../../random/random.js';
import type { Simulation } from '../engine.js';
import {
  type AnswerLatency,
  Answers,
  answerValidator,
  boundFrom,
  type LowerBound,
  type ServerResponse,
  type SimServer,
} from './server.js';

export interface FixedWindowOptions extends AnswerLatency {
  /** Requests served per window. */
  limit: number;
  /** Window length, ms. */
  windowMs: number;
  /**
   * Where windows start: `first-request` opens a window at the first request after the last
   * one expired (express-rate-limit's and rate-limiter-flexible's memory stores); `epoch`
   * aligns them to multiples of `windowMs` (a counter keyed by ⌊t / window⌋, as in Redis
   * INCR + EXPIRE recipes). @default 'first-request'
   */
  align?: 'first-request' | 'epoch';
}

/**
 * A fixed-window counter: the first `limit` requests of each window are served, the rest are
 * rejected at once (429) until the window ends and the count starts again from zero.
 */
export class FixedWindowServer implements SimServer {
  private readonly limit: number;
  private readonly windowMs: number;
  private readonly epoch: boolean;
  private windowEnd = Number.NEGATIVE_INFINITY;
  private count = 0;
  private readonly answers: Answers;

  constructor(sim: Simulation, random: Random, options: FixedWindowOptions, respond: ServerResponse) {
    answerValidator('fixed window', options)
      .knownKeys(options, ['limit', 'windowMs', 'align', 'latency', 'rejectLatency'])
      .integer('limit', options.limit, 1)
      .check(options.limit !== undefined, 'Expected `limit`, got undefined')
      .duration('windowMs', options.windowMs, { min: 1 })
      .check(options.windowMs !== undefined, 'Expected `windowMs`, got undefined')
      .oneOf('align', options.align, ['first-request', 'epoch'])
      .done();
    this.limit = options.limit;
    this.windowMs = options.windowMs;
    this.epoch = options.align === 'epoch';
    this.answers = new Answers(sim, random, options, respond);
  }

  arrive(client: number, now: number): void {
    if (now >= this.windowEnd) {
      this.windowEnd = this.epoch ? (Math.floor(now / this.windowMs) + 1) * this.windowMs : now + this.windowMs;
      this.count = 0;
    }
    if (this.count < this.limit) {
      this.count++;
      this.answers.serve(client);
    } else {
      this.answers.reject(client);
    }
  }
}

/** `limit` at once, then `limit` more at the start of each window. */
export function fixedWindowBound(clients: number, options: FixedWindowOptions): LowerBound {
  return boundFrom(clients, options.limit, (k) => Math.ceil(k / options.limit) * options.windowMs, options.latency?.ms ?? 1);
}
