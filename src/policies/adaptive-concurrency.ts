import { OptionsValidator, show } from '../options/validate.js';
import type { Random } from '../random/random.js';
import { LatencyQuantiles } from './latency-quantiles.js';
import { ProbeRamp } from './probe-ramp.js';

export interface AdaptiveConcurrencyOptions {
  /** The limit before anything is learned. @default 20 */
  initialLimit?: number;
  /** The limit never goes below this. @default 1 */
  minLimit?: number;
  /** The limit never goes above this. @default 1_000 */
  maxLimit?: number;
  /**
   * Least latencies per sampling window; the limit moves once per window. A window also lasts
   * at least two no-load latencies, so that it sees the effect of the last move. @default 50
   */
  windowSamples?: number;
  /** The window's latency statistic compared with the no-load latency, in (0, 1). @default 0.5 */
  percentile?: number;
  /**
   * How far above the no-load latency the window's latency may sit before the limit shrinks
   * (0.1 = 10 %). @default 0.1
   */
  tolerance?: number;
  /**
   * How often the no-load latency is measured again, ms: the limit is held at
   * `probeConcurrency` until `windowSamples` latencies are in. @default 30_000
   */
  probeIntervalMs?: number;
  /**
   * Each wait for the next measurement is `probeIntervalMs × (1 + probeJitter × u)`, u uniform
   * in [0, 1) from the injected `Random` (as Envoy's `jitter`): callers started together do not
   * keep measuring — and lowering their limits — in step. @default 0.1
   */
  probeJitter?: number;
  /** The limit while measuring the no-load latency. @default 3 */
  probeConcurrency?: number;
  /**
   * Shares of the learned limit guaranteed to each class of caller, e.g.
   * `{ interactive: 0.9, background: 0.1 }` (sum ≤ 1). A class may borrow what others leave
   * unused. @default none (one shared limit)
   */
  partitions?: Readonly<Record<string, number>>;
  /**
   * Calls allowed to wait for a slot (the runtime keeps the queue); beyond that an attempt is
   * refused at once. 0: refuse at once — queueing adds latency nobody asked for. @default 0
   */
  maxQueue?: number;
  /** Longest wait for a slot, ms (the runtime also bounds it by the deadline). @default 1_000 */
  queueTimeoutMs?: number;
}

export const ADAPTIVE_CONCURRENCY_DEFAULTS = {
  initialLimit: 20,
  minLimit: 1,
  maxLimit: 1_000,
  windowSamples: 50,
  percentile: 0.5,
  tolerance: 0.1,
  probeIntervalMs: 30_000,
  probeJitter: 0.1,
  probeConcurrency: 3,
  maxQueue: 0,
  queueTimeoutMs: 1_000,
} as const satisfies AdaptiveConcurrencyOptions;

const KEYS = [
  'initialLimit',
  'minLimit',
  'maxLimit',
  'windowSamples',
  'percentile',
  'tolerance',
  'probeIntervalMs',
  'probeJitter',
  'probeConcurrency',
  'maxQueue',
  'queueTimeoutMs',
  'partitions',
] as const;

/** `tryAcquire`'s answer when the limit is reached. */
export const LIMIT_REJECTED = -1;

/** What a finished attempt tells the limit. */
export type LimitSample =
  /** Answered (successfully or with an error that took a normal time): its latency counts. */
  | 'ok'
  /** Timed out or the callee said it is overloaded: the limit backs off. */
  | 'dropped'
  /** Cancelled, or lost a hedge race: says nothing about the callee. */
  | 'ignore';

/** The multiplicative decrease after a window with drops. */
const BACKOFF = 0.9;
/**
 * Share of a window's proposed move that is taken: one window's percentile is noisy with a
 * long-tailed callee, and taking half of each move damps that without slowing convergence
 * much (each window is a couple of round trips).
 */
const SMOOTHING = 0.5;
/** How far one window may move the limit, either way. */
const MIN_GRADIENT = 0.5;
const MAX_GRADIENT = 2;

