import { OptionsValidator } from '../../options/validate.js';
import type { Random } from '../../random/random.js';
import { LATENCY_DISTRIBUTIONS, type Latency, sampleLatency } from '../distributions.js';
import type { EventKind, Simulation } from '../engine.js';

/**
 * Receives the server's answer to one request, when it reaches the client: `ok` for served,
 * false for a rejection (429 or 503, no wait hint).
 */
export type ServerResponse = (client: number, ok: boolean, now: number) => void;

/** A simulated callee: requests arrive, answers come back through its `ServerResponse`. */
export interface SimServer {
  /** A request from `client` arrives now. */
  arrive(client: number, now: number): void;
}

/** What every bucket-style model shares: how long its answers take. */
export interface AnswerLatency {
  /** Time from arrival to a served answer reaching the client. @default { ms: 1 } */
  latency?: Latency;
  /** Time from arrival to a rejection reaching the client. @default { ms: 1 } */
  rejectLatency?: Latency;
}

export const DEFAULT_LATENCY: Readonly<Latency> = Object.freeze({ ms: 1, distribution: 'constant' });

/** Checks a `Latency` option. */
export function validateLatency(v: OptionsValidator, name: string, latency: Latency | undefined): void {
  if (latency === undefined) return;
  v.duration(`${name}.ms`, latency.ms)
    .oneOf(`${name}.distribution`, latency.distribution, LATENCY_DISTRIBUTIONS)
    .number(`${name}.sigma`, latency.sigma, 0, 10)
    .array(`${name}.samples`, latency.samples);
  const samples = latency.samples;
  if (!Array.isArray(samples)) return;
  v.check(samples.length > 0, `Expected \`${name}.samples\` to hold at least one latency, got an empty array`);
  const bad = samples.find((x) => typeof x !== 'number' || !Number.isFinite(x) || x < 0);
  v.check(bad === undefined, `Expected every \`${name}.samples\` entry to be a finite number ≥ 0, got ${String(bad)}`);
}

/**
 * Delivers answers after their latency: one event per answer, the client id and the verdict
 * packed into the event's argument. Latencies draw from `random` (the network's stream).
 */
export class Answers {
  private readonly kind: EventKind;
  private readonly latency: Latency;
  private readonly rejectLatency: Latency;

  constructor(
    private readonly sim: Simulation,
    private readonly random: Random,
    options: AnswerLatency,
    respond: ServerResponse,
  ) {
    this.latency = options.latency ?? DEFAULT_LATENCY;
    this.rejectLatency = options.rejectLatency ?? DEFAULT_LATENCY;
    this.kind = sim.on((arg, now) => respond(Math.floor(arg / 2), arg % 2 === 1, now));
  }

  /** Mean latency of a served answer, ms. */
  get servedMs(): number {
    return this.latency.ms;
  }

  serve(client: number): void {
    this.sim.after(sampleLatency(this.latency, this.random), this.kind, client * 2 + 1);
  }

  reject(client: number): void {
    this.sim.after(sampleLatency(this.rejectLatency, this.random), this.kind, client * 2);
  }
}

/** Validates the latency options every bucket model shares, plus the model's own checks. */
export function answerValidator(subject: string, options: AnswerLatency): OptionsValidator {
  const v = new OptionsValidator(subject);
  validateLatency(v, 'latency', options.latency);
  validateLatency(v, 'rejectLatency', options.rejectLatency);
  return v;
}

/**
 * The checks every rate-metered model shares (token bucket, leaky bucket, GCRA): its known
 * keys, the latency options, a positive `ratePerSecond` and a `burst` of at least `minBurst`.
 */
export function rateValidator(
  subject: string,
  options: AnswerLatency & { ratePerSecond: number; burst: number },
  keys: readonly string[],
  minBurst: number,
): OptionsValidator {
  return answerValidator(subject, options)
    .knownKeys(options, keys)
    .number('ratePerSecond', options.ratePerSecond, Number.MIN_VALUE)
    .check(options.ratePerSecond !== undefined, 'Expected `ratePerSecond`, got undefined')
    .number('burst', options.burst, minBurst)
    .check(options.burst !== undefined, 'Expected `burst`, got undefined');
}

/** The best any client strategy can do against a model: fewest requests, earliest finish. */
export interface LowerBound {
  totalRequests: number;
  allSucceededMs: number;
}

/**
 * For `clients` requests at t = 0 against a server that serves `atOnce` of them immediately
 * and the k-th beyond those no earlier than `lastServedAt(k)`: every first try, plus one
 * retry for each client not served at once; the last served at `lastServedAt(clients −
 * atOnce)` plus the answer's latency.
 */
export function boundFrom(
  clients: number,
  atOnce: number,
  lastServedAt: (beyond: number) => number,
  latencyMs: number,
): LowerBound {
  const beyond = Math.max(0, clients - atOnce);
  return {
    totalRequests: clients + beyond,
    allSucceededMs: (beyond > 0 ? lastServedAt(beyond) : 0) + latencyMs,
  };
}
