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

export interface LeakyBucketOptions extends AnswerLatency {
  /** Drain rate, requests per second. */
  ratePerSecond: number;
  /** Excess requests allowed above the rate (nginx `burst`); burst + 1 pass at once from idle. */
  burst: number;
  /**
   * `nodelay` (nginx `limit_req … nodelay`) answers every admitted request at once; `delay`
   * (nginx without `nodelay`) holds each admitted request until the bucket has drained to it,
   * excess / rate. Rejections are immediate either way. @default 'nodelay'
   */
  mode?: 'nodelay' | 'delay';
}

/**
 * A leaky bucket with a burst, as nginx's `limit_req` meters: the bucket holds `excess`
 * requests, draining at `rate`; a request raises it by one, and is rejected (503/429, at once,
 * without changing the bucket) when that would exceed `burst`:
 *
 *     excess′ = max(0, excess − rate × Δt + 1)      reject if excess′ > burst
 *
 * With `mode: 'delay'` an admitted request's answer waits excess′ / rate first.
 */
export class LeakyBucketServer implements SimServer {
  private readonly perMs: number;
  private readonly burst: number;
  private readonly delay: boolean;
  private excess = 0;
  private last = Number.NEGATIVE_INFINITY;
  private readonly answers: Answers;
  private readonly heldKind: number;

  constructor(
    private readonly sim: Simulation,
    random: Random,
    options: LeakyBucketOptions,
    respond: ServerResponse,
  ) {
    rateValidator('leaky bucket', options, ['ratePerSecond', 'burst', 'mode', 'latency', 'rejectLatency'], 0)
      .oneOf('mode', options.mode, ['nodelay', 'delay'])
      .done();
    this.perMs = options.ratePerSecond / 1000;
    this.burst = options.burst;
    this.delay = options.mode === 'delay';
    this.answers = new Answers(sim, random, options, respond);
    this.heldKind = sim.on((client) => this.answers.serve(client));
  }

  arrive(client: number, now: number): void {
    let excess = this.excess - (now - this.last) * this.perMs + 1;
    if (!(excess > 0)) excess = 0; // also the first request: −Infinity
    // Tolerance for rounding: 1 ms at 0.1/ms from excess 9 must land on 9, not 9.000000001.
    if (excess > this.burst + 1e-9) {
      this.answers.reject(client);
      return;
    }
    this.excess = excess;
    this.last = now;
    if (this.delay && excess > 1e-9) this.sim.after(excess / this.perMs, this.heldKind, client);
    else this.answers.serve(client);
  }
}

/** burst + 1 at once, then one per 1 / rate (with `delay`, the last answer waits as long). */
export function leakyBucketBound(clients: number, options: LeakyBucketOptions): LowerBound {
  const atOnce = Math.floor(options.burst) + 1;
  const perRequest = 1000 / options.ratePerSecond;
  const latency = options.latency?.ms ?? 1;
  const bound = boundFrom(clients, atOnce, (k) => k * perRequest, latency);
  // Held answers: the bucket is at `burst` after the burst, so every later one waits burst / rate.
  if (options.mode === 'delay') {
    const heldFor = clients > 1 ? Math.min(clients - 1, Math.floor(options.burst)) * perRequest : 0;
    bound.allSucceededMs = (clients > atOnce ? (clients - atOnce) * perRequest : 0) + heldFor + latency;
  }
  return bound;
}