/**
 * An adaptive concurrency limit: learns how many attempts the callee can usefully run at
 * once from latency alone, with no number configured (after Envoy's gradient controller and
 * Netflix's concurrency-limits; our own formulation).
 *
 * The no-load latency `minRtt` is measured by holding the limit low (`probeConcurrency`, later
 * a quarter of the learned limit) for one window, at start and every `probeIntervalMs` plus up to
 * `probeJitter` of it (only then: the lowest of many noisy windows
 * would sit well below the true no-load latency and hold the limit too low). Every
 * window (≥ `windowSamples` latencies and ≥ 2 × minRtt long), with `sample` the window's
 * `percentile`:
 *
 *     gradient = clamp(minRtt × (1 + tolerance) / sample, 0.5, 2)
 *     target   = gradient × limit + √(gradient × limit)
 *     limit    = clamp(limit + (target − limit) / 2, minLimit, maxLimit)
 *
 * The square-root headroom keeps a small queue at the callee so it never idles; a window
 * whose latency grew shrinks the limit in proportion. A window with a timeout or an overload
 * answer multiplies the limit by 0.9 instead. The limit does not grow while the callers use
 * less than half of it (they, not the callee, set the pace then).
 *
 * Partitions share the learned limit by ratio: a class is admitted while the total is under
 * the limit (borrowing what others leave), or while its own in-flight count is under its
 * share, so borrowers can push the total past the limit only until they finish. A call of
 * an unknown or no class is admitted only under the limit.
 *
 * Sans-IO: the caller passes monotonic ms and reports every admitted attempt exactly once.
 */
export class AdaptiveConcurrencyLimit {
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly windowSamples: number;
  readonly percentile: number;
  readonly tolerance: number;
  readonly probeIntervalMs: number;
  readonly probeJitter: number;
  readonly probeConcurrency: number;
  /** Waiting is the runtime's: see `AdaptiveConcurrencyOptions.maxQueue`. */
  readonly maxQueue: number;
  readonly queueTimeoutMs: number;
  /** Partition names, in the order given. */
  readonly partitionNames: readonly string[];
  private readonly ratios: Float64Array;
  /** In flight per partition; the last slot is for calls of no or an unknown partition. */
  private readonly partitionInFlight: Int32Array;
  private limitValue: number;
  private running = 0;
  private minRtt = Number.POSITIVE_INFINITY;
  /** This window's latencies (a histogram: a window may hold any number of them). */
  private readonly window = new LatencyQuantiles({ halfLifeMs: Number.POSITIVE_INFINITY });
  private windowCount = 0;
  private windowStartedAt = Number.NaN;
  private windowDrops = 0;
  private windowMaxInFlight = 0;
  /** While probing: when the probe began (samples started earlier are queued work, not no-load). */
  private probeStartedAt = Number.NaN;
  private nextProbeAt: number;
  /** The limit while probing: see `startProbe`. */
  private probeLimit: number;
  /** The first probe's slow start (undefined otherwise). */
  private ramp: ProbeRamp | undefined;
  private rejectedCount = 0;
  private readonly random: Random;

