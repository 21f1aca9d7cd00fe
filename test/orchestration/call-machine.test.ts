import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { isCircuitOpenError, isDeadlineExceededError } from '../../src/errors/errors.js';
import {
  CallMachine,
  STEP_ATTEMPT,
  STEP_GIVE_UP,
  STEP_QUEUE,
  STEP_SLEEP,
  STEP_VERIFY,
  STEP_WAIT,
} from '../../src/orchestration/call-machine.js';
import { Pipeline } from '../../src/orchestration/pipeline.js';
import { ADMIT, type Admission, QUEUE, type Stage, type StageCall, WAIT } from '../../src/orchestration/stage.js';
import { BreakerStage } from '../../src/orchestration/stages/breaker-stage.js';
import { BudgetStage } from '../../src/orchestration/stages/budget-stage.js';
import { CircuitBreaker } from '../../src/policies/circuit-breaker.js';
import { KeyedRetryBudgets } from '../../src/policies/retry-budget.js';
import { RetryPolicy } from '../../src/policies/retry-decision.js';
import { SeededRandom } from '../../src/random/random.js';

/** A line that is never waited on here (the driver would). */
const LINE = Promise.resolve(0);

const FAILED: Classification = { outcome: 'failed', retryable: true, status: 503 };
const UNKNOWN: Classification = { outcome: 'unknown', retryable: true, timeout: true };
const NOT_RETRYABLE: Classification = { outcome: 'failed', retryable: false, status: 400 };

function plan(retry = new RetryPolicy({ backoff: { baseMs: 100, jitter: 'none' } }), attemptTimeoutMs = 1_000) {
  return { name: 'api', retry, random: new SeededRandom(1), attemptTimeoutMs, idempotent: true };
}

function machine(
  stages: Stage[] = [],
  setup: { deadline?: number; idempotent?: boolean; verifiable?: boolean } = {},
  p = plan(),
) {
  const m = new CallMachine(p, new Pipeline(stages), 0, setup.deadline ?? Number.POSITIVE_INFINITY, {
    idempotent: setup.idempotent,
    verify: setup.verifiable ? () => false : undefined,
  });
  m.start(0);
  return m;
}

/** A stage that records what it is told, and answers `enter` with a scripted admission. */
function recorder(name: string, log: string[], answer: (call: StageCall) => Admission = () => ADMIT): Stage {
  return {
    name,
    observesSuccess: true,
    enter(call, now) {
      log.push(`${name}.enter@${now}`);
      call.token = `${name}-token-${call.attempt}`;
      return answer(call);
    },
    exit(call, now, result) {
      log.push(`${name}.exit@${now}:${['ok', 'failed', 'neutral'][result]}:${String(call.token)}`);
    },
    admitRetry(_call, now) {
      log.push(`${name}.admitRetry@${now}`);
      return undefined;
    },
  };
}

