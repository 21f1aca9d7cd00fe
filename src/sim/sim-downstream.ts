import type { Classification } from '../classify/outcome.js';
import type { GiveUpReason } from '../errors/errors.js';
import { enabledOptions, OptionsValidator } from '../options/validate.js';
import { ALL_OPTIONAL_POLICIES } from '../orchestration/all-optional-policies.js';
import {
  CallMachine,
  type CallPlan,
  STEP_ATTEMPT,
  STEP_GIVE_UP,
  STEP_QUEUE,
  STEP_SLEEP,
  STEP_WAIT,
  type Step,
} from '../orchestration/call-machine.js';
import { callDeadline } from '../orchestration/deadline.js';
import {
  attemptTimeoutOf,
  budgetStageOf,
  corePolicies,
  DOWNSTREAM_DEFAULTS,
  lanePipeline,
} from '../orchestration/downstream-plan.js';
import type { Pipeline } from '../orchestration/pipeline.js';
import type { VirtualLine } from '../orchestration/stage.js';
import type { BudgetLedger } from '../orchestration/stages/budget-stage.js';
import type { PaceBooker } from '../orchestration/stages/pacing-stage.js';
import { CircuitBreaker } from '../policies/circuit-breaker.js';
import type { DerivedTimeoutOptions } from '../policies/derived-timeout.js';
import { LatencyPolicies } from '../policies/latency-policies.js';
import { Pacer } from '../policies/pacer.js';
import type { KeyedRetryBudgets } from '../policies/retry-budget.js';
import type { RetryPolicy } from '../policies/retry-decision.js';
import type { Random } from '../random/random.js';
import type { DownstreamOptions } from '../runtime/downstream.js';
import { TIMED_OUT } from './dependency.js';
import type { Simulation } from './engine.js';
import { type HedgedDownstream, SimHedges } from './sim-hedges.js';
import { SimBulkhead, SimLimitLine } from './sim-lines.js';

/**
 * The options of a simulated downstream: exactly `downstream()`'s, for the policies the
 * simulator models (fleet stores have their own scenario).
 */
export type SimDownstreamOptions = Pick<
  DownstreamOptions,
  'retry' | 'totalTimeoutMs' | 'idempotent' | 'budget' | 'breaker' | 'pacing' | 'maxKeys' | 'bulkhead' | 'concurrency' | 'hedging'
> & {
  /**
   * Per-attempt timeout in ms, `false` for none, or derived from latency.
   * @default {@link DOWNSTREAM_DEFAULTS}.attemptTimeoutMs
   */
  attemptTimeoutMs?: number | false | DerivedTimeoutOptions;
};

const KEYS = [
  'retry',
  'attemptTimeoutMs',
  'totalTimeoutMs',
  'idempotent',
  'budget',
  'breaker',
  'pacing',
  'maxKeys',
  'bulkhead',
  'concurrency',
  'hedging',
];

/**
 * A simulated process's link to its fleet's shared state (`src/sim/fleet.ts`), standing in for
 * `FleetLink` and `FleetBudgets`: where paced attempts book their slots, and the retry budget.
 */
export interface SimFleetParts {
  /** The shared pacing queue, for this downstream's pacer. */
  booker?: (pacer: Pacer) => PaceBooker;
  /** The fleet retry budget (claims decided by the simulated store). */
  budgets?: BudgetLedger;
}

/** Where a simulated downstream's attempts go: a model of the callee. */
export interface SimCallee {
  /**
   * Attempt `attempt` of call `call` leaves now — the attempt itself (`hedge` 0) or its hedge
   * number `hedge`. The callee answers later with `SimDownstream.answer`, or never (the
   * attempt timeout, if any, ends the attempt).
   */
  send(call: number, attempt: number, now: number, hedge: number): void;
}

/** How a simulated call ended. */
export interface SimCallEnd {
  call: number;
  ok: boolean;
  /** With `ok` false: why the call gave up. */
  reason: GiveUpReason | undefined;
  /** Attempts that reached the callee. */
  attempts: number;
  /**
   * The call ended at admission: a stage refused the attempt it was about to make (an open
   * breaker failing fast, a pacer slot beyond the deadline), so nothing was sent for it.
   */
  refused: boolean;
  atMs: number;
}