  /** `random` jitters the measurement times (the runtime and the simulator pass theirs). */
  constructor(options: AdaptiveConcurrencyOptions, random: Random) {
    const v = new OptionsValidator('adaptive concurrency');
    v.knownKeys(options, KEYS)
      .integer('initialLimit', options.initialLimit, 1)
      .integer('minLimit', options.minLimit, 1)
      .integer('maxLimit', options.maxLimit, 1)
      .integer('windowSamples', options.windowSamples, 1)
      .number('percentile', options.percentile, 0, 1)
      .number('tolerance', options.tolerance, 0)
      .duration('probeIntervalMs', options.probeIntervalMs, { min: 1, allowInfinity: true })
      .number('probeJitter', options.probeJitter, 0, 1)
      .check(
        typeof random === 'object' && random !== null && typeof random.next === 'function',
        `Expected a Random (an object with next()), got ${typeof random}`,
      )
      .integer('probeConcurrency', options.probeConcurrency, 1)
      .integer('maxQueue', options.maxQueue, 0, { allowInfinity: true })
      .duration('queueTimeoutMs', options.queueTimeoutMs, { allowInfinity: true });
    const min = options.minLimit ?? ADAPTIVE_CONCURRENCY_DEFAULTS.minLimit;
    const max = options.maxLimit ?? ADAPTIVE_CONCURRENCY_DEFAULTS.maxLimit;
    const initial = options.initialLimit ?? Math.min(Math.max(ADAPTIVE_CONCURRENCY_DEFAULTS.initialLimit, min), max);
    v.check(!(min > max), `Expected \`minLimit\` ≤ \`maxLimit\`, got ${min} > ${max}`);
    v.check(!(initial < min || initial > max), `Expected \`initialLimit\` in [minLimit, maxLimit], got ${initial}`);
    const partitions = options.partitions;
    const names: string[] = [];
    const ratios: number[] = [];
    if (partitions !== undefined) {
      if (typeof partitions !== 'object' || partitions === null || Array.isArray(partitions)) {
        v.check(false, `Expected \`partitions\` to be an object of name → share, got ${show(partitions)}`);
      } else {
        let sum = 0;
        for (const [name, ratio] of Object.entries(partitions)) {
          if (typeof ratio !== 'number' || !(ratio >= 0 && ratio <= 1)) {
            v.check(false, `Expected \`partitions.${name}\` in [0, 1], got ${show(ratio)}`);
            continue;
          }
          names.push(name);
          ratios.push(ratio);
          sum += ratio;
        }
        v.check(sum <= 1 + 1e-9, `Expected the \`partitions\` shares to sum to ≤ 1, got ${sum}`);
        v.check(Object.keys(partitions).length > 0, 'Expected at least one partition in `partitions`, got {}');
      }
    }
    v.done();
    this.minLimit = min;
    this.maxLimit = max;
    this.limitValue = initial;
    this.windowSamples = options.windowSamples ?? ADAPTIVE_CONCURRENCY_DEFAULTS.windowSamples;
    this.percentile = options.percentile ?? ADAPTIVE_CONCURRENCY_DEFAULTS.percentile;
    this.tolerance = options.tolerance ?? ADAPTIVE_CONCURRENCY_DEFAULTS.tolerance;
    this.probeIntervalMs = options.probeIntervalMs ?? ADAPTIVE_CONCURRENCY_DEFAULTS.probeIntervalMs;
    this.probeJitter = options.probeJitter ?? ADAPTIVE_CONCURRENCY_DEFAULTS.probeJitter;
    this.random = random;
    this.probeConcurrency = options.probeConcurrency ?? ADAPTIVE_CONCURRENCY_DEFAULTS.probeConcurrency;
    this.maxQueue = options.maxQueue ?? ADAPTIVE_CONCURRENCY_DEFAULTS.maxQueue;
    this.queueTimeoutMs = options.queueTimeoutMs ?? ADAPTIVE_CONCURRENCY_DEFAULTS.queueTimeoutMs;
    this.partitionNames = names;
    this.ratios = Float64Array.from(ratios);
    this.partitionInFlight = new Int32Array(names.length + 1);
    // The first window is a probe: there is no no-load latency to compare with yet.
    this.nextProbeAt = Number.NEGATIVE_INFINITY;
    this.probeLimit = this.probeConcurrency;
  }

  /** The learned limit (whole attempts). While probing, the probe's limit. */
  get limit(): number {
    if (!this.probing) return Math.floor(this.limitValue);
    return this.ramp === undefined ? this.probeLimit : this.ramp.level;
  }

  /** Attempts admitted and not yet released. */
  get inFlight(): number {
    return this.running;
  }

  /** `tryAcquire` calls refused since creation. */
  get rejected(): number {
    return this.rejectedCount;
  }

  /** The measured no-load latency, ms (`Infinity` before the first measurement). */
  get noLoadLatencyMs(): number {
    return this.minRtt;
  }

  /** Whether the no-load latency is being measured now (the limit is held low). */
  get probing(): boolean {
    return !Number.isNaN(this.probeStartedAt);
  }

  /** The index `tryAcquire` uses for a partition name (unknown or undefined: the shared slot). */
  partitionIndex(partition: string | undefined): number {
    if (partition === undefined) return this.partitionNames.length;
    const i = this.partitionNames.indexOf(partition);
    return i < 0 ? this.partitionNames.length : i;
  }

  /**
   * Admits one attempt of `partition` (an index from `partitionIndex`, default the shared
   * slot) if the limit allows. Returns the partition index to pass to `release`, or
   * `LIMIT_REJECTED`.
   */
  tryAcquire(nowMs: number, partition: number = this.partitionNames.length, countRefusal = true): number {
    if (!this.probing && nowMs >= this.nextProbeAt) this.startProbe(nowMs);
    const limit = this.limit;
    const p = partition >= 0 && partition < this.partitionNames.length ? partition : this.partitionNames.length;
    if (
      this.running >= limit &&
      (this.probing || p === this.partitionNames.length || this.partitionInFlight[p]! >= this.ratios[p]! * limit)
    ) {
      if (countRefusal) this.rejectedCount++;
      return LIMIT_REJECTED;
    }
    this.running++;
    this.partitionInFlight[p]!++;
    if (this.running > this.windowMaxInFlight) this.windowMaxInFlight = this.running;
    this.ramp?.inFlight(this.running);
    return p;
  }