describe('CallMachine', () => {
  it('a first success: one attempt, timeout from the plan, no deadline', () => {
    const m = machine();
    expect(m.begin(0)).toBe(STEP_ATTEMPT);
    expect(m.attempt).toBe(1);
    expect(m.timeoutMs).toBe(1_000);
    expect(m.deadlineBound).toBe(false);
    expect(m.attemptDeadline).toBe(1_000);
    m.succeeded(5);
    expect(m.attemptsMade).toBe(1);
  });

  it('the attempt timeout is cut to the call deadline, and says so', () => {
    const m = machine([], { deadline: 300 });
    expect(m.begin(100)).toBe(STEP_ATTEMPT);
    expect(m.timeoutMs).toBe(200);
    expect(m.deadlineBound).toBe(true);
    expect(m.attemptDeadline).toBe(300);
  });

  it('fails, sleeps the backoff, then retries until max attempts; the last error is the cause', () => {
    const m = machine();
    m.begin(0);
    expect(m.failed(10, 'e1', FAILED)).toBe(STEP_SLEEP);
    expect(m.waitMs).toBe(100);
    m.begin(110);
    expect(m.failed(120, 'e2', FAILED)).toBe(STEP_SLEEP);
    expect(m.waitMs).toBe(200);
    m.begin(320);
    expect(m.failed(330, 'e3', FAILED)).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('max-attempts');
    expect(m.attemptsMade).toBe(3);
    expect(m.cause).toBe('e3');
    expect(m.outcome).toBe('failed');
  });

  it('decorrelated jitter reads the previous delay the machine chose', () => {
    const retry = new RetryPolicy({ maxAttempts: 6, backoff: { baseMs: 100, capMs: 100_000, jitter: 'decorrelated' } });
    const m = machine([], {}, plan(retry));
    const delays: number[] = [];
    let now = 0;
    m.begin(now);
    for (let i = 0; i < 5; i++) {
      expect(m.failed(now, 'e', FAILED)).toBe(STEP_SLEEP);
      delays.push(m.waitMs);
      now += m.waitMs;
      m.begin(now);
    }
    // With the previous delay fed back, delays grow beyond [base, 3·base].
    expect(Math.max(...delays)).toBeGreaterThan(300);
  });

  it('a non-retryable failure gives up at once with its reason', () => {
    const m = machine();
    m.begin(0);
    expect(m.failed(1, 'bad', NOT_RETRYABLE)).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('not-retryable');
    expect(m.attemptsMade).toBe(1);
  });

  it('no attempt starts once the deadline has passed: reason deadline, a DeadlineExceededError for a first attempt', () => {
    const m = machine([], { deadline: 50 });
    expect(m.begin(50)).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('deadline');
    expect(m.attemptsMade).toBe(0);
    expect(isDeadlineExceededError(m.cause)).toBe(true);
  });

  it('our own deadline cutting an attempt is reason deadline, outcome unknown, neutral for the stages', () => {
    const log: string[] = [];
    const m = machine([recorder('a', log)], { deadline: 100 });
    m.begin(0);
    expect(m.cutByDeadline(100, 'cut')).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('deadline');
    expect(m.outcome).toBe('unknown');
    expect(log).toEqual(['a.enter@0', 'a.exit@100:neutral:a-token-1']);
  });

  it('stages are entered in order and exited innermost first, each with its own token', () => {
    const log: string[] = [];
    const m = machine([recorder('a', log), recorder('b', log), recorder('c', log)]);
    expect(m.begin(0)).toBe(STEP_ATTEMPT);
    m.succeeded(7);
    expect(log).toEqual([
      'a.enter@0',
      'b.enter@0',
      'c.enter@0',
      'c.exit@7:ok:c-token-1',
      'b.exit@7:ok:b-token-1',
      'a.exit@7:ok:a-token-1',
    ]);
  });

  it('retry admission asks the stages innermost first', () => {
    const log: string[] = [];
    const m = machine([recorder('outer', log), recorder('inner', log)]);
    m.begin(0);
    log.length = 0;
    m.failed(3, 'e', FAILED);
    expect(log).toEqual([
      'inner.exit@3:failed:inner-token-1',
      'outer.exit@3:failed:outer-token-1',
      'inner.admitRetry@3',
      'outer.admitRetry@3',
    ]);
  });

  it('a refusing stage unwinds the stages before it (neutral) and never reaches the later ones', () => {
    const log: string[] = [];
    const refusing: Stage = {
      name: 'no',
      observesSuccess: false,
      enter: (call) => call.refuse('rejected', () => 'refused-first', 42),
      exit: () => log.push('no.exit'),
    };
    const m = machine([recorder('a', log), refusing, recorder('z', log)]);
    expect(m.begin(0)).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('rejected');
    expect(m.cause).toBe('refused-first');
    expect(m.attemptsMade).toBe(0);
    expect(m.giveUpRetryAfterMs).toBe(42);
    expect(log).toEqual(['a.enter@0', 'a.exit@0:neutral:a-token-1']);
  });

  it('a retry refused by a stage ends the call with what the last real attempt said', () => {
    let refuse = false;
    const stage: Stage = {
      name: 'gate',
      observesSuccess: false,
      enter: (call) => (refuse ? call.refuse('circuit-open', () => 'never used', 9) : ADMIT),
      exit: () => {},
    };
    const m = machine([stage]);
    m.begin(0);
    m.failed(1, 'timeout!', UNKNOWN);
    refuse = true;
    expect(m.begin(101)).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('circuit-open');
    expect(m.cause).toBe('timeout!');
    expect(m.outcome).toBe('unknown');
    expect(m.attemptsMade).toBe(1);
  });

  it('WAIT pauses admission and resume goes on from the next stage at the new time', () => {
    const log: string[] = [];
    const waiting = recorder('w', log, (call) => {
      call.waitMs = 30;
      return WAIT;
    });
    const m = machine([recorder('a', log), waiting, recorder('b', log)]);
    expect(m.begin(0)).toBe(STEP_WAIT);
    expect(m.waitMs).toBe(30);
    expect(m.resume(30)).toBe(STEP_ATTEMPT);
    expect(m.attemptStart).toBe(30);
    expect(log).toEqual(['a.enter@0', 'w.enter@0', 'b.enter@30']);
  });

  it('QUEUE: a granted slot counts the stage as entered; a grant past the deadline gives it back', () => {
    const log: string[] = [];
    const queueing = recorder('q', log, (call) => {
      call.queue = LINE;
      call.queueWaitMs = call.deadline - call.attemptStart;
      return QUEUE;
    });
    const m = machine([recorder('a', log), queueing], { deadline: 100 });
    expect(m.begin(0)).toBe(STEP_QUEUE);
    expect(m.queue).toBe(LINE);
    expect(m.queueWaitMs).toBe(100);
    expect(m.slotGranted(100)).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('deadline');
    expect(log.slice(2)).toEqual(['q.exit@100:neutral:undefined', 'a.exit@100:neutral:a-token-1']);
  });

  it('QUEUE refused: reason rejected, the refusal as the cause of a first attempt', () => {
    const queueing: Stage = { name: 'q', observesSuccess: false, enter: () => QUEUE, exit: () => {} };
    const m = machine([queueing]);
    m.begin(0);
    expect(m.slotRefused(5, 'full')).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('rejected');
    expect(m.cause).toBe('full');
  });

  it('an unknown outcome of a non-idempotent verifiable call asks verify first; applied ends the call', () => {
    const m = machine([], { idempotent: false, verifiable: true });
    m.begin(0);
    expect(m.failed(1, 'lost', UNKNOWN)).toBe(STEP_SLEEP);
    expect(m.begin(101)).toBe(STEP_VERIFY);
    expect(m.verified(102, true)).toBe(STEP_GIVE_UP);
    expect(m.reason).toBe('verified-applied');
    expect(m.attemptsMade).toBe(1);
  });

  it('an abandoned attempt is neutral for the stages; its outcome is unknown while running', () => {
    const log: string[] = [];
    const m = machine([recorder('a', log)]);
    m.begin(0);
    expect(m.abandonedOutcome).toBe('unknown');
    m.abandon(4);
    expect(log).toEqual(['a.enter@0', 'a.exit@4:neutral:a-token-1']);
  });

  it('a call abandoned while a stage holds it waiting tells every stage to leave (a pacer hands its ticket back)', () => {
    const log: string[] = [];
    const holding: Stage = {
      name: 'p',
      observesSuccess: false,
      enter(call) {
        call.waitMs = 10;
        call.waitAgain = true;
        return WAIT;
      },
      leave(_call, now) {
        log.push(`p.leave@${now}`);
      },
    };
    const m = machine([recorder('a', log), holding]);
    expect(m.begin(0)).toBe(STEP_WAIT);
    m.abandon(5);
    expect(log).toEqual(['a.enter@0', 'a.exit@5:neutral:a-token-1', 'p.leave@5']);
  });

  it('a stage may take over the retry delay (and the driver must then yield even at 0)', () => {
    const pacing: Stage = {
      name: 'p',
      observesSuccess: false,
      enter: () => ADMIT,
      exit: () => {},
      retryDelay: () => 0,
    };
    const m = machine([pacing]);
    m.begin(0);
    expect(m.failed(1, 'e', FAILED)).toBe(STEP_SLEEP);
    expect(m.waitMs).toBe(0);
    expect(m.yieldBeforeRetry).toBe(true);
  });

  it('with real stages: an open breaker fails a first attempt fast with a CircuitOpenError; a retry it refuses carries retryAfterMs', () => {
    const breaker = new CircuitBreaker({ threshold: 1, breakMs: 1_000, breakJitter: 0 }, new SeededRandom(1));
    const budgets = new KeyedRetryBudgets({ budget: {} });
    const stages = [new BudgetStage(budgets), new BreakerStage(breaker)];
    const first = machine(stages);
    first.begin(0);
    expect(first.failed(10, 'e', FAILED)).toBe(STEP_GIVE_UP);
    expect(first.reason).toBe('circuit-open');
    expect(first.giveUpRetryAfterMs).toBe(1_000);
    const second = machine(stages);
    expect(second.begin(20)).toBe(STEP_GIVE_UP);
    expect(isCircuitOpenError(second.cause)).toBe(true);
    expect(second.attemptsMade).toBe(0);
  });
});
