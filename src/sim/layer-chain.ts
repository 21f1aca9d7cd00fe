import type { Classification } from '../classify/outcome.js';
import { OptionsValidator } from '../options/validate.js';
import type { RetryOptions } from '../policies/retry-decision.js';
import { ANSWER_OK, ANSWER_REFUSED, type Dependency, REFUSED } from './dependency.js';
import type { Simulation } from './engine.js';
import { SimDownstream } from './sim-downstream.js';

export interface LayerChainOptions {
  /** Retrying services between the client and the dependency (the dependency not counted). */
  layers: number;
  /** Every layer's retry options towards the next one (as `downstream()` takes them). */
  retry: RetryOptions;
  /**
   * A layer that gives up answers 503 marked "don't retry" (`x-retry-exhausted: 1`),
   * and a layer that receives the mark does not retry it.
   */
  signal: boolean;
  /** One-way network time between neighbours, ms. @default 1 */
  hopMs?: number;
  /** The innermost layer's attempt timeout towards the dependency, ms. @default 10_000 */
  attemptTimeoutMs?: number;
}

export const LAYER_CHAIN_DEFAULTS = {
  hopMs: 1,
  attemptTimeoutMs: 10_000,
} as const satisfies Partial<LayerChainOptions>;

/** A layer's failure answer: 503, an explicit rejection (outcome `failed`), retryable. */
const UNAVAILABLE: Readonly<Classification> = Object.freeze({ outcome: 'failed', retryable: true, status: 503 });
/** The same, marked "don't retry" by a kindly layer that exhausted its own retries. */
const EXHAUSTED: Readonly<Classification> = Object.freeze({ outcome: 'failed', retryable: true, status: 503, dontRetry: true });

const OK = 0;
const FAILED = 1;
const FAILED_MARKED = 2;
const DEP_REFUSED = 3;

/**
 * A chain of kindly services, client → layer 0 → … → layer n−1 → dependency, each layer a
 * `SimDownstream` calling the next hop (so each runs the orchestration `downstream()` runs).
 * Counts the calls each hop receives, which is where retry amplification shows: n layers ×
 * k attempts make up to kⁿ calls at the dependency per client request. No retry budget: the
 * chain shows what the retry policy and the signal do alone.
 *
 * Only the innermost layer's attempts can time out (against a hanging dependency); the outer
 * layers wait for the inner ones to finish, as a deadline-propagating stack would.
 */
export class LayerChain {
  /** Calls received per hop: index 0 is the outermost layer, index `layers` the dependency. */
  readonly callsAt: number[];
  private readonly hopMs: number;
  private readonly downstreams: SimDownstream[];
  // One entry per call (a request received by some hop); indexes are call ids.
  private readonly callLayer: number[] = [];
  /** Parent call id, or the client's request id for calls to layer 0. */
  private readonly callParent: number[] = [];
  private readonly callResult: number[] = [];
  private readonly arriveKind: number;
  private readonly answerKind: number;

  constructor(
    private readonly sim: Simulation,
    private readonly options: LayerChainOptions,
    private readonly dependency: Dependency,
    private readonly onAnswer: (request: number, ok: boolean, now: number) => void,
  ) {
    new OptionsValidator('layer chain')
      .knownKeys(options, ['layers', 'retry', 'signal', 'hopMs', 'attemptTimeoutMs'])
      .integer('layers', options.layers, 1)
      .check(options.layers !== undefined, 'Expected `layers`, got undefined')
      .check(typeof options.retry === 'object' && options.retry !== null, 'Expected `retry` to be retry options')
      .check(typeof options.signal === 'boolean', `Expected \`signal\` to be a boolean, got ${String(options.signal)}`)
      .duration('hopMs', options.hopMs)
      .duration('attemptTimeoutMs', options.attemptTimeoutMs, { min: 1 })
      .done();
    this.callsAt = new Array<number>(options.layers + 1).fill(0);
    this.hopMs = options.hopMs ?? LAYER_CHAIN_DEFAULTS.hopMs;
    const attemptTimeoutMs = options.attemptTimeoutMs ?? LAYER_CHAIN_DEFAULTS.attemptTimeoutMs;
    this.downstreams = Array.from({ length: options.layers }, (_, layer) => {
      const innermost = layer === options.layers - 1;
      return new SimDownstream(
        sim,
        `layer ${layer + 1}`,
        { retry: options.retry, budget: false, attemptTimeoutMs: innermost ? attemptTimeoutMs : false },
        { send: (call) => this.sim.after(this.hopMs, this.arriveKind, this.newCall(layer + 1, call)) },
        (end) => this.reply(end.call, end.ok ? OK : options.signal ? FAILED_MARKED : FAILED, end.atMs),
      );
    });
    this.arriveKind = sim.on((call, now) => this.arrive(call, now));
    this.answerKind = sim.on((call, now) => this.answered(call, now));
  }

  /** A client request enters the outermost layer now. */
  request(request: number, now: number): void {
    this.arrive(this.newCall(0, request), now);
  }

  private newCall(layer: number, parent: number): number {
    this.callLayer.push(layer);
    this.callParent.push(parent);
    this.callResult.push(OK);
    return this.callLayer.length - 1;
  }

  private arrive(call: number, now: number): void {
    const layer = this.callLayer[call]!;
    this.callsAt[layer]!++;
    if (layer < this.options.layers) {
      this.downstreams[layer]!.start(call, now);
      return;
    }
    const dep = this.dependency;
    const answer = dep.call(now);
    // A hanging dependency never answers: the innermost layer's attempt timeout ends the attempt.
    if (answer !== ANSWER_OK && answer !== ANSWER_REFUSED) return;
    this.callResult[call] = answer === ANSWER_OK ? OK : DEP_REFUSED;
    this.sim.after((answer === ANSWER_OK ? dep.latencyMs : dep.refuseMs) + this.hopMs, this.answerKind, call);
  }

  /** The answer to `child` reaches its caller (a layer) now. */
  private answered(child: number, now: number): void {
    const call = this.callParent[child]!;
    const result = this.callResult[child]!;
    const failure =
      result === OK ? undefined : result === DEP_REFUSED ? REFUSED : result === FAILED_MARKED ? EXHAUSTED : UNAVAILABLE;
    this.downstreams[this.callLayer[call]!]!.answer(call, now, failure);
  }

  private reply(call: number, result: number, now: number): void {
    if (this.callLayer[call] === 0) {
      this.onAnswer(this.callParent[call]!, result === OK, now + this.hopMs);
      return;
    }
    this.callResult[call] = result;
    this.sim.after(this.hopMs, this.answerKind, call);
  }
}
