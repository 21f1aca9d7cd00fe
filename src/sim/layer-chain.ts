import type { Classification } from '../classify/outcome.js';
import { OptionsValidator } from '../options/validate.js';
import { RetryPolicy } from '../policies/retry-decision.js';
import { ANSWER_OK, ANSWER_REFUSED, type Dependency, REFUSED, TIMED_OUT } from './dependency.js';
import type { Simulation } from './engine.js';
import { GIVE_UP, RetryState } from './retry-state.js';

export interface LayerChainOptions {
  /** Retrying services between the client and the dependency (the dependency not counted). */
  layers: number;
  /** Every layer's retry policy towards the next one. */
  policy: RetryPolicy;
  /**
   * A layer that gives up answers 503 marked "don't retry" (`x-retry-exhausted: 1`),
   * and a layer that receives the mark does not retry it.
   */
  signal: boolean;
  /** One-way network time between neighbours, ms. @default 1 */
  hopMs?: number;
  /** Each layer's attempt timeout towards the dependency, ms. @default 10_000 */
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
const DEP_TIMEOUT = 4;

/**
 * A chain of kindly services, client → layer 0 → … → layer n−1 → dependency, each layer
 * retrying its call to the next with kindly's `RetryPolicy`. Counts the calls each hop
 * receives, which is where retry amplification shows: n layers × k attempts make up
 * to kⁿ calls at the dependency per client request.
 *
 * Only the innermost layer's attempts can time out (against a hanging dependency); the outer
 * layers wait for the inner ones to finish, as a deadline-propagating stack would.
 */
export class LayerChain {
  /** Calls received per hop: index 0 is the outermost layer, index `layers` the dependency. */
  readonly callsAt: number[];
  private readonly state: RetryState;
  private readonly hopMs: number;
  private readonly attemptTimeoutMs: number;
  // One entry per call (a request received by some hop); indexes are call ids.
  private readonly callLayer: number[] = [];
  /** Parent call id, or the client's request id for calls to layer 0. */
  private readonly callParent: number[] = [];
  private readonly callResult: number[] = [];
  private readonly arriveKind: number;
  private readonly attemptKind: number;
  private readonly answerKind: number;

  constructor(
    private readonly sim: Simulation,
    private readonly options: LayerChainOptions,
    private readonly dependency: Dependency,
    private readonly onAnswer: (request: number, ok: boolean, now: number) => void,
  ) {
    new OptionsValidator('layer chain')
      .knownKeys(options, ['layers', 'policy', 'signal', 'hopMs', 'attemptTimeoutMs'])
      .integer('layers', options.layers, 1)
      .check(options.layers !== undefined, 'Expected `layers`, got undefined')
      .check(options.policy instanceof RetryPolicy, 'Expected `policy` to be a RetryPolicy')
      .check(typeof options.signal === 'boolean', `Expected \`signal\` to be a boolean, got ${String(options.signal)}`)
      .duration('hopMs', options.hopMs)
      .duration('attemptTimeoutMs', options.attemptTimeoutMs, { min: 1 })
      .done();
    this.callsAt = new Array<number>(options.layers + 1).fill(0);
    this.state = new RetryState(options.policy, sim.random, 1024);
    this.hopMs = options.hopMs ?? LAYER_CHAIN_DEFAULTS.hopMs;
    this.attemptTimeoutMs = options.attemptTimeoutMs ?? LAYER_CHAIN_DEFAULTS.attemptTimeoutMs;
    this.arriveKind = sim.on((call, now) => this.arrive(call, now));
    this.attemptKind = sim.on((call, now) => this.attempt(call, now));
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
      this.attempt(call, now);
      return;
    }
    const dep = this.dependency;
    const answer = dep.call(now);
    const seen = dep.seenAs(answer, this.attemptTimeoutMs);
    this.callResult[call] = seen === ANSWER_OK ? OK : seen === ANSWER_REFUSED ? DEP_REFUSED : DEP_TIMEOUT;
    // A timeout is measured by the caller from its send, so it is not delayed by the way back.
    const back = seen === ANSWER_OK || seen === ANSWER_REFUSED ? this.hopMs : 0;
    this.sim.after(dep.answerDelay(answer, this.attemptTimeoutMs) + back, this.answerKind, call);
  }

  /** Layer of `call` makes its next attempt towards the next hop. */
  private attempt(call: number, now: number): void {
    this.state.attempt(call, now);
    const child = this.newCall(this.callLayer[call]! + 1, call);
    this.sim.after(this.hopMs, this.arriveKind, child);
  }

  /** The answer to `child` reaches its caller now. */
  private answered(child: number, now: number): void {
    const call = this.callParent[child]!;
    const result = this.callResult[child]!;
    if (result === OK) {
      this.reply(call, OK, now);
      return;
    }
    const classification =
      result === DEP_REFUSED ? REFUSED : result === DEP_TIMEOUT ? TIMED_OUT : result === FAILED_MARKED ? EXHAUSTED : UNAVAILABLE;
    const delay = this.state.next(call, classification, now);
    if (delay === GIVE_UP) this.reply(call, this.options.signal ? FAILED_MARKED : FAILED, now);
    else this.sim.after(delay, this.attemptKind, call);
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