  /**
   * Reports the end of an attempt admitted by `tryAcquire` at `startedMs`: releases its slot
   * and feeds its latency to the limit.
   */
  release(partition: number, startedMs: number, nowMs: number, sample: LimitSample): void {
    if (this.running > 0) this.running--;
    const p = partition >= 0 && partition < this.partitionInFlight.length ? partition : this.partitionNames.length;
    if (this.partitionInFlight[p]! > 0) this.partitionInFlight[p]!--;
    if (sample === 'ignore') return;
    // A probe measures only attempts it admitted itself: earlier ones may have queued.
    if (this.probing && startedMs < this.probeStartedAt) return;
    if (sample === 'dropped') this.windowDrops++;
    if (this.ramp !== undefined) {
      // The ramp hands over the latencies it trusts (see `record`).
      this.ramp.answer(nowMs - startedMs, startedMs, nowMs);
      if (this.ramp !== undefined && this.windowCount >= this.windowSamples) this.closeWindow(nowMs);
      return;
    }
    this.record(nowMs - startedMs, nowMs);
    if (
      this.windowCount >= this.windowSamples &&
      // A probe needs only its samples; a window must also outlast the feedback delay, or the
      // limit would move many times on the answers to one round of attempts and oscillate.
      (this.probing || !(nowMs - this.windowStartedAt < 2 * this.minRtt))
    ) {
      this.closeWindow(nowMs);
    }
  }

  private record(latencyMs: number, nowMs: number): void {
    if (this.windowCount === 0) this.windowStartedAt = nowMs;
    this.window.record(latencyMs, nowMs);
    this.windowCount++;
  }

  /**
   * Holds the limit low to measure the no-load latency. The first probe knows nothing: it
   * starts at `probeConcurrency` and doubles while the latency stays flat (`ProbeRamp`), so a
   * slow callee is not held at 3 for 50 answers; the highest flat level is then a floor for the
   * limit. Later probes use a quarter of the learned limit if that is more — the learned
   * limit sits just above the callee's capacity, so a quarter of it queues nothing, and the
   * probe then costs a quarter as much goodput and ends sooner.
   */
  private startProbe(nowMs: number): void {
    this.probeStartedAt = nowMs;
    this.windowCount = 0;
    this.windowDrops = 0;
    this.window.reset();
    if (Number.isFinite(this.minRtt)) {
      this.probeLimit = Math.max(this.probeConcurrency, Math.floor(this.limitValue / 4));
      return;
    }
    this.probeLimit = this.probeConcurrency;
    this.ramp = new ProbeRamp(this.probeConcurrency, this.maxLimit, this.tolerance, nowMs, (latencyMs) =>
      this.record(latencyMs, this.probeStartedAt),
    );
  }

  private closeWindow(nowMs: number): void {
    const sample = this.window.quantile(this.percentile) as number;
    this.window.reset();
    const drops = this.windowDrops;
    const busiest = this.windowMaxInFlight;
    this.windowCount = 0;
    this.windowDrops = 0;
    this.windowMaxInFlight = this.running;
    if (this.probing) {
      const flat = this.ramp?.highestFlatLevel ?? 0;
      this.ramp = undefined;
      this.probeStartedAt = Number.NaN;
      this.nextProbeAt = nowMs + this.probeIntervalMs * (1 + this.probeJitter * this.random.next());
      if (drops === 0) {
        this.minRtt = sample;
        // The callee answered `flat` attempts at once without queueing: start there at least.
        if (flat > this.limitValue) this.limitValue = Math.min(flat, this.maxLimit);
        return;
      }
      // Timeouts at the probe's own low concurrency: the callee is in trouble whatever its
      // load; keep the old reference and back off.
      this.limitValue = Math.max(this.minLimit, this.limitValue * BACKOFF);
      return;
    }
    const limit = this.limitValue;
    let next: number;
    if (drops > 0) next = limit * BACKOFF;
    else {
      let gradient = sample > 0 ? (this.minRtt * (1 + this.tolerance)) / sample : MAX_GRADIENT;
      gradient = gradient < MIN_GRADIENT ? MIN_GRADIENT : Math.min(gradient, MAX_GRADIENT);
      next = limit + SMOOTHING * (gradient * limit + Math.sqrt(gradient * limit) - limit);
      // Callers using under half the limit: the latency says nothing about more.
      if (next > limit && busiest * 2 < limit) next = limit;
    }
    this.limitValue = next < this.minLimit ? this.minLimit : Math.min(next, this.maxLimit);
  }
}
