import { describe, expect, it } from 'vitest';
import { isCircuitOpenError } from '../../../src/errors/errors.js';
import { ADMIT, REFUSE, RESULT_FAILED, RESULT_NEUTRAL, RESULT_OK } from '../../../src/orchestration/stage.js';
import { BreakerStage } from '../../../src/orchestration/stages/breaker-stage.js';
import { CircuitBreaker } from '../../../src/policies/circuit-breaker.js';
import { SeededRandom } from '../../../src/random/random.js';
import { stageCall } from './stage-call.js';

const failure = { outcome: 'failed', retryable: true, status: 503 } as const;

function stage(options = {}) {
  return new BreakerStage(new CircuitBreaker({ threshold: 2, breakMs: 1_000, breakJitter: 0, ...options }, new SeededRandom(1)));
}

describe('BreakerStage', () => {
  it('counts failures through exit and refuses while open, with a CircuitOpenError for a first attempt', () => {
    const s = stage();
    const call = stageCall({ classification: failure });
    for (let i = 0; i < 2; i++) {
      expect(s.enter(call, i)).toBe(ADMIT);
      s.exit(call, i, RESULT_FAILED);
    }
    expect(s.enter(call, 5)).toBe(REFUSE);
    expect(call.refused?.reason).toBe('circuit-open');
    expect(call.refused?.retryAfterMs).toBe(1_000 - 4);
    expect(isCircuitOpenError(call.refused?.cause)).toBe(true);
  });

  it('admitRetry stops retries while open and reports when to come back', () => {
    const s = stage({ threshold: 1 });
    const call = stageCall({ classification: failure });
    s.enter(call, 0);
    s.exit(call, 0, RESULT_FAILED);
    expect(s.admitRetry(call, 10)).toBe('circuit-open');
    expect(call.retryAfterMs).toBe(990);
    expect(s.admitRetry(call, 1_000)).toBeUndefined();
  });

  it('a neutral exit frees a half-open probe without closing or re-opening', () => {
    const s = stage({ threshold: 1 });
    const call = stageCall({ classification: failure });
    s.enter(call, 0);
    s.exit(call, 0, RESULT_FAILED);
    expect(s.enter(call, 1_000)).toBe(ADMIT); // the probe
    expect(s.enter(stageCall(), 1_000)).toBe(REFUSE); // one probe at a time
    s.exit(call, 1_001, RESULT_NEUTRAL);
    expect(s.breaker.state(1_001)).toBe('half-open');
    const probe = stageCall();
    expect(s.enter(probe, 1_002)).toBe(ADMIT);
    s.exit(probe, 1_003, RESULT_OK);
    expect(s.breaker.state(1_003)).toBe('closed');
  });

  it('asks for a real now after a success only when the breaker files it by time (ratio mode, half-open probes)', () => {
    const consecutive = stage({ threshold: 1 });
    expect(consecutive.observesSuccess).toBe(false);
    const call = stageCall({ classification: failure });
    consecutive.enter(call, 0);
    consecutive.exit(call, 0, RESULT_FAILED);
    expect(consecutive.observesSuccess).toBe(true); // open
    expect(consecutive.enter(call, 1_000)).toBe(ADMIT); // half-open probe
    expect(consecutive.observesSuccess).toBe(true);
    consecutive.exit(call, 1_000, RESULT_OK);
    expect(consecutive.breaker.state(1_000)).toBe('closed');
    expect(consecutive.observesSuccess).toBe(false);
    expect(stage({ mode: 'ratio' }).observesSuccess).toBe(true);
  });

  it('refuses hedges while the breaker is not closed, and the breaker hears nothing of them', () => {
    const breaker = new CircuitBreaker({}, new SeededRandom(1));
    const stage = new BreakerStage(breaker);
    const hedge = { ...stageCall(), hedge: 1 };
    expect(stage.enterHedge(hedge, 0)).toBe(true);
    breaker.isolate(0);
    expect(stage.enterHedge(hedge, 10)).toBe(false);
    breaker.close(20);
    expect(stage.enterHedge(hedge, 20)).toBe(true);
  });
});
