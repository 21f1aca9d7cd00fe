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

export interface TokenBucketOptions extends AnswerLatency {
  /** Tokens added per second, continuously. */
  ratePerSecond: number;
  /** Bucket size; the bucket starts full, so this many are served at once from idle. */
  burst: number;
}

/**
 * A token bucket (the `limiter` / `rate-limiter-flexible` / API-gateway kind): `burst` tokens,
 * refilled at `ratePerSecond`; a request that finds a whole token takes it and is served, any
 * other is rejected at once (429). Tokens after Δt ms: min(burst, tokens + rate × Δt).
 */
export class TokenBucketServer implements SimServer {
  private readonly perMs: number;
  private readonly burst: number;
  private tokens: number;
  private last = 0;
  private readonly answers: Answers;

  constructor(sim: Simulation, random: Random, options: TokenBucketOptions, respond: ServerResponse) {
    rateValidator('token bucket', options, ['ratePerSecond', 'burst', 'latency', 'rejectLatency'], 1).done();
    this.perMs = options.ratePerSecond / 1000;
    this.burst = options.burst;
    this.tokens = options.burst;
    this.answers = new Answers(sim, random, options, respond);
  }

  arrive(client: number, now: number): void {
    const tokens = Math.min(this.burst, this.tokens + (now - this.last) * this.perMs);
    this.last = now;
    // A hair of tolerance: 10 ms at 0.1 token/ms must make one whole token despite rounding.
    if (tokens >= 1 - 1e-9) {
      this.tokens = tokens - 1;
      this.answers.serve(client);
    } else {
      this.tokens = tokens;
      this.answers.reject(client);
    }
  }
}

/** `burst` served at once, then one per 1 / rate. */
export function tokenBucketBound(clients: number, options: TokenBucketOptions): LowerBound {
  const atOnce = Math.floor(options.burst);
  return boundFrom(clients, atOnce, (k) => (k * 1000) / options.ratePerSecond, options.latency?.ms ?? 1);
}
