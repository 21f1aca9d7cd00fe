import type { Classification } from '../classify/outcome.js';
import type { GiveUpReason } from '../errors/errors.js';
import { OptionsValidator } from '../options/validate.js';
import {
  CallMachine,
  type CallPlan,
  STEP_ATTEMPT,
  STEP_GIVE_UP,
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
import { CircuitBreaker } from '../policies/circuit-breaker.js';
import { Pacer } from '../policies/pacer.js';
import type { KeyedRetryBudgets } from '../policies/retry-budget.js';
import type { RetryPolicy } from '../policies/retry-decision.js';
import type { Random } from '../random/random.js';
import type { DownstreamOptions } from '../runtime/downstream.js';
import { TIMED_OUT } from './dependency.js';
import type { Simulation } from './engine.js';

/**
 * The options of a simulated downstream: exactly `downstream()`'s, for the policies the
 * simulator models (the bulkhead's line, the adaptive concurrency limit, hedging, derived
 * timeouts and fleet stores have their own scenarios).
 */
export type SimDownstreamOptions = Pick<
  DownstreamOptions,
  'retry' | 'totalTimeoutMs' | 'idempotent' | 'budget' | 'breaker' | 'pacing' | 'maxKeys'
> & {
  /** Per-attempt timeout in ms, or `false` for none. @default {@link DOWNSTREAM_DEFAULTS}.attemptTimeoutMs */
  attemptTimeoutMs?: number | false;
};

const KEYS = ['retry', 'attemptTimeoutMs', 'totalTimeoutMs', 'idempotent', 'budget', 'breaker', 'pacing', 'maxKeys'];

/** Where a simulated downstream's attempts go: a model of the callee. */
export interface SimCallee {
  /**
   * Attempt `attempt` of call `call` leaves now. The callee answers later with
   * `SimDownstream.answer`, or never (the attempt timeout, if any, ends the attempt).
   */
  send(call: number, attempt: number, now: number): void;
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
 * the deadline is returned, and the deadline arithmetic is the runtime's. This class only does
 * what `Downstream.run` does with real time: wait, send, time the attempt out, report back.
 *
 * Calls are small integer ids; `start` one, and report each attempt's answer with `answer`.
 * One lane (the downstream's name) and one budget key, as a `downstream()` whose calls pass
 * no `key`/`budgetKey`.
 */
export class SimDownstream implements CallPlan {
  readonly name: string;
  readonly retry: RetryPolicy;
  readonly random: Random;
  readonly attemptTimeoutMs: number;
  readonly idempotent: boolean;
  readonly totalTimeoutMs: number | undefined;
  readonly breaker: CircuitBreaker | undefined;
  readonly pacer: Pacer | undefined;
  readonly budgets: KeyedRetryBudgets | undefined;
  /** Retries the budget refused. */
  budgetRejections = 0;
  /** Calls that gave up, by reason. */
  readonly gaveUp: Partial<Record<GiveUpReason, number>> = {};
  succeeded = 0;
  failed = 0;

  private readonly pipeline: Pipeline;
  private readonly calls: (CallMachine | undefined)[] = [];
  private readonly beginKind: number;
  private readonly resumeKind: number;
  private readonly timeoutKind: number;

  constructor(
    private readonly sim: Simulation,
    name: string,
    options: SimDownstreamOptions,
    private readonly callee: SimCallee,
    private readonly onEnd?: (end: SimCallEnd) => void,
  ) {
    const v = new OptionsValidator(`simulated downstream '${name}'`);
    v.knownKeys(options, KEYS);
    v.duration('attemptTimeoutMs', options.attemptTimeoutMs === false ? undefined : options.attemptTimeoutMs, {
      min: 1,
      allowInfinity: true,
    });
    v.duration('totalTimeoutMs', options.totalTimeoutMs, { min: 1 });
    const { retry, budgets, breaker: breakerOptions, pacing: pacingOptions } = corePolicies(v, options, sim.random);
    v.done();
    const breaker = breakerOptions === undefined ? undefined : new CircuitBreaker(breakerOptions, sim.random);
    const pacer = pacingOptions === undefined ? undefined : new Pacer(pacingOptions);
    this.name = name;
    this.retry = retry as RetryPolicy;
    this.random = sim.random;
    this.attemptTimeoutMs = attemptTimeoutOf(options.attemptTimeoutMs);
    this.idempotent = options.idempotent ?? DOWNSTREAM_DEFAULTS.idempotent;
    this.totalTimeoutMs = options.totalTimeoutMs;
    this.budgets = budgets;
    this.breaker = breaker;
    this.pacer = pacer;
    this.pipeline = lanePipeline({
      budget: budgetStageOf(budgets, options.budget, () => {
        this.budgetRejections++;
      }),
      breaker,
      pacer,
      pacing: { paceFirstAttempts: pacingOptions?.paceFirstAttempts ?? false },
    });
    this.beginKind = sim.on((call, now) => this.begin(call, now));
    this.resumeKind = sim.on((call, now) => {
      const machine = this.calls[call];
      if (machine !== undefined) this.drive(call, machine, machine.resume(now), now, true);
    });
    this.timeoutKind = sim.on((call, now) => this.timedOut(call, now));
  }

  /** Call `call` starts now (no per-call options: the downstream's deadline and choices). */
  start(call: number, now: number): void {
    const machine = new CallMachine(this, this.pipeline, now, callDeadline(now, undefined, undefined, this.totalTimeoutMs));
    this.calls[call] = machine;
    machine.start(now);
    this.drive(call, machine, machine.begin(now), now, true);
  }

  /**
   * The callee's answer to call `call`'s attempt in flight arrives now: `undefined` for a
   * success, else how the caller classifies it. An answer after the attempt ended (it timed
   * out) is dropped, as the runtime drops a late response.
   */
  answer(call: number, now: number, failure: Classification | undefined): void {
    const machine = this.calls[call];
    if (machine === undefined || !machine.inAttempt) return;
    if (failure === undefined) {
      machine.succeeded(now);
      this.end(call, machine, now, true, false);
      return;
    }
    this.drive(call, machine, machine.failed(now, failure, failure), now, false);
  }

  /** Attempts call `call` has sent so far. */
  attemptsOf(call: number): number {
    return this.calls[call]?.attemptsMade ?? 0;
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
    for (;;) {
      if (step === STEP_ATTEMPT) {
        this.callee.send(call, machine.attempt, now);
        // Armed after the send: an answer due at the very instant of the timeout wins.
        if (machine.inAttempt && machine.attemptDeadline !== Number.POSITIVE_INFINITY) {
          this.sim.at(machine.attemptDeadline, this.timeoutKind, call);
        }
        return;
      }
      if (step === STEP_WAIT) {
        this.sim.after(machine.waitMs, this.resumeKind, call);
        return;
      }
      if (step === STEP_SLEEP) {
        // Like the runtime: a zero delay runs on at once, unless the pacer asked for a yield.
        if (machine.waitMs > 0 || machine.yieldBeforeRetry) {
          this.sim.after(machine.waitMs, this.beginKind, call);
          return;
        }
        step = machine.begin(now);
        admission = true;
        continue;
      }
      if (step === STEP_GIVE_UP) {
        this.end(call, machine, now, false, admission);
        return;
      }
      // STEP_QUEUE (a bulkhead's line) and STEP_VERIFY (a verify hook) are not modelled.
      throw new Error(`SimDownstream '${this.name}': step ${step} is not simulated`);
    }
  }

  /** The attempt's own timer fired: the attempt ends now unless it already did. */
  private timedOut(call: number, now: number): void {
    const machine = this.calls[call];
    // A timer of an earlier attempt may fire while a later one runs: only a due deadline counts.
    if (machine === undefined || !machine.inAttempt || machine.attemptDeadline > now) return;
    if (machine.deadlineBound) {
      this.drive(call, machine, machine.cutByDeadline(now, TIMED_OUT), now, false);
      return;
    }
    this.drive(call, machine, machine.failed(now, TIMED_OUT, TIMED_OUT), now, false);
  }

  private end(call: number, machine: CallMachine, now: number, ok: boolean, refused: boolean): void {
    this.calls[call] = undefined;
    if (ok) this.succeeded++;
    else {
      this.failed++;
      this.gaveUp[machine.reason] = (this.gaveUp[machine.reason] ?? 0) + 1;
    }
    this.onEnd?.({ call, ok, reason: ok ? undefined : machine.reason, attempts: machine.attemptsMade, refused, atMs: now });
  }
}