/**
 * One downstream driven on virtual time: each call is a `CallMachine` (src/orchestration) over
 * the pipeline built from the options by the same code `downstream()` uses — so the budget
 * deposits at call start, a neutral breaker permit is given back, a pacer slot that would miss
 * the deadline is returned, a bulkhead or the adaptive limit queues or refuses, attempt timeouts
 * are derived from latency, hedges are admitted by the stages, and the deadline arithmetic is
 * the runtime's. This class only does what `Downstream.run` does with real time: wait, queue,
 * send, time the attempt out, report back.
 *
 * Calls are small integer ids; `start` one, and report each attempt's answer with `answer`.
 * One lane (the downstream's name) and one budget key, as a `downstream()` whose calls pass
 * no `key`/`budgetKey`. An operation here honours its abort signal: an attempt that lost a
 * hedge race ends when the winner answers, and its late answer is dropped.
 */
export class SimDownstream implements CallPlan, HedgedDownstream {
  readonly name: string;
  readonly retry: RetryPolicy;
  readonly random: Random;
  readonly attemptTimeoutMs: number;
  readonly idempotent: boolean;
  readonly totalTimeoutMs: number | undefined;
  readonly breaker: CircuitBreaker | undefined;
  readonly pacer: Pacer | undefined;
  readonly budgets: KeyedRetryBudgets | undefined;
  readonly bulkhead: SimBulkhead | undefined;
  /** The adaptive concurrency limit, derived attempt timeout and hedging policy (any of them). */
  readonly latency: LatencyPolicies | undefined;
  /** Retries the budget refused. */
  budgetRejections = 0;
  /** Calls that gave up, by reason. */
  readonly gaveUp: Partial<Record<GiveUpReason, number>> = {};
  succeeded = 0;
  failed = 0;

  private readonly pipeline: Pipeline;
  private readonly calls: (CallMachine | undefined)[] = [];
  private readonly hedges: SimHedges | undefined;
  private readonly beginKind: number;
  private readonly resumeKind: number;
  private readonly timeoutKind: number;

  constructor(
    private readonly sim: Simulation,
    name: string,
    options: SimDownstreamOptions,
    private readonly callee: SimCallee,
    private readonly onEnd?: (end: SimCallEnd) => void,
    private readonly fleet?: SimFleetParts,
  ) {
    const p = simPolicies(sim, name, options);
    this.name = name;
    this.retry = p.retry;
    this.random = sim.random;
    this.attemptTimeoutMs = attemptTimeoutOf(options.attemptTimeoutMs);
    this.idempotent = options.idempotent ?? DOWNSTREAM_DEFAULTS.idempotent;
    this.totalTimeoutMs = options.totalTimeoutMs;
    this.budgets = p.budgets;
    this.breaker = p.breaker;
    this.pacer = p.pacer;
    this.bulkhead = p.bulkhead;
    this.latency = p.latency;
    this.pipeline = this.lanePipeline(p, options);
    this.hedges = p.latency?.hedging === undefined ? undefined : new SimHedges(sim, this, p.latency.hedging.maxHedges);
    this.beginKind = sim.on((call, now) => this.begin(call, now));
    this.resumeKind = sim.on((call, now) => {
      const machine = this.calls[call];
      if (machine !== undefined) this.drive(call, machine, machine.resume(now), now, true);
    });
    this.timeoutKind = sim.on((call, now) => this.timedOut(call, now));
  }

  /** Call `call`'s machine while it runs. */
  machineOf(call: number): CallMachine | undefined {
    return this.calls[call];
  }

  /** Hedges sent. */
  get hedgesSent(): number {
    return this.hedges?.sent ?? 0;
  }

  /** Calls whose value was a hedge's answer. */
  get hedgeWins(): number {
    return this.hedges?.wins ?? 0;
  }

  /** Call `call` starts now (no per-call options: the downstream's deadline and choices). */
  start(call: number, now: number): void {
    const machine = new CallMachine(this, this.pipeline, now, callDeadline(now, undefined, undefined, this.totalTimeoutMs));
    this.calls[call] = machine;
    machine.start(now);
    this.drive(call, machine, machine.begin(now), now, true);
  }

