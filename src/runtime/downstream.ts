import { classifyThrough } from '../classify/classifier-chain.js';
import type { Classification } from '../classify/outcome.js';
import { GiveUpError, type GiveUpReason, isConcurrencyLimitError, isDeadlineExceededError } from '../errors/errors.js';
import { callHook } from '../errors/report-hook-error.js';
import { enabledOptions, InvalidOptionsError, OptionsValidator, optionKeys } from '../options/validate.js';
import {
  CallMachine,
  type CallPlan,
  STEP_ATTEMPT,
  STEP_GIVE_UP,
  STEP_SLEEP,
  STEP_VERIFY,
  STEP_WAIT,
  type Step,
} from '../orchestration/call-machine.js';
import { callDeadline } from '../orchestration/deadline.js';
import { attemptTimeoutOf, budgetStageOf, corePolicies, DOWNSTREAM_DEFAULTS } from '../orchestration/downstream-plan.js';
import type { HedgeAttempt } from '../orchestration/hedge-attempt.js';
import { checkOptional, type LatencyKit, type OptionalPolicies } from '../orchestration/optional-policies.js';
import { Pipeline } from '../orchestration/pipeline.js';
import { type AttemptResult, type Queue, RESULT_FAILED, RESULT_NEUTRAL, RESULT_OK } from '../orchestration/stage.js';
import type { BudgetLedger, BudgetStage } from '../orchestration/stages/budget-stage.js';
import type { AdaptiveConcurrencyOptions } from '../policies/adaptive-concurrency.js';
import type { BulkheadOptions } from '../policies/bulkhead-slots.js';
import {
  type BreakerState,
  CircuitBreaker,
  type CircuitBreakerOptions,
  type CircuitBreakerSnapshot,
} from '../policies/circuit-breaker.js';
import type { DerivedTimeoutOptions } from '../policies/derived-timeout.js';
import type { HedgingOptions } from '../policies/hedging.js';
import type { PacerOptions } from '../policies/pacer.js';
import type { KeyedRetryBudgets, RetryBudgetOptions } from '../policies/retry-budget.js';
import type { RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import { type Random, systemRandom } from '../random/random.js';
import type { FleetLink } from '../store/fleet-link.js';
import { describeStore, type FleetStore, isFleetStore } from '../store/fleet-store.js';
import type { CallInfo, CallWrapper } from '../telemetry/call-wrapper.js';
import { type ChaosEvent, EventHub, type EventOf, type KindlyEvent, type KindlyEventType } from '../telemetry/events.js';
import { StatsCollector, type StatsSnapshot } from '../telemetry/stats.js';
import type { Cancel, Clock } from '../time/clock.js';
import { onAbort, type Unsubscribe } from '../time/on-abort.js';
import { SystemClock, systemClock } from '../time/system-clock.js';
import {
  AttemptContext,
  AttemptScope,
  type AttemptSettlement,
  type InternalCallOptions,
  type Operation,
  RUNS_NO_USER_CODE,
  resumeLost,
  runAttempt,
} from './attempt.js';
import { Bulkhead } from './bulkhead.js';
import { currentDeadlineScope, type DeadlineScope } from './deadline-context.js';
import { ALL_DOWNSTREAM_POLICIES, type DownstreamPolicies, LITE_DOWNSTREAM_POLICIES } from './downstream-policies.js';
import { HedgeLostError, type HedgeMember, runHedged } from './hedged-attempt.js';
import { type Lane, Lanes } from './lanes.js';
import { linkSignals } from './link-signals.js';
import { LOST_ATTEMPTS_RESOLVE_WITH_THENABLE } from './lost-attempt-context.js';

/** `drive` from the top of an attempt: the `beforeAttempt` hook, then `begin`. */
const STEP_BEGIN = 0;

export interface DownstreamOptions {
  /** Retry settings, or `false` for a single attempt. @default RETRY_DEFAULTS */
  retry?: RetryOptions | false;
  /**
   * Per-attempt timeout in ms, or `false` for none, or derived from latency, per key:
   * `{ percentile, factor, floorMs, ceilingMs }` sets each attempt's timeout to the
   * percentile of recent successful latency × factor, within [floorMs, ceilingMs] (the
   * deadline stays the outer bound). @default {@link DOWNSTREAM_DEFAULTS}.attemptTimeoutMs
   */
  attemptTimeoutMs?: number | false | DerivedTimeoutOptions;
  /** Whole-call timeout in ms (all attempts and sleeps). @default none */
  totalTimeoutMs?: number;
  /**
   * Whether operations are safe to repeat after an `unknown` outcome. `.call()` operations
   * default to idempotent (you chose to wrap them in retries); `fetchThrough` decides per method.
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

/** The defaults of {@link DownstreamOptions} (declared once, in the orchestration; a test pins them). */
export { DOWNSTREAM_DEFAULTS };

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
  /** Absolute deadline in the clock's monotonic ms. The earliest of this, the inherited one and `timeoutMs` wins. */
  deadline?: number;
  /** Whole-call timeout in ms for this call. */
  timeoutMs?: number;
  /**
   * This call's attempt timeout in ms, in place of the downstream's `attemptTimeoutMs` (a
   * derived timeout then starts from it; the deadline still bounds it). For a request known
   * to be slower than the rest — a client library's own per-request timeout, passed on.
   */
  attemptTimeoutMs?: number;
  /** Overrides the downstream's `idempotent` for this call. */
  idempotent?: boolean;
  /** Which breaker / bulkhead / pacer lane the call uses. @default the downstream's name (`fetchThrough`: the host) */
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
  attemptTimeoutMs: true,
  totalTimeoutMs: true,
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

/** How much earlier than the clock's reading a native timer may fire (see `abortedAtDeadline`). */
const TIMER_EARLY_MS = 1;

/** What `hookAnswer` gives when the call's deadline came before the hook's answer. */
const PAST_DEADLINE: unique symbol = Symbol('past the deadline');

/** Every per-call option; anything else is refused, like a downstream option typo. */
const CALL_KEYS = optionKeys<CallOptions<unknown>>({
  signal: true,
  deadline: true,
  timeoutMs: true,
  attemptTimeoutMs: true,
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

/**
 * One callee and everything that protects it and us from it: retry policy, timeouts, and
 * the shared state of those policies. Create one per callee and reuse it.
 */
export class Downstream implements CallPlan {
  readonly name: string;
  readonly clock: Clock;
  readonly random: Random;
  readonly retry: RetryPolicy;
  readonly attemptTimeoutMs: number;
  readonly totalTimeoutMs: number | undefined;
  readonly idempotent: boolean;
  private readonly userClassify: DownstreamOptions['classify'];
  private readonly fallback: Fallback<unknown> | undefined;
  private readonly events = new EventHub();
  private readonly stats_ = new StatsCollector();
  /** The link to the fleet store, when `store` is given. */
  private readonly fleet: FleetLink | undefined;
  private readonly lanes: Lanes;
  /** Whether any per-key policy is configured (the success path skips lanes otherwise). */
  private readonly laned: boolean;
  /** The pipeline when no per-key policy is configured (the budget alone, or nothing). */
  private readonly pipeline: Pipeline;
  /** The retry budgets (the fleet's when a store is given), for hedges. */
  private readonly budgetLedger: BudgetLedger | undefined;
  private inFlight = 0;
  /**
   * How an attempt of the common call settles it (see `run`): once per downstream, so an
   * attempt carries no closures of its own for it.
   */
  private readonly settlement: AttemptSettlement<unknown, unknown> = {
    onValue: (value, context) => {
      const run = context.run as CallRun<unknown>;
      return this.afterSuccess(run, run.lane, value);
    },
    onError: (error, context) => {
      const run = context.run as CallRun<unknown>;
      const next = this.afterFailure(run, context, error, run.signal, run.options);
      return next === STEP_SLEEP ? this.drive(run, STEP_SLEEP) : next;
    },
  };
  /**
   * The system clock, when a call may start on its coarse reading (see `run`): a runtime that
   * keeps it fresh, no whole-call timeout and no fleet, whose deadlines and shared windows want
   * the clock itself.
   */
  private readonly coarseClock: SystemClock | undefined;
  /** The policies built only when asked for (see the constructor). */
  private readonly policies: DownstreamPolicies;
  /** Instrumentation around each call (kindly-calls/otel); none costs one check per call. */
  private wrappers: readonly CallWrapper[] | undefined;

  /**
   * Made by `downstream()`. `policies`: those built only when asked for (adaptive pacing, the
   * latency policies); without them (the default, and `kindly-calls/lite`) an option that needs
   * one is an `InvalidOptionsError`.
   */
  constructor(name: string, options: DownstreamOptions = {}, policies: DownstreamPolicies = LITE_DOWNSTREAM_POLICIES) {
    const resolved = resolveOptions(name, options, policies.optional);
    this.policies = policies;
    const { clock, random, budgets } = resolved;
    this.name = name;
    const fleet = options.store === undefined ? undefined : this.linkFleet(options.store, resolved, options.budget);
    this.fleet = fleet;
    const ledger = fleet?.budgets ?? budgets;
    this.budgetLedger = ledger;
    const budgetStage = budgetStageOf(ledger, options.budget, (key, atMs) => {
      this.stats_.budgetRejections++;
      if (this.events.active) this.events.emit({ type: 'budget-exhausted', downstream: this.name, atMs, key });
    });
    this.pipeline = budgetStage === undefined ? Pipeline.EMPTY : new Pipeline([budgetStage]);
    this.lanes = this.createLanes(resolved, budgetStage, fleet);
    this.laned = this.lanes.enabled;
    this.retry = resolved.retry;
    this.clock = clock;
    this.random = random;
    // A derived timeout is per lane; this is its ceiling (the timeout until latency is known).
    this.attemptTimeoutMs = attemptTimeoutOf(options.attemptTimeoutMs);
    this.totalTimeoutMs = options.totalTimeoutMs;
    this.coarseClock =
      clock instanceof SystemClock && clock.coarseKeepsTime && fleet === undefined && options.totalTimeoutMs === undefined
        ? clock
        : undefined;
    this.idempotent = options.idempotent ?? DOWNSTREAM_DEFAULTS.idempotent;
    this.userClassify = options.classify;
    this.fallback = options.fallback;
  }

  /** The link to the fleet's shared state: budget leases, the shared breaker and pacing queue. */
  private linkFleet(store: FleetStore, r: ResolvedOptions, budget: DownstreamOptions['budget']): FleetLink {
    return store.link({
      downstream: this.name,
      clock: r.clock,
      random: r.random,
      budget: r.budgets === undefined ? undefined : budget || {},
      breaker: r.breaker,
      pacing: r.pacing,
      maxKeys: r.maxKeys,
      onAvailability: (change, atMs) => {
        if (this.events.active) this.events.emit({ type: 'store-availability', downstream: this.name, atMs, ...change });
      },
    });
  }

  /** Per-key lanes (breaker, bulkhead, pacer, latency policies), reporting to this downstream's stats and events. */
  private createLanes(r: ResolvedOptions, budgetStage: BudgetStage | undefined, fleet: FleetLink | undefined): Lanes {
    return new Lanes({
      policies: this.policies,
      budgetStage,
      budgetLedger: this.budgetLedger,
      paceFirstAttempts: r.pacing?.paceFirstAttempts ?? false,
      maxPacingHintMs: r.retry.maxRetryAfterMs,
      onPacingDelay: (pacer, atMs, delayMs) => {
        this.stats_.pacingDelays++;
        this.stats_.pacingDelayMs += delayMs;
        if (this.events.active) {
          this.events.emit({ type: 'pacing-delay', downstream: this.name, atMs, delayMs, rate: pacer.rate(atMs) });
        }
      },
      paceBooker:
        fleet === undefined
          ? undefined
          : (key, pacer) => ({
              reserve: (nowMs, due, latestMs) => fleet.reserve(key, pacer, nowMs, due, latestMs),
              throttling: (nowMs) => fleet.throttling(key, pacer, nowMs),
              hint: (nowMs, hintMs) => fleet.hint(key, nowMs, hintMs),
              unpacedSent: (nowMs) => fleet.unpacedSent(key, pacer, nowMs),
            }),
      breaker: r.breaker,
      bulkhead: r.bulkhead,
      pacing: r.pacing,
      latency:
        r.concurrency === undefined && r.derivedTimeout === undefined && r.hedging === undefined
          ? undefined
          : { concurrency: r.concurrency, attemptTimeoutMs: r.derivedTimeout, hedging: r.hedging },
      onConcurrencyLimited: (key, limit, atMs, partition) => {
        this.stats_.concurrencyRejections++;
        if (this.events.active) {
          this.events.emit({ type: 'concurrency-limited', downstream: this.name, atMs, key, limit, partition });
        }
      },
      clock: r.clock,
      random: r.random,
      maxKeys: r.maxKeys,
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
  }

  /** Subscribes to one event type; returns the unsubscribe function. */
  on<T extends KindlyEventType>(type: T, listener: (event: EventOf<T>) => void): () => void {
    return this.events.on(type, listener);
  }

  /** Subscribes to every event; returns the unsubscribe function. */
  onAny(listener: (event: KindlyEvent) => void): () => void {
    return this.events.onAny(listener);
  }

  /**
   * Counts and reports a fault that kindly-calls/chaos injected into an attempt (the
   * `chaos` event, `stats().chaosInjected`). Not for other uses.
   */
  recordChaos(event: Omit<ChaosEvent, 'type' | 'downstream' | 'atMs'>): void {
    this.stats_.chaosInjected++;
    if (this.events.active) {
      this.events.emit({ type: 'chaos', downstream: this.name, atMs: this.clock.monotonic(), ...event });
    }
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

  // ── Breaker control, per lane (`key`: the call's `key`; `fetchThrough`'s lanes are hosts, e.g.
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
   * The call's classifier, then the downstream's, then kindly's; one that throws is skipped.
   */
  private classifyFor(error: unknown, perCall: CallOptions<unknown>['classify']): Classification {
    return classifyThrough(error, this.clock.now(), perCall, this.userClassify);
  }

  /**
   * Runs `operation` through the pipeline: deadline / total timeout → retry loop
   * (attempt timeout → operation). Resolves with its value, or rejects with a `GiveUpError`
   * whose `cause` is the last attempt's error (or with `signal.reason` on abort).
   */
  call<T>(operation: Operation<T>, options?: CallOptions<T>): Promise<T> {
    const wrappers = this.wrappers;
    if (wrappers === undefined) return this.callUnwrapped(operation, options);
    const info: CallInfo = { key: options?.key ?? this.name };
    return wrapAll(wrappers, 0, operation, (wrapped) => this.callUnwrapped(wrapped, options), info);
  }

  /**
   * Puts `wrapper` around every later call (instrumentation: tracing, metrics); the first
   * added is outermost. Returns the function that removes it.
   */
  wrapCalls(wrapper: CallWrapper): () => void {
    this.wrappers = [...(this.wrappers ?? []), wrapper];
    return () => {
      const rest = (this.wrappers ?? []).filter((w) => w !== wrapper);
      this.wrappers = rest.length === 0 ? undefined : rest;
    };
  }

  private callUnwrapped<T>(operation: Operation<T>, options: CallOptions<T> | undefined): Promise<T> {
    const inherited = currentDeadlineScope();
    if (options !== undefined) {
      const problems = checkCallOptions(options as CallOptions<unknown>);
      if (problems !== undefined) return Promise.reject(new InvalidOptionsError(`call on '${this.name}'`, problems));
      // Both the caller's signal and the inbound request's (a handler's call made with its
      // own signal): either one stops the call.
      const own = options.signal;
      const outer = inherited?.signal;
      // (Either may have aborted already: the link then starts aborted, with that one's reason.)
      if (own !== undefined && outer !== undefined && own !== outer) {
        const link = linkSignals(own, outer);
        return this.run(operation, options, link.signal, inherited).finally(link.dispose);
      }
    }
    return this.run(operation, options, options?.signal ?? inherited?.signal, inherited);
  }

  /**
   * Drives the call's state machine (src/orchestration/call-machine.ts) with real time: it
   * decides, the driver waits, runs the operation and reports back. Only I/O lives here —
   * the hooks, sleeps, the bulkhead's line, the attempt itself — plus stats and events.
   *
   * The common call — no hooks, every stage admits at once, no hedge — takes no async frame:
   * the attempt's own promise settles it (`afterSuccess`), and only a failure or a wait
   * continues in `drive`. That frame and its await were a fifth of a call's cost.
   */
  private run<T>(
    operation: Operation<T>,
    options: CallOptions<T> | undefined,
    signal: AbortSignal | undefined,
    inherited: DeadlineScope | undefined,
  ): Promise<T> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    try {
      const lane: Lane | undefined = this.laned ? this.lanes.get(options?.key ?? this.name) : undefined;
      const pipeline = lane === undefined ? this.pipeline : lane.pipeline;
      const coarseClock = this.coarseClock;
      const coarse =
        coarseClock !== undefined &&
        pipeline.coarseStart &&
        inherited === undefined &&
        (options === undefined || (options.deadline === undefined && options.timeoutMs === undefined)) &&
        !this.events.active;
      const startedAt = coarse ? coarseClock.coarseMonotonic() : this.clock.monotonic();
      this.stats_.requests++;
      // A coarse start has no deadline source at all (see `coarse`): nothing to work out.
      const deadline = coarse
        ? Number.POSITIVE_INFINITY
        : callDeadline(startedAt, inherited?.deadline, options?.deadline, options?.timeoutMs ?? this.totalTimeoutMs);
      const fleet = this.fleet;
      if (fleet !== undefined) fleet.breakerUsed(lane?.key ?? this.name, startedAt);
      const call = new CallRun(this, pipeline, startedAt, deadline, operation, options, signal, inherited, lane);
      call.start(startedAt);
      if (options !== undefined && (options.beforeAttempt !== undefined || options.verify !== undefined)) {
        return this.drive(call, STEP_BEGIN);
      }
      const step = call.begin(startedAt);
      if (step !== STEP_ATTEMPT || (call.idempotent && lane?.latency?.hedging !== undefined)) {
        return this.drive(call, step);
      }
      const context = this.attemptContext(call, signal, inherited, options);
      context.run = call;
      context.startedCoarse = coarse;
      const attempt = runAttempt(operation, context, this.settlement as AttemptSettlement<T, T>);
      return LOST_ATTEMPTS_RESOLVE_WITH_THENABLE ? attempt : attempt.then(resumeLost);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * The rest of a call, from `entry`: `STEP_BEGIN` (the `beforeAttempt` hook, then the next
   * attempt's admission), `STEP_SLEEP` (the wait before a retry, `call.waitMs`), or the step
   * admission returned. Each turn: sleep, begin, admit, attempt — until a value or the end.
   */
  private async drive<T>(run: CallRun<T>, entry: Step | typeof STEP_BEGIN): Promise<T> {
    const call = run;
    let step: Step | typeof STEP_BEGIN = entry;
    for (;;) {
      // Each wait is awaited only when there is one: a retry without a delay, hook or line goes
      // on in the same turn, as it always has.
      if (step === STEP_SLEEP) {
        if (call.waitMs > 0 || call.yieldBeforeRetry) await this.sleepBeforeRetry(run);
        step = STEP_BEGIN;
      }
      if (step === STEP_BEGIN) {
        const cut = run.options?.beforeAttempt === undefined ? undefined : await this.beforeAttempt(run);
        step = cut ?? this.begin(run);
      }
      if (step !== STEP_ATTEMPT && step !== STEP_GIVE_UP) step = await this.admit(run, step);
      if (step === STEP_GIVE_UP) return this.giveUp(call, call.startedAt, run.options);
      // The attempt (with its hedges when the call is hedged), awaited here: one async frame.
      const context = this.attemptContext(call, run.signal, run.inherited, run.options);
      let value: T;
      try {
        const first = runAttempt(run.operation, context);
        const hedgeDelay = call.hedgeDelayMs();
        value =
          hedgeDelay === undefined
            ? await first
            : this.hedgeWon(call, context, await this.hedged(run, first, context, hedgeDelay));
      } catch (error) {
        const next = this.afterFailure<T>(call, context, error, run.signal, run.options);
        if (next !== STEP_SLEEP) return next;
        step = STEP_SLEEP;
        continue;
      }
      return this.afterSuccess(call, run.lane, value);
    }
  }

  /** `STEP_SLEEP`: the wait before a retry (a yield at 0 ms when the pacer asks); an abort ends the call. */
  private async sleepBeforeRetry<T>(run: CallRun<T>): Promise<void> {
    try {
      await this.clock.sleep(run.waitMs, run.signal);
    } catch {
      // Only an abort interrupts a sleep.
      this.aborted(run.signal as AbortSignal, run, run.startedAt);
    }
  }

  /**
   * The call's `beforeAttempt` hook, awaited before the next attempt is counted or admitted:
   * `STEP_GIVE_UP` when the deadline aborted the call's signal meanwhile (`abortedWaiting`).
   */
  private async beforeAttempt<T>(run: CallRun<T>): Promise<Step | undefined> {
    const call = run;
    const signal = run.signal;
    const deadline = call.deadline === Number.POSITIVE_INFINITY ? undefined : call.deadline;
    try {
      await run.options?.beforeAttempt?.({ attempt: call.attempt + 1, signal, deadline });
    } catch (error) {
      if (!signal?.aborted) throw error;
    }
    return signal?.aborted ? this.abortedWaiting(signal, call) : undefined;
  }

  /**
   * A hook's answer (`verify`), but no later than the call's deadline (then `PAST_DEADLINE`)
   * or the caller's abort (then its reason): a hook that never answers must not hang the call.
   */
  private hookAnswer<A, T>(answer: A | PromiseLike<A>, run: CallRun<T>): A | Promise<A | typeof PAST_DEADLINE> {
    if (answer === null || typeof answer !== 'object' || typeof (answer as PromiseLike<A>).then !== 'function')
      return answer as A;
    const signal = run.signal;
    const left = run.deadline - this.clock.monotonic();
    if (signal === undefined && left === Number.POSITIVE_INFINITY) return Promise.resolve(answer);
    return new Promise<A | typeof PAST_DEADLINE>((resolve, reject) => {
      let cancelTimer: Cancel | undefined;
      let stopAbort: Unsubscribe | undefined;
      const done = () => {
        cancelTimer?.();
        stopAbort?.();
      };
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      if (left !== Number.POSITIVE_INFINITY) {
        cancelTimer = this.clock.schedule(Math.max(0, left), () => {
          stopAbort?.();
          resolve(PAST_DEADLINE);
        });
      }
      if (signal !== undefined) {
        stopAbort = onAbort(signal, () => {
          cancelTimer?.();
          reject(signal.reason);
        });
      }
      (answer as PromiseLike<A>).then(
        (value) => {
          done();
          resolve(value);
        },
        (error: unknown) => {
          done();
          reject(error);
        },
      );
    });
  }

  /** The next attempt begins (the machine's `begin`): the call's first at its start, unless a hook ran. */
  private begin<T>(run: CallRun<T>): Step {
    const call = run;
    const options = run.options;
    const unhooked = options?.beforeAttempt === undefined && options?.verify === undefined;
    return call.begin(call.attempt === 0 && unhooked ? call.startedAt : this.clock.monotonic());
  }

  /**
   * Admission until the attempt may run (`STEP_ATTEMPT`) or the call ends (`STEP_GIVE_UP`):
   * the verify hook, the stages' waits (pacing) and lines (bulkhead, adaptive limit, a fleet's booking).
   */
  private async admit<T>(run: CallRun<T>, first: Step): Promise<Step> {
    const call = run;
    const signal = run.signal;
    let step = first;
    while (step !== STEP_ATTEMPT && step !== STEP_GIVE_UP) {
      if (step === STEP_VERIFY) {
        // Before the deadline check, so that a slow answer cannot start an attempt late.
        let applied: unknown;
        try {
          applied = await this.hookAnswer(run.options?.verify?.({ attempt: call.attemptsMade, signal }), run);
        } catch (error) {
          if (!signal?.aborted) throw error;
          applied = undefined;
        }
        if (signal?.aborted) {
          step = this.abortedWaiting(signal, call);
          continue;
        }
        // Past the deadline: no verdict, and no attempt (the admission gives up, `deadline`).
        step = call.verified(this.clock.monotonic(), applied === true);
      } else if (step === STEP_WAIT) {
        try {
          await this.clock.sleep(call.waitMs, signal);
        } catch {
          step = this.abortedWaiting(signal as AbortSignal, call);
          continue;
        }
        step = call.resume(this.clock.monotonic());
      } else {
        step = await this.waitForSlot(call, signal, call.startedAt, run.lane?.key ?? this.name);
      }
    }
    return step;
  }

  /**
   * The attempt the machine just admitted (`STEP_ATTEMPT`), about to run: its context, its
   * deadline scope, and the counts and event of its start.
   */
  private attemptContext<T>(
    call: CallMachine,
    signal: AbortSignal | undefined,
    inherited: DeadlineScope | undefined,
    options: CallOptions<T> | undefined,
  ): AttemptContext {
    // The attempt's own deadline (call deadline or attempt timeout, whichever comes first) is
    // what the operation, nested kindly calls and outbound deadline headers see.
    const context = new AttemptContext(this, call, signal);
    if ((call.deadline !== Number.POSITIVE_INFINITY || inherited !== undefined) && mayCallKindly(options)) {
      context.scope = new AttemptScope(call.attemptDeadline, context, inherited?.onGiveUp);
    }
    const stats = this.stats_;
    const attempt = call.attempt;
    stats.attempts++;
    if (attempt > 1) stats.retries++;
    this.inFlight++;
    const emitting = this.events;
    if (emitting.active) emitting.emit({ type: 'attempt-start', downstream: this.name, atMs: call.attemptStart, attempt });
    return context;
  }

  /** The attempt (or a hedge of it) answered `value`: the call's result. */
  private afterSuccess<T>(call: CallMachine, lane: Lane | undefined, value: T): T {
    this.inFlight--;
    const pipeline = lane === undefined ? this.pipeline : lane.pipeline;
    call.succeeded(pipeline.successNeedsClock ? this.clock.monotonic() : call.attemptStart);
    this.succeeded(call, call.startedAt);
    return value;
  }

  /**
   * The attempt failed with `error`: `STEP_SLEEP` when the call retries (after `call.waitMs`),
   * else the call's end (the give-up or fallback; an abort throws the caller's reason).
   */
  private afterFailure<T>(
    call: CallRun<T>,
    context: AttemptContext,
    error: unknown,
    signal: AbortSignal | undefined,
    options: CallOptions<T> | undefined,
  ): typeof STEP_SLEEP | Promise<T> {
    this.inFlight--;
    const now = this.clock.monotonic();
    const { startedAt, attempt } = call;
    // The attempt ended while the operation runs on: what holds a slot for it (the
    // bulkhead) keeps it until the operation settles.
    if (context.running) call.operationSettles = (release) => context.whenSettled(release);
    const deadlineAbort = signal?.aborted === true && this.abortedAtDeadline(signal, call, now);
    if (signal?.aborted && !deadlineAbort) {
      call.abandon(now);
      return this.aborted(signal, call, startedAt);
    }
    if (deadlineAbort || (call.deadlineBound && error === context.expiredWith)) {
      // Our own deadline cut the attempt short: the caller's limit, not the callee's
      // failure, so the breaker does not count it and the reason is `deadline`.
      call.cutByDeadline(now, deadlineAbort ? (signal as AbortSignal).reason : error);
      callHook(options?.onAttemptError, error, { attempt, willRetry: false });
      return this.giveUp(call, startedAt, options);
    }
    const classification = this.classifyFor(error, options?.classify);
    if (classification.timeout) this.stats_.timeouts++;
    const next = call.failed(now, error, classification);
    this.attemptFailed(call, now, error, classification);
    callHook(options?.onAttemptError, error, { attempt, willRetry: next === STEP_SLEEP });
    if (next === STEP_GIVE_UP) return this.giveUp(call, startedAt, options);
    return STEP_SLEEP;
  }

  /**
   * `STEP_QUEUE`: waits in a stage's line (the bulkhead's, within the deadline) or for a
   * booking under way (a fleet store's pacing slot).
   */
  private async waitForSlot(
    call: CallMachine,
    signal: AbortSignal | undefined,
    startedAt: number,
    laneKey: string,
  ): Promise<Step> {
    const queue = call.queue as Queue;
    let value: unknown;
    try {
      value = 'acquire' in queue ? await queue.acquire(signal, call.queueWaitMs) : await queue;
    } catch (error) {
      if (signal?.aborted) return this.abortedWaiting(signal, call);
      const now = this.clock.monotonic();
      if (isConcurrencyLimitError(error)) {
        // The adaptive limit's line (`concurrency.maxQueue`): full, or the wait ran out.
        this.stats_.concurrencyRejections++;
        if (this.events.active) {
          this.events.emit({
            type: 'concurrency-limited',
            downstream: this.name,
            atMs: now,
            key: laneKey,
            limit: error.limit,
            partition: call.partition,
          });
        }
        return call.slotRefused(now, error);
      }
      this.stats_.bulkheadRejections++;
      const why = (error as { why?: 'queue-full' | 'queue-timeout' }).why ?? 'queue-full';
      if (this.events.active) this.events.emit({ type: 'bulkhead-rejected', downstream: this.name, atMs: now, why });
      return call.slotRefused(now, error);
    }
    if (signal?.aborted) {
      call.abandonGranted(this.clock.monotonic(), value);
      return this.aborted(signal, call, startedAt);
    }
    return call.slotGranted(this.clock.monotonic(), value);
  }

  private succeeded(call: CallMachine, startedAt: number): void {
    const stats = this.stats_;
    stats.successes++;
    if (call.attempt > 1) {
      stats.retrySuccesses++;
      stats.retriedRequests++;
      stats.retryAddedLatencyMs += call.attemptStart - startedAt;
    }
    if (this.events.active) {
      const now = this.clock.monotonic();
      this.events.emit({
        type: 'attempt-end',
        downstream: this.name,
        atMs: now,
        attempt: call.attempt,
        outcome: 'ok',
        durationMs: now - call.attemptStart,
      });
    }
  }

  /** Events for a failed attempt and the decision that followed it. */
  private attemptFailed(call: CallMachine, now: number, error: unknown, classification: Classification): void {
    const emitting = this.events;
    if (!emitting.active) return;
    const attempt = call.attempt;
    emitting.emit({
      type: 'attempt-end',
      downstream: this.name,
      atMs: now,
      attempt,
      outcome: classification.outcome,
      durationMs: now - call.attemptStart,
      classification,
      error,
    });
    const decision = call.decision;
    if (decision === undefined) return;
    if (classification.hintMs !== undefined) {
      emitting.emit({
        type: 'hint',
        downstream: this.name,
        atMs: now,
        honoured: decision.retry && decision.hintMs !== undefined,
        hintMs: classification.hintMs,
        source: classification.hintSource ?? 'unknown',
      });
    }
    if (decision.retry) {
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
  }

  /**
   * The first attempt and its hedges (see `runHedged`): each hedge is admitted by the stages
   * (`CallMachine.startHedge`: a bulkhead slot and a slot of the adaptive limit without
   * waiting, then the hedging policy and the retry budget), times out on its own and reports
   * its own end (`hedgeEnded`); the breaker and the pacer hear only the group's outcome.
   */
  private hedged<T>(
    run: CallRun<T>,
    first: Promise<T>,
    context: AttemptContext,
    delayMs: number,
  ): Promise<{ value: T; winner: number }> {
    return runHedged(
      { promise: first, abort: (reason) => context.abort(reason) },
      {
        clock: this.clock,
        delayMs,
        maxHedges: run.lane?.latency?.hedging?.maxHedges ?? 0,
        discard: run.options?.onDiscard,
        startHedge: (n) => this.startHedge(run, n, delayMs),
      },
    );
  }

  /** The hedged group's value; a hedge's answer leaves the attempt's own unused. */
  private hedgeWon<T>(call: CallMachine, first: AttemptContext, won: { value: T; winner: number }): T {
    if (won.winner > 0) {
      this.stats_.hedgeWins++;
      call.answerUnused = true;
      // The first attempt lost, and its operation may run on (aborted, but not listening):
      // what holds a slot for it (the bulkhead) keeps it until that operation settles.
      if (first.running) call.operationSettles = (release) => first.whenSettled(release);
    }
    return won.value;
  }

  /** Hedge `n` of the running attempt, if the stages admit it now: started, with its end reported. */
  private startHedge<T>(run: CallRun<T>, n: number, delayMs: number): HedgeMember<T> | undefined {
    if (run.signal?.aborted) return undefined;
    const hedge = run.startHedge(this.clock.monotonic(), n);
    if (hedge === undefined) return undefined;
    const context = this.hedgeContext(run, hedge, delayMs);
    const promise = runAttempt(run.operation, context).then(
      (value) => {
        this.hedgeEnded(run, hedge, context, RESULT_OK, undefined);
        return value;
      },
      (error: unknown) => {
        const lost = run.signal?.aborted === true || error instanceof HedgeLostError;
        this.hedgeEnded(run, hedge, context, lost ? RESULT_NEUTRAL : RESULT_FAILED, error);
        throw error;
      },
    );
    return { promise, abort: (reason) => context.abort(reason) };
  }

  /** A hedge's context (its deadline scope like an attempt's), and the counts and event of its start. */
  private hedgeContext<T>(run: CallRun<T>, hedge: HedgeAttempt, delayMs: number): AttemptContext {
    const context = new AttemptContext(this, hedge, run.signal);
    if ((hedge.deadline !== Number.POSITIVE_INFINITY || run.inherited !== undefined) && mayCallKindly(run.options)) {
      context.scope = new AttemptScope(hedge.attemptDeadline, context, run.inherited?.onGiveUp);
    }
    this.stats_.attempts++;
    this.stats_.hedges++;
    this.inFlight++;
    if (this.events.active) {
      this.events.emit({
        type: 'hedge',
        downstream: this.name,
        atMs: hedge.attemptStart,
        attempt: hedge.attempt,
        hedge: hedge.hedge,
        delayMs,
      });
    }
    return context;
  }

  /** A hedge ended: the stages that admitted it are told (a bulkhead slot waits for its operation to settle). */
  private hedgeEnded(
    call: CallMachine,
    hedge: HedgeAttempt,
    context: AttemptContext,
    result: AttemptResult,
    error: unknown,
  ): void {
    this.inFlight--;
    if (context.running) hedge.operationSettles = (release) => context.whenSettled(release);
    const classification = result === RESULT_FAILED ? this.classifyFor(error, undefined) : undefined;
    call.hedgeEnded(hedge, this.clock.monotonic(), result, classification);
  }

  /**
   * Whether the call's signal aborted because the call's own deadline came: a deadline as the
   * reason, at the call's deadline. A request scope's signal and the call's own timer are set
   * for the same instant, and either may fire first; the call must end the same way whichever
   * does — a give-up with reason `deadline` that the scope is told of (its middleware answers
   * 503, not 500), and the fallback's answer when there is one. Native timers run on a clock
   * truncated to the millisecond, so the signal's may fire up to 1 ms before the reading.
   */
  private abortedAtDeadline(signal: AbortSignal, call: CallMachine, now: number): boolean {
    return isDeadlineExceededError(signal.reason) && now >= call.deadline - TIMER_EARLY_MS;
  }

  /**
   * The call's signal aborted while it waited before an attempt (a hook, a pacing wait, a line):
   * for its own deadline (`abortedAtDeadline`), the wait ends as one the deadline cut
   * (`STEP_GIVE_UP`, reason `deadline`); for anything else, the call ends with the abort's reason.
   */
  private abortedWaiting(signal: AbortSignal, call: CallMachine): Step {
    const now = this.clock.monotonic();
    call.abandon(now);
    if (this.abortedAtDeadline(signal, call, now)) return call.waitCutByDeadline(now);
    return this.aborted(signal, call, call.startedAt);
  }

  private aborted(signal: AbortSignal, call: CallMachine, startedAt: number): never {
    if (this.events.active) {
      const now = this.clock.monotonic();
      this.events.emit({
        type: 'give-up',
        downstream: this.name,
        atMs: now,
        reason: 'aborted',
        attempts: call.attemptsMade,
        elapsedMs: now - startedAt,
        outcome: call.abandonedOutcome,
      });
    }
    this.stats_.failures++;
    throw signal.reason;
  }

  private async giveUp<T>(call: CallRun<T>, startedAt: number, options: CallOptions<T> | undefined): Promise<T> {
    const { reason, attemptsMade: attempts, outcome, cause, giveUpRetryAfterMs: retryAfterMs } = call;
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
    // The scope the call was made in, not the one current now: a give-up may run on a timer
    // shared with other requests, in whichever one's context armed it.
    call.inherited?.onGiveUp?.(reason);
    const fallback = (options?.fallback ?? this.fallback) as Fallback<T> | undefined;
    if (fallback === undefined) throw error;
    this.stats_.fallbacks++;
    if (this.events.active) this.events.emit({ type: 'fallback', downstream: this.name, atMs: now, reason });
    return await fallback({ reason, error, attempts });
  }
}

/** A downstream's options, checked (every problem at once) and resolved to what it is built from. */
interface ResolvedOptions {
  retry: RetryPolicy;
  clock: Clock;
  random: Random;
  maxKeys: number;
  budgets: KeyedRetryBudgets | undefined;
  breaker: CircuitBreakerOptions | undefined;
  bulkhead: BulkheadOptions | undefined;
  pacing: PacerOptions | undefined;
  concurrency: AdaptiveConcurrencyOptions | undefined;
  hedging: HedgingOptions | undefined;
  derivedTimeout: DerivedTimeoutOptions | undefined;
}

/**
 * Checks a downstream's options and resolves them. Each policy validates its own options, so
 * one is built here for every enabled policy: the `InvalidOptionsError` lists every problem.
 */
function resolveOptions(name: string, options: DownstreamOptions, optional: OptionalPolicies): ResolvedOptions {
  const v = new OptionsValidator(`downstream '${name}'`);
  v.check(typeof name === 'string' && name.length > 0, `Expected a non-empty downstream name, got ${JSON.stringify(name)}`);
  v.knownKeys(options, KEYS);
  const derivedTimeout =
    typeof options.attemptTimeoutMs === 'object' && options.attemptTimeoutMs !== null ? options.attemptTimeoutMs : undefined;
  if (derivedTimeout !== undefined) {
    const check = (kit: LatencyKit) => kit.checkDerivedTimeout(derivedTimeout);
    checkOptional(v, optional, 'latency', 'attemptTimeoutMs', check, 'attemptTimeoutMs: { … }');
  } else if (options.attemptTimeoutMs !== false) {
    v.duration('attemptTimeoutMs', options.attemptTimeoutMs, { min: 1, allowInfinity: true });
  }
  v.duration('totalTimeoutMs', options.totalTimeoutMs, { min: 1 })
    .func('classify', options.classify)
    .func('fallback', options.fallback);
  v.check(
    options.store === undefined || isFleetStore(options.store),
    `Expected \`store\` to be a fleet store (e.g. redisStore() from kindly-calls/redis), got ${describeStore(options.store)}`,
  );
  const clock = options.clock ?? systemClock;
  const random = options.random ?? systemRandom;
  const { retry, budgets, maxKeys, breaker, pacing } = corePolicies(v, options, random, optional);
  const bulkhead = enabledOptions(options.bulkhead);
  const concurrency = enabledOptions(options.concurrency);
  const hedging = enabledOptions(options.hedging);
  if (bulkhead !== undefined) v.nested('bulkhead', () => new Bulkhead(bulkhead, clock));
  if (concurrency !== undefined) {
    checkOptional(v, optional, 'latency', 'concurrency', (kit) => kit.checkConcurrency(concurrency, random));
  }
  if (hedging !== undefined) checkOptional(v, optional, 'latency', 'hedging', (kit) => kit.checkHedging(hedging));
  v.done();
  return {
    retry: retry as RetryPolicy,
    clock,
    random,
    maxKeys,
    budgets,
    breaker,
    bulkhead,
    pacing,
    concurrency,
    hedging,
    derivedTimeout,
  };
}

/** Cheap checks of per-call options (a NaN timeout must not silently mean "none"). */
/** Every problem with a call's options (unknown keys included), or `undefined` when there is none. */
function checkCallOptions(options: CallOptions<unknown>): readonly string[] | undefined {
  if (plainlyValid(options)) return undefined;
  const v = new OptionsValidator('call');
  v.knownKeys(options, CALL_KEYS);
  if (typeof options !== 'object' || options === null) return v.problems;
  const { timeoutMs, deadline } = options;
  v.duration('timeoutMs', timeoutMs, { allowInfinity: true })
    .duration('attemptTimeoutMs', options.attemptTimeoutMs, { min: 1, allowInfinity: true })
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
    .func('beforeAttempt', options.beforeAttempt)
    .check(isSignalOrAbsent(options.signal), `Expected \`signal\` to be an AbortSignal, got ${describeValue(options.signal)}`);
  return v.problems.length > 0 ? v.problems : undefined;
}

/**
 * An `AbortSignal` (or a look-alike that listens as one does). Not `instanceof`: signals from
 * another realm (a test runner's, an iframe's) are signals too.
 */
function isSignalOrAbsent(signal: unknown): boolean {
  if (signal === undefined) return true;
  if (typeof signal !== 'object' || signal === null) return false;
  const s = signal as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown };
  return (
    typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function' && typeof s.removeEventListener === 'function'
  );
}

function describeValue(value: unknown): string {
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? 'an array' : 'an object that is not one';
  return typeof value === 'string' ? JSON.stringify(value) : String(value);
}

const CALL_KEY_SET: ReadonlySet<string> = new Set(CALL_KEYS);

/**
 * The common case of `checkCallOptions`, without allocating: every key known and every value
 * of its type (the same rules, read the same way). `false` only sends the options to the
 * full check, which finds and words the problems.
 */
function plainlyValid(o: CallOptions<unknown>): boolean {
  if (typeof o !== 'object' || o === null) return false;
  for (const key in o) if (!CALL_KEY_SET.has(key)) return false;
  const { timeoutMs, deadline } = o;
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && timeoutMs >= 0)) return false;
  const attemptTimeoutMs = o.attemptTimeoutMs;
  if (attemptTimeoutMs !== undefined && !(typeof attemptTimeoutMs === 'number' && attemptTimeoutMs >= 1)) return false;
  if (deadline !== undefined && !(typeof deadline === 'number' && !Number.isNaN(deadline))) return false;
  if (o.idempotent !== undefined && typeof o.idempotent !== 'boolean') return false;
  if (o.key !== undefined && typeof o.key !== 'string') return false;
  if (o.budgetKey !== undefined && typeof o.budgetKey !== 'string') return false;
  if (o.signal !== undefined && !isSignalOrAbsent(o.signal)) return false;
  return (
    isFunctionOrAbsent(o.verify) &&
    isFunctionOrAbsent(o.fallback) &&
    isFunctionOrAbsent(o.onAttemptError) &&
    isFunctionOrAbsent(o.classify) &&
    isFunctionOrAbsent(o.beforeAttempt)
  );
}

/**
 * Whether a call's operation may make nested kindly calls, which would look for the attempt's
 * deadline scope. An attempt enters one only where deadlines are in play — the call has one,
 * or runs inside another scope (an inbound request, an outer call) — and the operation may
 * use it: not kindly's own HTTP attempt sending through the platform's `fetch`
 * (`RUNS_NO_USER_CODE`). Entering an AsyncLocalStorage scope switches on Node 20's promise
 * hooks for the whole process (every promise anywhere then pays a hook, ~10–20 µs per loopback
 * request: docs/benchmarks.md). Elsewhere nested calls see no attempt deadline; pass
 * `context.signal` to them explicitly.
 */
function mayCallKindly(options: object | undefined): boolean {
  return options === undefined || (options as InternalCallOptions)[RUNS_NO_USER_CODE] !== true;
}

function isFunctionOrAbsent(value: unknown): boolean {
  return value === undefined || typeof value === 'function';
}

function describeCause(classification: Classification, error: unknown): string {
  if (classification.status !== undefined) return `status ${classification.status}`;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  if (error instanceof Error) return error.name;
  return 'error';
}

/**
 * One call as its driver sees it: the call's state machine, plus what `drive` and the
 * attempt's settlement read (one object per call, not two).
 */
class CallRun<T> extends CallMachine {
  declare readonly operation: Operation<T>;
  declare readonly options: CallOptions<T> | undefined;
  declare readonly signal: AbortSignal | undefined;
  declare readonly inherited: DeadlineScope | undefined;
  declare readonly lane: Lane | undefined;

  constructor(
    plan: CallPlan,
    pipeline: Pipeline,
    startedAt: number,
    deadline: number,
    operation: Operation<T>,
    options: CallOptions<T> | undefined,
    signal: AbortSignal | undefined,
    inherited: DeadlineScope | undefined,
    lane: Lane | undefined,
  ) {
    super(plan, pipeline, startedAt, deadline, options);
    this.operation = operation;
    this.options = options;
    this.signal = signal;
    this.inherited = inherited;
    this.lane = lane;
  }
}

function wrapAll<T>(
  wrappers: readonly CallWrapper[],
  index: number,
  operation: Operation<T>,
  run: (operation: Operation<T>) => Promise<T>,
  info: CallInfo,
): Promise<T> {
  const wrapper = wrappers[index] as CallWrapper;
  if (index === wrappers.length - 1) return wrapper.wrap(operation, run, info);
  return wrapper.wrap(operation, (wrapped) => wrapAll(wrappers, index + 1, wrapped, run, info), info);
}

/** Creates a downstream: the policies and shared state for one callee. */
export function downstream(name: string, options?: DownstreamOptions): Downstream {
  return new Downstream(name, options, ALL_DOWNSTREAM_POLICIES);
}
