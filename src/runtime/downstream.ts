import { classifyError } from '../classify/classify-error.js';
import type { Classification } from '../classify/outcome.js';
import {
  CircuitOpenError,
  ConcurrencyLimitError,
  DeadlineExceededError,
  GiveUpError,
  type GiveUpReason,
} from '../errors/errors.js';
import { fetchThrough, type KindlyRequestInit } from '../http/fetch.js';
import { enabledOptions, InvalidOptionsError, OptionsValidator, optionKeys } from '../options/validate.js';
import { AdaptiveConcurrencyLimit, type AdaptiveConcurrencyOptions } from '../policies/adaptive-concurrency.js';
import { Bulkhead, type BulkheadOptions } from '../policies/bulkhead.js';
import {
  BREAKER_REJECTED,
  type BreakerState,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitBreakerSnapshot,
} from '../policies/circuit-breaker.js';
import { DERIVED_TIMEOUT_DEFAULTS, DerivedTimeout, type DerivedTimeoutOptions } from '../policies/derived-timeout.js';
import { type HedgingOptions, HedgingPolicy } from '../policies/hedging.js';
import { Pacer, type PacerOptions, type PacerSignal } from '../policies/pacer.js';
import { KeyedRetryBudgets, type RetryBudgetOptions } from '../policies/retry-budget.js';
import { type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import { type Random, systemRandom } from '../random/random.js';
import { FleetLink } from '../store/fleet-link.js';
import { type FleetStore, isFleetStore } from '../store/fleet-store.js';
import { EventHub, type EventOf, type KindlyEvent, type KindlyEventType } from '../telemetry/events.js';
import { StatsCollector, type StatsSnapshot } from '../telemetry/stats.js';
import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/system-clock.js';
import { AttemptContext, AttemptScope, type Operation, runAttempt } from './attempt.js';
import { currentDeadlineScope, type DeadlineScope } from './deadline-context.js';
import { HedgeLostError, type HedgeMember, runHedged } from './hedged-attempt.js';
import { type Lane, Lanes } from './lanes.js';
import { type AttemptEnd, type LatencyLane, LIMIT_REJECTED, NO_LIMIT } from './latency-lane.js';
import { linkSignals } from './link-signals.js';

export interface DownstreamOptions {
  /** Retry settings, or `false` for a single attempt. @default RETRY_DEFAULTS */
  retry?: RetryOptions | false;
  /**
   * Per-attempt timeout in ms, or `false` for none, or derived from latency, per key:
   * `{ percentile, factor, floorMs, ceilingMs }` sets each attempt's timeout to the
   * percentile of recent successful latency × factor, within [floorMs, ceilingMs] (the
   * deadline stays the outer bound). @default {@link DOWNSTREAM_DEFAULTS}.attemptTimeout
   */
  attemptTimeout?: number | false | DerivedTimeoutOptions;
  /** Whole-call timeout in ms (all attempts and sleeps). @default none */
  totalTimeout?: number;
  /**
   * Whether operations are safe to repeat after an `unknown` outcome. `.call()` operations
   * default to idempotent (you chose to wrap them in retries); `.fetch()` decides per method.
   * @default {@link DOWNSTREAM_DEFAULTS}.idempotent
   */
  idempotent?: boolean;
  /**
   * Your own reading of an error; return undefined to fall back to kindly's classifier
   * (HTTP status, network codes, timeouts).
   */
  classify?: (error: unknown, nowMs: number) => Classification | undefined;
  /** Used when a call gives up or is rejected fast; receives the reason. */
  fallback?: Fallback<unknown>;
  /**
   * Retry budget: retries ≤ ratio × requests + reserve over a sliding window, per
   * budget key (the downstream by default; see `CallOptions.budgetKey`). `false` turns it off.
   * @default { ratio: 0.2, windowMs: 10_000, reservePerSecond: 10 }
   */
  budget?: RetryBudgetOptions | false;
  /** Circuit breaker, per key. Off unless given; `true` (or `{}`) for the defaults. @default false */
  breaker?: CircuitBreakerOptions | boolean;
  /** Bulkhead, per key. Off unless given; `true` (or `{}`) for the defaults. @default false */
  bulkhead?: BulkheadOptions | boolean;
  /** Adaptive pacing, per key. Off unless given; `true` (or `{}`) for the defaults. @default false */
  pacing?: PacerOptions | boolean;
  /**
   * Adaptive concurrency limit, per key: learns how many attempts the callee can usefully run
   * at once from latency, and rejects attempts beyond it (reason `rejected`). Partitions
   * (`{ partitions: { interactive: 0.9, background: 0.1 } }`, `CallOptions.partition`) share
   * the learned limit by ratio. Off unless given; `true` (or `{}`) for the defaults.
   * @default false
   */
  concurrency?: AdaptiveConcurrencyOptions | boolean;
  /**
   * Hedging for idempotent calls, per key: when an attempt has not answered after a delay
   * (fixed `delayMs`, or the learned `percentile` of latency), a second attempt goes without
   * cancelling the first; the first good answer wins. Hedges draw on the retry budget, stay
   * under `maxExtraLoad`, and are never sent while the breaker is not closed or pacing is
   * throttling. Off unless given; `true` (or `{}`) for the defaults. @default false
   */
  hedging?: HedgingOptions | boolean;
  /** Most per-key lanes (breaker/bulkhead/pacer) and budgets held at once. @default {@link DOWNSTREAM_DEFAULTS}.maxKeys */
  maxKeys?: number;
  /**
   * Where the budget, breaker and pacer share state with the other processes calling this
   * callee (`redisStore()` from `kindly-calls/redis`). Calls never wait on it, except a paced
   * attempt booking its slot; when it is down or slow they use local state (fail-open) and a
   * `store-availability` event says so. @default none: every process on its own
   */
  store?: FleetStore;
  /** @default the system clock */
  clock?: Clock;
  /** @default Math.random */
  random?: Random;
}

/** The defaults of {@link DownstreamOptions}, declared once (a test pins them). */
export const DOWNSTREAM_DEFAULTS = {
  attemptTimeout: 10_000,
  idempotent: true,
  maxKeys: 1_000,
} as const;

/** A downstream's breaker states, as `toJSON` returns them and `restore` takes them. */
export interface DownstreamSnapshot {
  downstream: string;
  /** By lane key. */
  breakers: Record<string, CircuitBreakerSnapshot>;
}

export interface FallbackInfo {
  reason: GiveUpReason;
  /** The error the call would otherwise have thrown (a `GiveUpError`). */
  error: GiveUpError;
  attempts: number;
}
export type Fallback<T> = (info: FallbackInfo) => T | PromiseLike<T>;

export interface CallOptions<T> {
  /** Aborting stops the call at once, sleeps included; the call rejects with `signal.reason`. */
  signal?: AbortSignal;
  /** Absolute deadline in the clock's monotonic ms. The earliest of this, the inherited one and `timeout` wins. */
  deadline?: number;
  /** Whole-call timeout in ms for this call. */
  timeout?: number;
  /** Overrides the downstream's `idempotent` for this call. */
  idempotent?: boolean;
  /** Which breaker / bulkhead / pacer lane the call uses. @default the downstream's name (`.fetch()`: the host) */
  key?: string;
  /** Which retry budget the call draws on, e.g. `payments:write`. @default the downstream's name */
  budgetKey?: string;
  /**
   * Told of an attempt's answer nobody will use: with hedging, a value that arrived after
   * another attempt's, or an error while another attempt was still running. The HTTP layer
   * cancels those response bodies.
   */
  onDiscard?: (answer: { value: T } | { error: unknown }) => void;
  /**
   * The class of caller for the adaptive concurrency limit's partitions (e.g. `background`).
   * A call of no or an unknown partition only uses capacity no partition is owed.
   */
  partition?: string;
  /**
   * For a non-idempotent call whose attempt ended `unknown`: asked before the retry whether
   * the previous attempt took effect. `true` ends the call (reason `verified-applied`),
   * `false` lets the retry go ahead. Without it such a call is never retried.
   */
  verify?: (context: { attempt: number; signal: AbortSignal | undefined }) => boolean | PromiseLike<boolean>;
  /** Used instead of throwing when the call gives up or is rejected fast. */
  fallback?: Fallback<T>;
  /**
   * Told about each failed attempt and whether a retry follows, before any sleep. The HTTP
   * layer uses it to cancel the body of a response that will be retried, and to keep the
   * last one.
   */
  onAttemptError?: (error: unknown, info: { attempt: number; willRetry: boolean }) => void;
  /**
   * This call's own reading of an error, asked before the downstream's `classify` and kindly's
   * classifier; return undefined to fall through to them. The HTTP layer uses it for what only
   * the request knows: a 409 on a request carrying an idempotency key, a hint read from a body,
   * the classification of an error it had to copy without its secrets (axios).
   */
  classify?: (error: unknown, nowMs: number) => Classification | undefined;
  /**
   * Awaited before each attempt — before it is counted, admitted by any policy or timed — so
   * that waiting for a precondition burns no attempt (the browser's offline wait).
   * Must settle by `deadline` (the call then gives up with reason `deadline`) and reject with
   * `signal.reason` when `signal` aborts.
   */
  beforeAttempt?: (info: {
    attempt: number;
    signal: AbortSignal | undefined;
    deadline: number | undefined;
  }) => void | PromiseLike<void>;
}

const KEYS = optionKeys<DownstreamOptions>({
  retry: true,
  attemptTimeout: true,
  totalTimeout: true,
  idempotent: true,
  classify: true,
  fallback: true,
  budget: true,
  breaker: true,
  bulkhead: true,
  pacing: true,
  concurrency: true,
  hedging: true,
  maxKeys: true,
  clock: true,
  random: true,
  store: true,
});

/** Every per-call option; anything else is refused, like a downstream option typo. */
const CALL_KEYS = optionKeys<CallOptions<unknown>>({
  signal: true,
  deadline: true,
  timeout: true,
  idempotent: true,
  key: true,
  budgetKey: true,
  partition: true,
  onDiscard: true,
  verify: true,
  fallback: true,
  onAttemptError: true,
  classify: true,
  beforeAttempt: true,
});

const NO_RETRY = new RetryPolicy({ maxAttempts: 1 });

/**
 * One callee and everything that protects it and us from it: retry policy, timeouts, and
 * the shared state of those policies. Create one per callee and reuse it.
 */
export class Downstream {
  readonly name: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly retry: RetryPolicy;
  readonly attemptTimeout: number;
  readonly totalTimeout: number | undefined;
  readonly idempotent: boolean;
  private readonly userClassify: DownstreamOptions['classify'];
  private readonly fallback: Fallback<unknown> | undefined;
  private readonly events = new EventHub();
  private readonly stats_ = new StatsCollector();
  private readonly budgets: Pick<KeyedRetryBudgets, 'recordRequest' | 'tryRetry' | 'recordOutcome'> | undefined;
  /** The link to the fleet store, when `store` is given. */
  private readonly fleet: FleetLink | undefined;
  private readonly lanes: Lanes;
  /** Whether any per-key policy is configured (the success path skips lanes otherwise). */
  private readonly laned: boolean;
  private readonly paceFirstAttempts: boolean;
  private readonly budgetShrinks: boolean;
  private inFlight = 0;

  constructor(name: string, options: DownstreamOptions = {}) {
    const v = new OptionsValidator(`downstream '${name}'`);
    v.check(typeof name === 'string' && name.length > 0, `Expected a non-empty downstream name, got ${JSON.stringify(name)}`);
    v.knownKeys(options, KEYS);
    const derivedTimeout =
      typeof options.attemptTimeout === 'object' && options.attemptTimeout !== null ? options.attemptTimeout : undefined;
    if (derivedTimeout !== undefined) v.nested('attemptTimeout', () => new DerivedTimeout(derivedTimeout));
    else if (options.attemptTimeout !== false) {
      v.duration('attemptTimeout', options.attemptTimeout, { min: 1, allowInfinity: true });
    }
    v.duration('totalTimeout', options.totalTimeout, { min: 1 })
      .func('classify', options.classify)
      .func('fallback', options.fallback);
    let retry: RetryPolicy | undefined;
    if (options.retry === false) retry = NO_RETRY;
    else {
      const retryOptions = options.retry ?? {};
      // Unbounded attempts may also be bounded by a total timeout on the downstream.
      const bounded =
        retryOptions.maxAttempts === Number.POSITIVE_INFINITY &&
        retryOptions.maxElapsed === undefined &&
        options.totalTimeout !== undefined
          ? { ...retryOptions, maxElapsed: options.totalTimeout }
          : retryOptions;
      try {
        retry = new RetryPolicy(bounded);
      } catch (error) {
        for (const p of (error as { problems?: string[] }).problems ?? [String(error)]) v.check(false, `retry: ${p}`);
      }
    }
    v.integer('maxKeys', options.maxKeys, 1);
    v.check(
      options.store === undefined || isFleetStore(options.store),
      `Expected \`store\` to be a fleet store (e.g. redisStore() from kindly-calls/redis), got ${typeof options.store}`,
    );
    const clock = options.clock ?? systemClock;
    const random = options.random ?? systemRandom;
    const maxKeys = options.maxKeys ?? DOWNSTREAM_DEFAULTS.maxKeys;
    // Each policy validates its own options; build one now so every problem surfaces here.
    const budgets =
      options.budget === false
        ? undefined
        : v.nested('budget', () => new KeyedRetryBudgets({ budget: options.budget || {}, maxKeys }));
    const breakerOptions = enabledOptions(options.breaker);
    const bulkheadOptions = enabledOptions(options.bulkhead);
    const pacingOptions = enabledOptions(options.pacing);
    if (breakerOptions !== undefined) v.nested('breaker', () => new CircuitBreaker(breakerOptions, random));
    if (bulkheadOptions !== undefined) v.nested('bulkhead', () => new Bulkhead(bulkheadOptions, clock));
    if (pacingOptions !== undefined) v.nested('pacing', () => new Pacer(pacingOptions));
    const concurrencyOptions = enabledOptions(options.concurrency);
    const hedgingOptions = enabledOptions(options.hedging);
    if (concurrencyOptions !== undefined) v.nested('concurrency', () => new AdaptiveConcurrencyLimit(concurrencyOptions));
    if (hedgingOptions !== undefined) v.nested('hedging', () => new HedgingPolicy(hedgingOptions));
    v.done();
    this.name = name;
    const fleet =
      options.store === undefined
        ? undefined
        : new FleetLink({
            store: options.store,
            downstream: name,
            clock,
            random,
            budget: budgets === undefined ? undefined : options.budget || {},
            breaker: breakerOptions,
            pacing: pacingOptions,
            maxKeys,
            onAvailability: (change, atMs) => {
              if (this.events.active) this.events.emit({ type: 'store-availability', downstream: this.name, atMs, ...change });
            },
          });
    this.fleet = fleet;
    this.budgets = fleet?.budgets ?? budgets;
    this.paceFirstAttempts = pacingOptions?.paceFirstAttempts ?? false;
    this.budgetShrinks = budgets !== undefined && options.budget !== false && Boolean(options.budget?.shrinkOnErrors);
    this.lanes = new Lanes({
      breaker: breakerOptions,
      bulkhead: bulkheadOptions,
      pacing: pacingOptions,
      latency:
        concurrencyOptions === undefined && derivedTimeout === undefined && hedgingOptions === undefined
          ? undefined
          : { concurrency: concurrencyOptions, attemptTimeout: derivedTimeout, hedging: hedgingOptions },
      clock,
      random,
      maxKeys,
      onBreakerChange: (key, from, to, atMs) => {
        if (to === 'open') this.stats_.breakerOpens++;
        if (this.events.active) this.events.emit({ type: 'breaker-state', downstream: this.name, atMs, key, from, to });
        fleet?.breakerChanged(key, from, to);
      },
      onCreate:
        fleet === undefined
          ? undefined
          : (lane) => {
              if (lane.breaker !== undefined) fleet.attachBreaker(lane.key, lane.breaker);
              if (lane.pacer !== undefined) fleet.attachPacer(lane.key, lane.pacer);
            },
    });
    this.laned = this.lanes.enabled;
    this.retry = retry as RetryPolicy;
    this.clock = clock;
    this.random = random;
    // A derived timeout is per lane; this is its ceiling (the timeout until latency is known).
    this.attemptTimeout =
      options.attemptTimeout === false
        ? Number.POSITIVE_INFINITY
        : derivedTimeout !== undefined
          ? (derivedTimeout.ceilingMs ?? DERIVED_TIMEOUT_DEFAULTS.ceilingMs)
          : ((options.attemptTimeout as number | undefined) ?? DOWNSTREAM_DEFAULTS.attemptTimeout);
    this.totalTimeout = options.totalTimeout;
    this.idempotent = options.idempotent ?? DOWNSTREAM_DEFAULTS.idempotent;
    this.userClassify = options.classify;
    this.fallback = options.fallback;
  }

  /** Subscribes to one event type; returns the unsubscribe function. */
  on<T extends KindlyEventType>(type: T, listener: (event: EventOf<T>) => void): () => void {
    return this.events.on(type, listener);
  }

  /** Subscribes to every event; returns the unsubscribe function. */
  onAny(listener: (event: KindlyEvent) => void): () => void {
    return this.events.onAny(listener);
  }

  /** A snapshot of this downstream's counters. */
  stats(): StatsSnapshot {
    const latency = this.laned ? this.lanes.latencySummary(this.clock.monotonic()) : undefined;
    return this.stats_.snapshot({
      queueDepth: this.laned ? this.lanes.queued : 0,
      inFlight: this.inFlight,
      concurrencyLimit: latency?.concurrencyLimit,
      attemptTimeoutMs: latency?.attemptTimeoutMs,
    });
  }

  /**
   * `fetch` through this downstream's pipeline: same signature and result as the
   * platform's `fetch`, plus kindly's per-call options in `init` (idempotency key, …).
   * Breakers, bulkheads and pacers are keyed by host.
   */
  fetch(input: RequestInfo | URL, init?: KindlyRequestInit): Promise<Response> {
    return fetchThrough(this, input, init);
  }

  // ── Breaker control, per lane (`key`: the call's `key`; `.fetch()`'s lanes are hosts, e.g.
  // `payments.internal:8443`). Each throws when the downstream has no breaker. ──

  /** The breaker state of a lane: `closed` for a lane that has not been used yet. */
  breakerState(key: string = this.name): BreakerState {
    this.requireBreaker();
    return this.lanes.find(key)?.breaker?.state(this.clock.monotonic()) ?? 'closed';
  }

  /** Opens a lane's breaker by hand and holds it open (calls fail fast) until `closeBreaker`. */
  isolateBreaker(key: string = this.name): void {
    this.requireBreaker();
    this.lanes.get(key).breaker?.isolate(this.clock.monotonic());
  }

  /** Closes a lane's breaker by hand, now: ends an isolation or a break and forgets its failures. */
  closeBreaker(key: string = this.name): void {
    this.requireBreaker();
    this.lanes.find(key)?.breaker?.close(this.clock.monotonic());
  }

  /**
   * Every lane's breaker as plain JSON (times relative to now), for `restore` here or in the
   * next process — `JSON.stringify(api)` gives the same. See `CircuitBreakerSnapshot`.
   */
  toJSON(): DownstreamSnapshot {
    const now = this.clock.monotonic();
    const breakers: Record<string, CircuitBreakerSnapshot> = {};
    for (const lane of this.lanes.values()) if (lane.breaker !== undefined) breakers[lane.key] = lane.breaker.snapshot(now);
    return { downstream: this.name, breakers };
  }

  /** Takes up breaker states saved by `toJSON`; checks them all before changing anything. */
  restore(snapshot: DownstreamSnapshot): void {
    this.requireBreaker();
    const entries = Object.entries((snapshot as Partial<DownstreamSnapshot> | null)?.breakers ?? {});
    const now = this.clock.monotonic();
    const check = new CircuitBreaker({}, this.random);
    const v = new OptionsValidator(`restore of '${this.name}'`);
    for (const [key, state] of entries) v.nested(`breakers.${key}`, () => check.restore(state, now));
    v.done();
    for (const [key, state] of entries) this.lanes.get(key).breaker?.restore(state, now);
  }

  private requireBreaker(): void {
    if (!this.lanes.hasBreaker) throw new TypeError(`downstream '${this.name}' has no breaker (set \`breaker: true\`)`);
  }

  /** Classifies an error: the user's classifier first, then kindly's. */
  classify(error: unknown): Classification {
    return this.classifyFor(error, undefined);
  }

  /**
   * The call's classifier, then the downstream's, then kindly's. A classifier that throws
   * is skipped: a bug in it must not leave a breaker permit or a bulkhead slot taken.
   */
  private classifyFor(error: unknown, perCall: CallOptions<unknown>['classify']): Classification {
    const now = this.clock.now();
    for (const classifier of [perCall, this.userClassify]) {
      if (classifier === undefined) continue;
      try {
        const c = classifier(error, now);
        if (c !== undefined) return c;
      } catch {
        // fall through to the next classifier
      }
    }
    return classifyError(error, now);
  }

  /**
   * Runs `operation` through the pipeline: deadline / total timeout → retry loop
   * (attempt timeout → operation). Resolves with its value, or rejects with a `GiveUpError`
   * whose `cause` is the last attempt's error (or with `signal.reason` on abort).
   */
  call<T>(operation: Operation<T>, options?: CallOptions<T>): Promise<T> {
    const inherited = currentDeadlineScope();
    if (options !== undefined) {
      const problems = checkCallOptions(options as CallOptions<unknown>);
      if (problems !== undefined) return Promise.reject(new InvalidOptionsError(`call on '${this.name}'`, problems));
      // Both the caller's signal and the inbound request's (a handler's call made with its
      // own signal): either one stops the call.
      const own = options.signal;
      const outer = inherited?.signal;
      if (own !== undefined && outer !== undefined && own !== outer && !own.aborted && !outer.aborted) {
        const link = linkSignals(own, outer);
        return this.run(operation, options, link.signal, inherited).finally(link.dispose);
      }
    }
    return this.run(operation, options, options?.signal ?? inherited?.signal, inherited);
  }

  private async run<T>(
    operation: Operation<T>,
    options: CallOptions<T> | undefined,
    signal: AbortSignal | undefined,
    inherited: DeadlineScope | undefined,
  ): Promise<T> {
    if (signal?.aborted) throw signal.reason;
    const clock = this.clock;
    const startedAt = clock.monotonic();
    const stats = this.stats_;
    stats.requests++;

    let deadline = Number.POSITIVE_INFINITY;
    if (inherited !== undefined) deadline = inherited.deadline;
    if (options?.deadline !== undefined && options.deadline < deadline) deadline = options.deadline;
    const totalTimeout = options?.timeout ?? this.totalTimeout;
    if (totalTimeout !== undefined && startedAt + totalTimeout < deadline) deadline = startedAt + totalTimeout;
    const hasDeadline = deadline !== Number.POSITIVE_INFINITY;
    const onGiveUp = inherited?.onGiveUp;

    // Pipeline order: deadline → retry loop: budget → breaker → pacing → bulkhead →
    // adaptive concurrency limit → attempt timeout (fixed or derived) → operation, hedged
    // (each hedge: hedging policy and retry budget → bulkhead → limit → its own timeout).
    const budgets = this.budgets;
    const budgetKey = options?.budgetKey ?? this.name;
    budgets?.recordRequest(budgetKey, startedAt);
    const lane: Lane | undefined = this.laned ? this.lanes.get(options?.key ?? this.name) : undefined;
    const breaker = lane?.breaker;
    const pacer = lane?.pacer;
    const fleet = this.fleet;
    if (fleet !== undefined) fleet.breakerUsed(lane?.key ?? this.name, startedAt);
    const bulkhead = lane?.bulkhead;
    // Each call deposits its share of a hedge (`maxExtraLoad`).
    lane?.latency?.hedging?.recordRequest(startedAt);

    const retry = this.retry;
    const idempotent = options?.idempotent ?? this.idempotent;
    const emitting = this.events;
    let attempt = 0;
    let previousDelay: number | undefined;
    let lastError: unknown;
    let lastOutcome: 'failed' | 'unknown' = 'failed';
    let needsVerify = false;
    // Step (4) of the retry decision: the system-wide limits, consulted only when the
    // per-call rules allow a retry. Built lazily: the success path never needs it.
    let admit: (() => GiveUpReason | undefined) | undefined;

    const beforeAttempt = options?.beforeAttempt;
    for (;;) {
      attempt++;
      if (beforeAttempt !== undefined) {
        try {
          await beforeAttempt({ attempt, signal, deadline: hasDeadline ? deadline : undefined });
        } catch (error) {
          if (signal?.aborted) return this.aborted(signal, attempt - 1, startedAt, lastOutcome);
          throw error;
        }
        if (signal?.aborted) return this.aborted(signal, attempt - 1, startedAt, lastOutcome);
      }
      if (needsVerify) {
        // Before the deadline check below, so that a slow answer cannot start an attempt late.
        needsVerify = false;
        const applied = await options?.verify?.({ attempt: attempt - 1, signal });
        if (signal?.aborted) return this.aborted(signal, attempt - 1, startedAt, lastOutcome);
        if (applied) return this.giveUp('verified-applied', attempt - 1, startedAt, lastOutcome, lastError, undefined, options);
      }
      let attemptStart =
        attempt === 1 && beforeAttempt === undefined && options?.verify === undefined ? startedAt : clock.monotonic();
      if (deadline - attemptStart < retry.minAttemptTime || (hasDeadline && deadline <= attemptStart)) {
        const cause = lastError ?? new DeadlineExceededError({ outcome: 'failed', attempts: attempt - 1, downstream: this.name });
        return this.giveUp(
          'deadline',
          attempt - 1,
          startedAt,
          lastError === undefined ? 'failed' : lastOutcome,
          cause,
          undefined,
          options,
        );
      }

      // Breaker: an open circuit fails fast; the call never reaches the callee.
      let permit = 0;
      if (breaker !== undefined) {
        permit = breaker.tryAcquire(attemptStart);
        if (permit === BREAKER_REJECTED) {
          const retryAfterMs = breaker.retryAfterMs(attemptStart);
          // A first attempt refused here never reached the callee; a retry refused here
          // ends the call with what the last real attempt said.
          if (attempt > 1)
            return this.giveUp('circuit-open', attempt - 1, startedAt, lastOutcome, lastError, retryAfterMs, options);
          const cause = new CircuitOpenError({ attempts: 0, downstream: this.name, retryAfterMs });
          return this.giveUp('circuit-open', 0, startedAt, 'failed', cause, retryAfterMs, options);
        }
      }
      // Pacing: while the callee is throttling us, attempts leave at the learned rate.
      if (pacer !== undefined && (attempt > 1 || this.paceFirstAttempts)) {
        const booked = fleet === undefined ? pacer.reserve(attemptStart) : fleet.reserve(lane!.key, pacer, attemptStart);
        const wait = typeof booked === 'number' ? booked : await booked;
        if (wait > 0) {
          if (attemptStart + wait > deadline - retry.minAttemptTime) {
            // A slot in the fleet's queue cannot be taken back; a local one can.
            if (typeof booked === 'number') pacer.cancelLastReservation();
            breaker?.onNeutral(attemptStart, permit);
            return this.giveUp('deadline', attempt - 1, startedAt, lastOutcome, lastError, undefined, options);
          }
          stats.pacingDelays++;
          stats.pacingDelayMs += wait;
          if (emitting.active) {
            emitting.emit({
              type: 'pacing-delay',
              downstream: this.name,
              atMs: attemptStart,
              delayMs: wait,
              rate: pacer.rate(attemptStart),
            });
          }
          try {
            await clock.sleep(wait, signal);
          } catch {
            breaker?.onNeutral(clock.monotonic(), permit);
            return this.aborted(signal as AbortSignal, attempt - 1, startedAt, lastOutcome);
          }
          attemptStart = clock.monotonic();
        }
      }
      // Bulkhead: a slot at once, or a bounded wait in line (within the deadline).
      if (bulkhead !== undefined && !bulkhead.tryAcquire()) {
        try {
          await bulkhead.acquire(signal, deadline - attemptStart);
        } catch (error) {
          breaker?.onNeutral(clock.monotonic(), permit);
          if (signal?.aborted) return this.aborted(signal, attempt - 1, startedAt, lastOutcome);
          stats.bulkheadRejections++;
          const why = (error as { why?: 'queue-full' | 'queue-timeout' }).why ?? 'queue-full';
          if (emitting.active) {
            emitting.emit({ type: 'bulkhead-rejected', downstream: this.name, atMs: clock.monotonic(), why });
          }
          if (attempt > 1) return this.giveUp('rejected', attempt - 1, startedAt, lastOutcome, lastError, undefined, options);
          return this.giveUp('rejected', 0, startedAt, 'failed', error, undefined, options);
        }
        attemptStart = clock.monotonic();
        if (deadline - attemptStart < retry.minAttemptTime) {
          bulkhead.release();
          breaker?.onNeutral(attemptStart, permit);
          return this.giveUp('deadline', attempt - 1, startedAt, lastOutcome, lastError, undefined, options);
        }
      }

      // Adaptive concurrency limit: after the bulkhead (a hard cap the user chose), before the
      // attempt is timed; a refusal never reached the callee.
      const latency: LatencyLane | undefined = lane?.latency;
      let slot = NO_LIMIT;
      if (latency !== undefined) {
        slot = latency.admit(attemptStart, options?.partition);
        let refusal: unknown;
        if (slot === LIMIT_REJECTED && latency.queues) {
          // A bounded wait in line for a slot, within the deadline (like the bulkhead's).
          try {
            slot = await latency.wait(options?.partition, signal, deadline - attemptStart);
            attemptStart = clock.monotonic();
            if (deadline - attemptStart < retry.minAttemptTime) {
              latency.giveBack(slot, attemptStart);
              bulkhead?.release();
              breaker?.onNeutral(attemptStart, permit);
              return this.giveUp('deadline', attempt - 1, startedAt, lastOutcome, lastError, undefined, options);
            }
          } catch (error) {
            if (signal?.aborted) {
              bulkhead?.release();
              breaker?.onNeutral(clock.monotonic(), permit);
              return this.aborted(signal, attempt - 1, startedAt, lastOutcome);
            }
            refusal = error;
          }
        }
        if (slot === LIMIT_REJECTED) {
          bulkhead?.release();
          breaker?.onNeutral(attemptStart, permit);
          stats.concurrencyRejections++;
          const limit = latency.limit?.limit ?? 0;
          if (emitting.active) {
            emitting.emit({
              type: 'concurrency-limited',
              downstream: this.name,
              atMs: attemptStart,
              key: lane!.key,
              limit,
              partition: options?.partition,
            });
          }
          if (attempt > 1) return this.giveUp('rejected', attempt - 1, startedAt, lastOutcome, lastError, undefined, options);
          const cause = refusal ?? new ConcurrencyLimitError(limit, 'at-limit', { downstream: this.name });
          return this.giveUp('rejected', 0, startedAt, 'failed', cause, undefined, options);
        }
      }

      const remaining = deadline - attemptStart;
      const attemptTimeoutMs =
        latency === undefined ? this.attemptTimeout : latency.attemptTimeoutMs(attemptStart, this.attemptTimeout);
      let timeoutMs = attemptTimeoutMs;
      let deadlineBound = false;
      if (remaining < timeoutMs) {
        timeoutMs = remaining;
        deadlineBound = true;
      }
      // The attempt's own deadline (call deadline or attempt timeout, whichever comes first) is
      // what the operation, nested kindly calls and outbound deadline headers see.
      const attemptDeadline = attemptStart + timeoutMs;
      const context = new AttemptContext(
        attempt,
        retry.maxAttempts - attempt,
        attemptDeadline === Number.POSITIVE_INFINITY ? undefined : attemptDeadline,
        clock,
        signal,
      );
      // Entering an AsyncLocalStorage scope switches on Node 20's promise hooks for the whole
      // process, so it is done only where deadlines are in play: the call has one, or runs
      // inside another scope (an inbound request, an outer call). Elsewhere nested calls see
      // no attempt deadline; pass `context.signal` to them explicitly.
      const scope: DeadlineScope | undefined =
        hasDeadline || inherited !== undefined ? new AttemptScope(attemptDeadline, context, onGiveUp) : undefined;
      stats.attempts++;
      if (attempt > 1) stats.retries++;
      this.inFlight++;
      if (emitting.active) emitting.emit({ type: 'attempt-start', downstream: this.name, atMs: attemptStart, attempt });
      try {
        const first = runAttempt(
          operation,
          context,
          clock,
          timeoutMs,
          deadlineBound,
          attemptTimeoutMs,
          signal,
          scope,
          this.name,
          attemptStart,
        );
        const hedgeDelay = idempotent ? latency?.hedging?.delayMs(attemptStart) : undefined;
        let value: T;
        let winner = 0;
        if (hedgeDelay === undefined) value = await first;
        else {
          const won = await this.hedged({ promise: first, abort: (reason) => context.abort(reason) }, hedgeDelay, {
            operation,
            attempt,
            deadline,
            hasDeadline,
            inherited,
            signal,
            lane: lane!,
            budgetKey,
            partition: options?.partition,
            discard: options?.onDiscard,
          });
          value = won.value;
          winner = won.winner;
          if (winner > 0) stats.hedgeWins++;
        }
        this.inFlight--;
        bulkhead?.release();
        latency?.settle(slot, attemptStart, clock.monotonic(), winner === 0 ? 'ok' : 'abandoned', timeoutMs);
        if (lane !== undefined || this.budgetShrinks) {
          const now = clock.monotonic();
          breaker?.onSuccess(now, permit);
          pacer?.onResult(now, 'ok', undefined, attemptStart);
          budgets?.recordOutcome(budgetKey, now, true);
        }
        stats.successes++;
        if (attempt > 1) {
          stats.retrySuccesses++;
          stats.retriedRequests++;
          stats.retryAddedLatencyMs += attemptStart - startedAt;
        }
        if (emitting.active) {
          const now = clock.monotonic();
          emitting.emit({
            type: 'attempt-end',
            downstream: this.name,
            atMs: now,
            attempt,
            outcome: 'ok',
            durationMs: now - attemptStart,
          });
        }
        return value;
      } catch (error) {
        this.inFlight--;
        bulkhead?.release();
        const now = clock.monotonic();
        if (latency !== undefined) latency.settle(slot, attemptStart, now, this.attemptEnd(error, signal, options), timeoutMs);
        if (signal?.aborted) {
          breaker?.onNeutral(now, permit);
          return this.aborted(signal, attempt, startedAt, 'unknown');
        }
        if (deadlineBound && error === context.expiredWith) {
          // Our own deadline cut the attempt short: the caller's limit, not the callee's
          // failure, so the breaker does not count it and the reason is `deadline`.
          breaker?.onNeutral(now, permit);
          options?.onAttemptError?.(error, { attempt, willRetry: false });
          return this.giveUp('deadline', attempt, startedAt, 'unknown', error, undefined, options);
        }
        const classification = this.classifyFor(error, options?.classify);
        if (classification.timeout) stats.timeouts++;
        breaker?.onError(now, permit, classification);
        if (pacer !== undefined) {
          const pacing: PacerSignal | undefined = classification.throttled
            ? 'rejected'
            : classification.timeout
              ? 'timeout'
              : undefined;
          if (pacing !== undefined || classification.hintMs !== undefined) {
            pacer.onResult(now, pacing ?? 'rejected', classification.hintMs, attemptStart);
            if (fleet !== undefined && classification.hintMs !== undefined) fleet.hint(lane!.key, now, classification.hintMs);
          }
        }
        budgets?.recordOutcome(budgetKey, now, false);
        lastError = error;
        lastOutcome = classification.outcome;
        if (emitting.active) {
          emitting.emit({
            type: 'attempt-end',
            downstream: this.name,
            atMs: now,
            attempt,
            outcome: classification.outcome,
            durationMs: now - attemptStart,
            classification,
            error,
          });
        }
        if (admit === undefined && (budgets !== undefined || breaker !== undefined)) {
          admit = () => {
            const at = clock.monotonic();
            if (breaker !== undefined && breaker.state(at) === 'open') return 'circuit-open';
            if (budgets !== undefined && !budgets.tryRetry(budgetKey, at)) {
              stats.budgetRejections++;
              if (emitting.active) emitting.emit({ type: 'budget-exhausted', downstream: this.name, atMs: at, key: budgetKey });
              return 'budget';
            }
            return undefined;
          };
        }
        const decision = retry.decide(
          {
            attempt,
            classification,
            idempotent,
            verifiable: options?.verify !== undefined,
            elapsedMs: now - startedAt,
            deadlineRemainingMs: deadline - now,
            previousDelayMs: previousDelay,
            admit,
          },
          this.random,
        );
        if (classification.hintMs !== undefined && emitting.active) {
          emitting.emit({
            type: 'hint',
            downstream: this.name,
            atMs: now,
            honoured: decision.retry && decision.hintMs !== undefined,
            hintMs: classification.hintMs,
            source: classification.hintSource ?? 'unknown',
          });
        }
        options?.onAttemptError?.(error, { attempt, willRetry: decision.retry });
        if (!decision.retry) {
          const retryAfterMs =
            decision.retryAfterMs ?? (decision.reason === 'circuit-open' ? breaker?.retryAfterMs(clock.monotonic()) : undefined);
          return this.giveUp(decision.reason, attempt, startedAt, lastOutcome, error, retryAfterMs, options);
        }
        previousDelay = decision.delayMs;
        needsVerify = decision.verify;
        if (emitting.active) {
          emitting.emit({
            type: 'retry-scheduled',
            downstream: this.name,
            atMs: now,
            nextAttempt: attempt + 1,
            delayMs: decision.delayMs,
            backoffMs: decision.backoffMs,
            hintMs: decision.hintMs,
            hintSource: decision.hintMs === undefined ? undefined : classification.hintSource,
            cause: describeCause(classification, error),
          });
        }
        // While pacing, the pacer (not each caller's own backoff) decides when retries leave:
        // its queue releases them at the learned rate, wait hints included. The
        // zero sleep still yields, so that every answer that arrived together is reported to
        // the pacer before any of those callers books its slot.
        const paced =
          pacer !== undefined && (fleet === undefined ? pacer.throttling(now) : fleet.throttling(lane!.key, pacer, now));
        const sleepMs = paced ? 0 : decision.delayMs;
        if (sleepMs > 0 || paced) {
          try {
            await clock.sleep(sleepMs, signal);
          } catch {
            // Only an abort interrupts a sleep.
            return this.aborted(signal as AbortSignal, attempt, startedAt, lastOutcome);
          }
        }
      }
    }
  }

  /** What a failed attempt says about latency (for the adaptive limit and the estimates). */
  private attemptEnd(
    error: unknown,
    signal: AbortSignal | undefined,
    options: Pick<CallOptions<unknown>, 'classify'> | undefined,
  ): AttemptEnd {
    if (signal?.aborted || error instanceof HedgeLostError) return 'abandoned';
    const c = this.classifyFor(error, options?.classify);
    if (c.timeout) return 'timeout';
    if (c.throttled || c.status === 503 || c.hintMs !== undefined) return 'overload';
    return 'ok';
  }

  /**
   * The first attempt and its hedges (see `runHedged`). Each hedge is admitted like an attempt
   * — the hedging policy (idempotent, not in trouble, under `maxExtraLoad`, retry budget), then
   * a bulkhead slot and a slot of the adaptive limit without waiting — and times out on its
   * own; the breaker and pacer hear only the group's outcome, as one attempt.
   */
  private hedged<T>(
    first: HedgeMember<T>,
    delayMs: number,
    g: {
      operation: Operation<T>;
      attempt: number;
      deadline: number;
      hasDeadline: boolean;
      inherited: DeadlineScope | undefined;
      signal: AbortSignal | undefined;
      lane: Lane;
      budgetKey: string;
      partition: string | undefined;
      discard: CallOptions<T>['onDiscard'];
    },
  ): Promise<{ value: T; winner: number }> {
    const clock = this.clock;
    const lane = g.lane;
    const latency = lane.latency as LatencyLane;
    const hedging = latency.hedging as HedgingPolicy;
    const stats = this.stats_;
    const budgets = this.budgets;
    return runHedged(first, {
      clock,
      delayMs,
      maxHedges: hedging.maxHedges,
      discard: g.discard,
      startHedge: (n) => {
        const now = clock.monotonic();
        if (g.signal?.aborted || g.deadline - now < this.retry.minAttemptTime) return undefined;
        const bulkhead = lane.bulkhead;
        if (bulkhead !== undefined && !bulkhead.tryAcquire()) return undefined;
        const slot = latency.admit(now, g.partition);
        if (slot === LIMIT_REJECTED) {
          bulkhead?.release();
          return undefined;
        }
        const trouble =
          (lane.breaker !== undefined && lane.breaker.state(now) !== 'closed') ||
          (lane.pacer !== undefined && lane.pacer.throttling(now));
        const refusal = hedging.decide({
          nowMs: now,
          idempotent: true,
          hedgesSent: n - 1,
          trouble,
          retryBudget: budgets === undefined ? undefined : () => budgets.tryRetry(g.budgetKey, now),
        });
        if (refusal !== undefined) {
          bulkhead?.release();
          if (slot >= 0) latency.limit?.release(slot, now, now, 'ignore');
          return undefined;
        }
        const fixed = latency.attemptTimeoutMs(now, this.attemptTimeout);
        const deadlineBound = g.deadline - now < fixed;
        const timeoutMs = deadlineBound ? g.deadline - now : fixed;
        const attemptDeadline = now + timeoutMs;
        const context = new AttemptContext(
          g.attempt,
          this.retry.maxAttempts - g.attempt,
          attemptDeadline === Number.POSITIVE_INFINITY ? undefined : attemptDeadline,
          clock,
          g.signal,
        );
        const scope: DeadlineScope | undefined =
          g.hasDeadline || g.inherited !== undefined
            ? new AttemptScope(attemptDeadline, context, g.inherited?.onGiveUp)
            : undefined;
        stats.attempts++;
        stats.hedges++;
        this.inFlight++;
        if (this.events.active) {
          this.events.emit({ type: 'hedge', downstream: this.name, atMs: now, attempt: g.attempt, hedge: n, delayMs });
        }
        const done = (end: AttemptEnd) => {
          this.inFlight--;
          bulkhead?.release();
          latency.settle(slot, now, clock.monotonic(), end, timeoutMs);
        };
        const promise = runAttempt(
          g.operation,
          context,
          clock,
          timeoutMs,
          deadlineBound,
          fixed,
          g.signal,
          scope,
          this.name,
          now,
        ).then(
          (value) => {
            done('ok');
            return value;
          },
          (error: unknown) => {
            done(this.attemptEnd(error, g.signal, undefined));
            throw error;
          },
        );
        return { promise, abort: (reason) => context.abort(reason) };
      },
    });
  }

  private aborted(signal: AbortSignal, attempts: number, startedAt: number, outcome: 'failed' | 'unknown'): never {
    if (this.events.active) {
      const now = this.clock.monotonic();
      this.events.emit({
        type: 'give-up',
        downstream: this.name,
        atMs: now,
        reason: 'aborted',
        attempts,
        elapsedMs: now - startedAt,
        outcome,
      });
    }
    this.stats_.failures++;
    throw signal.reason;
  }

  private async giveUp<T>(
    reason: GiveUpReason,
    attempts: number,
    startedAt: number,
    outcome: 'failed' | 'unknown',
    cause: unknown,
    retryAfterMs: number | undefined,
    options: CallOptions<T> | undefined,
  ): Promise<T> {
    const now = this.clock.monotonic();
    const elapsedMs = now - startedAt;
    const error = new GiveUpError(reason, {
      outcome,
      attempts,
      elapsedMs,
      retryAfterMs,
      downstream: this.name,
      cause,
    });
    this.stats_.failures++;
    if (attempts > 1) this.stats_.retriedRequests++;
    if (this.events.active) {
      this.events.emit({ type: 'give-up', downstream: this.name, atMs: now, reason, attempts, elapsedMs, outcome, retryAfterMs });
    }
    currentDeadlineScope()?.onGiveUp?.(reason);
    const fallback = (options?.fallback ?? this.fallback) as Fallback<T> | undefined;
    if (fallback === undefined) throw error;
    this.stats_.fallbacks++;
    if (this.events.active) this.events.emit({ type: 'fallback', downstream: this.name, atMs: now, reason });
    return await fallback({ reason, error, attempts });
  }
}

/** Cheap checks of per-call options (a NaN timeout must not silently mean "none"). */
/** Every problem with a call's options (unknown keys included), or `undefined` when there is none. */
function checkCallOptions(options: CallOptions<unknown>): readonly string[] | undefined {
  const v = new OptionsValidator('call');
  v.knownKeys(options, CALL_KEYS);
  if (typeof options !== 'object' || options === null) return v.problems;
  const { timeout, deadline } = options;
  v.duration('timeout', timeout, { allowInfinity: true })
    .check(
      deadline === undefined || (typeof deadline === 'number' && !Number.isNaN(deadline)),
      `Expected \`deadline\` to be a number (monotonic ms), got ${String(deadline)}`,
    )
    .boolean('idempotent', options.idempotent)
    .string('key', options.key)
    .string('budgetKey', options.budgetKey)
    .func('verify', options.verify)
    .func('fallback', options.fallback)
    .func('onAttemptError', options.onAttemptError)
    .func('classify', options.classify)
    .func('beforeAttempt', options.beforeAttempt);
  return v.problems.length > 0 ? v.problems : undefined;
}

function describeCause(classification: Classification, error: unknown): string {
  if (classification.status !== undefined) return `status ${classification.status}`;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof Error) return error.name;
  return 'error';
}

/** Creates a downstream: the policies and shared state for one callee. */
export function downstream(name: string, options?: DownstreamOptions): Downstream {
  return new Downstream(name, options);
}