  /**
   * The callee's answer to call `call`'s attempt in flight (`hedge` 0, or one of its hedges)
   * arrives now: `undefined` for a success, else how the caller classifies it. An answer after
   * the attempt ended (it timed out, lost a hedge race) is dropped, as the runtime drops a
   * late response; pass `attempt` (what `send` was given) when an earlier attempt's answer
   * may arrive while a retry runs.
   */
  answer(call: number, now: number, failure: Classification | undefined, hedge = 0, attempt?: number): void {
    const machine = this.calls[call];
    if (machine === undefined || !machine.inAttempt || (attempt !== undefined && attempt !== machine.attempt)) return;
    const hedges = this.hedges;
    if (hedges?.hedged(call)) {
      hedges.answer(call, machine, now, failure, hedge);
      return;
    }
    if (failure === undefined) this.won(call, machine, now);
    else this.lost(call, machine, now, failure, false);
  }

  /** Attempts call `call` has sent so far (its hedges not counted). */
  attemptsOf(call: number): number {
    return this.calls[call]?.attemptsMade ?? 0;
  }

  /** The timeout of call `call`'s running attempt (clamped to its deadline), ms. */
  timeoutOf(call: number): number | undefined {
    const machine = this.calls[call];
    return machine?.inAttempt ? machine.timeoutMs : undefined;
  }

  /** The call's attempt — or a hedge of it — answered first: its value is the call's. */
  won(call: number, machine: CallMachine, now: number): void {
    machine.succeeded(now);
    this.end(call, machine, now, true, false);
  }

  /**
   * The call's attempt failed (the last of its hedges to end, if hedged): `classification`, or
   * `deadlineCut` when the call's own deadline cut it.
   */
  lost(call: number, machine: CallMachine, now: number, classification: Classification, deadlineCut: boolean): void {
    const step = deadlineCut ? machine.cutByDeadline(now, TIMED_OUT) : machine.failed(now, classification, classification);
    this.drive(call, machine, step, now, false);
  }

  /** Sends an attempt (`hedge` 0) or a hedge of it, and arms its timer. */
  send(call: number, machine: CallMachine, now: number, hedge: number, deadline: number, timeoutKind: number, arg: number): void {
    this.callee.send(call, machine.attempt, now, hedge);
    // Armed after the send: an answer due at the very instant of the timeout wins.
    if (deadline !== Number.POSITIVE_INFINITY) this.sim.at(deadline, timeoutKind, arg);
  }

  private lanePipeline(p: SimPolicies, options: SimDownstreamOptions): Pipeline {
    const latency = p.latency;
    const line = latency?.limit === undefined ? undefined : new SimLimitLine(this.sim, latency);
    const fleet = this.fleet;
    const budgets = p.budgets === undefined ? undefined : (fleet?.budgets ?? p.budgets);
    return lanePipeline({
      optional: ALL_OPTIONAL_POLICIES,
      budget: budgetStageOf(budgets, options.budget, () => {
        this.budgetRejections++;
      }),
      breaker: p.breaker,
      pacer: p.pacer,
      pacing: {
        paceFirstAttempts: p.paceFirstAttempts,
        maxHintMs: p.retry.maxRetryAfterMs,
        booker: p.pacer === undefined ? undefined : fleet?.booker?.(p.pacer),
      },
      bulkhead: p.bulkhead,
      latency,
      limit: line === undefined ? undefined : { line: (partition) => line.of(partition) },
      hedgeBudget: p.budgets,
    });
  }

  private begin(call: number, now: number): void {
    const machine = this.calls[call];
    if (machine !== undefined) this.drive(call, machine, machine.begin(now), now, true);
  }

  /**
   * What `Downstream.run` does with each step, on virtual time. `admitting`: the step answers
   * an attempt's admission (not an attempt's end).
   */
  private drive(call: number, machine: CallMachine, first: Step, now: number, admitting: boolean): void {
    let step = first;
    let admission = admitting;
    // Like the runtime: a zero delay before a retry runs on at once, unless the pacer asked for a yield.
    if (step === STEP_SLEEP && !(machine.waitMs > 0 || machine.yieldBeforeRetry)) {
      step = machine.begin(now);
      admission = true;
    }
    if (step === STEP_ATTEMPT) this.attempt(call, machine, now);
    else if (step === STEP_SLEEP) this.sim.after(machine.waitMs, this.beginKind, call);
    else if (step === STEP_WAIT) this.sim.after(machine.waitMs, this.resumeKind, call);
    else if (step === STEP_QUEUE) this.queue(call, machine, now);
    else if (step === STEP_GIVE_UP) this.end(call, machine, now, false, admission);
    // STEP_VERIFY (a verify hook) is not modelled: simulated calls pass no per-call options.
    else throw new Error(`SimDownstream '${this.name}': step ${step} is not simulated`);
  }

  /** `STEP_ATTEMPT`: the attempt leaves, timed; a hedged call's first hedge is scheduled. */
  private attempt(call: number, machine: CallMachine, now: number): void {
    this.send(call, machine, now, 0, machine.attemptDeadline, this.timeoutKind, call);
    const delayMs = machine.inAttempt ? machine.hedgeDelayMs() : undefined;
    if (delayMs !== undefined) this.hedges?.begin(call, machine, delayMs);
  }

  /** `STEP_QUEUE`: the call waits in a stage's line (the bulkhead's, the adaptive limit's) on virtual time. */
  private queue(call: number, machine: CallMachine, now: number): void {
    const line = machine.queue as VirtualLine;
    const refusal = line.join(
      {
        granted: (at, value) => this.drive(call, machine, machine.slotGranted(at, value), at, true),
        refused: (at, error) => this.drive(call, machine, machine.slotRefused(at, error), at, true),
      },
      now,
      machine.queueWaitMs,
    );
    if (refusal !== undefined) this.drive(call, machine, machine.slotRefused(now, refusal), now, true);
  }

  /** The attempt's own timer fired: the attempt ends now unless it already did. */
  private timedOut(call: number, now: number): void {
    const machine = this.calls[call];
    // A timer of an earlier attempt may fire while a later one runs: only a due deadline counts.
    if (machine === undefined || !machine.inAttempt || machine.attemptDeadline > now) return;
    const hedges = this.hedges;
    if (hedges?.hedged(call)) hedges.attemptTimedOut(call, machine, now);
    else this.lost(call, machine, now, TIMED_OUT, machine.deadlineBound);
  }

  private end(call: number, machine: CallMachine, now: number, ok: boolean, refused: boolean): void {
    this.calls[call] = undefined;
    this.hedges?.forget(call);
    if (ok) this.succeeded++;
    else {
      this.failed++;
      this.gaveUp[machine.reason] = (this.gaveUp[machine.reason] ?? 0) + 1;
    }
    this.onEnd?.({ call, ok, reason: ok ? undefined : machine.reason, attempts: machine.attemptsMade, refused, atMs: now });
  }
}

/** The policies of a simulated downstream, built and checked as `downstream()` builds them. */
interface SimPolicies {
  retry: RetryPolicy;
  budgets: KeyedRetryBudgets | undefined;
  breaker: CircuitBreaker | undefined;
  pacer: Pacer | undefined;
  paceFirstAttempts: boolean;
  bulkhead: SimBulkhead | undefined;
  latency: LatencyPolicies | undefined;
}

/** Checks the options (every problem at once) and builds the policies. */
function simPolicies(sim: Simulation, name: string, options: SimDownstreamOptions): SimPolicies {
  const v = new OptionsValidator(`simulated downstream '${name}'`);
  v.knownKeys(options, KEYS);
  const timeout = options.attemptTimeoutMs;
  const derived = typeof timeout === 'object' && timeout !== null ? timeout : undefined;
  if (derived === undefined) {
    v.duration('attemptTimeoutMs', timeout === false ? undefined : timeout, { min: 1, allowInfinity: true });
  }
  v.duration('totalTimeoutMs', options.totalTimeoutMs, { min: 1 });
  const core = corePolicies(v, options, sim.random, ALL_OPTIONAL_POLICIES);
  const bulkheadOptions = enabledOptions(options.bulkhead);
  const bulkhead = bulkheadOptions === undefined ? undefined : v.nested('bulkhead', () => new SimBulkhead(sim, bulkheadOptions));
  const latencyOptions = {
    concurrency: enabledOptions(options.concurrency),
    attemptTimeoutMs: derived,
    hedging: enabledOptions(options.hedging),
  };
  const anyLatency = latencyOptions.concurrency ?? latencyOptions.attemptTimeoutMs ?? latencyOptions.hedging;
  const latency =
    anyLatency === undefined ? undefined : v.nested('latency', () => new LatencyPolicies(latencyOptions, sim.random));
  v.done();
  return {
    retry: core.retry as RetryPolicy,
    budgets: core.budgets,
    breaker: core.breaker === undefined ? undefined : new CircuitBreaker(core.breaker, sim.random),
    pacer: core.pacing === undefined ? undefined : new Pacer(core.pacing),
    paceFirstAttempts: core.pacing?.paceFirstAttempts ?? false,
    bulkhead,
    latency,
  };
}
