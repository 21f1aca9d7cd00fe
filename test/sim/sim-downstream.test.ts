import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { Simulation } from '../../src/sim/engine.js';
import { type SimCallEnd, SimDownstream, type SimDownstreamOptions } from '../../src/sim/sim-downstream.js';

const FAILED: Classification = { outcome: 'failed', retryable: true, status: 503 };
const THROTTLED: Classification = { outcome: 'failed', retryable: true, throttled: true, status: 429 };

/** A callee answering every attempt after `latencyMs` with `answer(attempt)` (undefined: success; 'hang': never). */
function harness(
  options: SimDownstreamOptions,
  answer: (attempt: number, now: number) => Classification | undefined | 'hang',
  latencyMs = 10,
) {
  const sim = new Simulation({ seed: 1 });
  const sent: [number, number, number][] = [];
  const ends: SimCallEnd[] = [];
  const pending: { call: number; failure: Classification | undefined }[] = [];
  const deliver = sim.on((i) => {
    const p = pending[i]!;
    api.answer(p.call, sim.now, p.failure);
  });
  const api: SimDownstream = new SimDownstream(
    sim,
    'callee',
    options,
    {
      send(call, attempt, now) {
        sent.push([call, attempt, now]);
        const a = answer(attempt, now);
        if (a === 'hang') return;
        pending.push({ call, failure: a });
        sim.after(latencyMs, deliver, pending.length - 1);
      },
    },
    (end) => ends.push(end),
  );
  return { sim, api, sent, ends };
}

describe('SimDownstream (a CallMachine per call on virtual time)', () => {
  it('retries a failing callee with the retry policy, then gives up with max-attempts', () => {
    const h = harness(
      { retry: { maxAttempts: 3, backoff: { shape: 'constant', baseMs: 100, jitter: 'none' } }, budget: false },
      () => FAILED,
    );
    h.api.start(0, 0);
    h.sim.run();
    expect(h.sent).toEqual([
      [0, 1, 0],
      [0, 2, 110],
      [0, 3, 220],
    ]);
    expect(h.ends).toEqual([{ call: 0, ok: false, reason: 'max-attempts', attempts: 3, refused: false, atMs: 230 }]);
  });

  it('the attempt timeout ends a hanging attempt (outcome unknown, retried); a late answer is dropped', () => {
    const h = harness(
      { retry: { maxAttempts: 2, backoff: { jitter: 'none', baseMs: 50 } }, attemptTimeoutMs: 100, budget: false },
      (attempt) => (attempt === 1 ? 'hang' : undefined),
    );
    h.api.start(0, 0);
    h.sim.run();
    expect(h.sent.map(([, a, t]) => [a, t])).toEqual([
      [1, 0],
      [2, 150],
    ]);
    expect(h.ends).toEqual([{ call: 0, ok: true, reason: undefined, attempts: 2, refused: false, atMs: 160 }]);
  });

  it('the total timeout is the call deadline: an attempt cut by it ends the call with reason deadline', () => {
    const h = harness(
      { retry: { maxAttempts: 5, backoff: { jitter: 'none', baseMs: 10 } }, totalTimeoutMs: 250, budget: false },
      () => 'hang',
    );
    h.api.start(0, 0);
    h.sim.run();
    expect(h.ends).toEqual([{ call: 0, ok: false, reason: 'deadline', attempts: 1, refused: false, atMs: 250 }]);
  });

  it('the budget (on by default, as in downstream()) deposits at call start and refuses retries beyond it', () => {
    const h = harness({ retry: { maxAttempts: 3 }, budget: { ratio: 0.5, reservePerSecond: 0 } }, () => FAILED);
    for (let c = 0; c < 10; c++) h.api.start(c, 0);
    h.sim.run();
    // 10 deposits × 0.5 = 5 retries in the window.
    expect(h.sent.length).toBe(15);
    expect(h.api.budgetRejections).toBe(10);
    expect(h.api.gaveUp).toEqual({ budget: 10 });
  });

  it('an open breaker fails calls fast without sending (reason circuit-open)', () => {
    const h = harness({ retry: false, budget: false, breaker: { threshold: 2 } }, () => FAILED);
    const start = h.sim.on((c, now) => h.api.start(c, now));
    for (let c = 0; c < 5; c++) h.sim.at(c * 100, start, c);
    h.sim.run();
    expect(h.sent.length).toBe(2);
    expect(h.api.gaveUp).toEqual({ 'max-attempts': 2, 'circuit-open': 3 });
    expect(h.ends.map((e) => e.refused)).toEqual([false, false, true, true, true]);
  });

  it('pacing: while throttled, retries wait for the pacer’s slot (STEP_WAIT) instead of their backoff', () => {
    const h = harness(
      {
        retry: {
          maxAttempts: Number.POSITIVE_INFINITY,
          maxElapsedMs: 60_000,
          backoff: { shape: 'constant', baseMs: 0, jitter: 'none' },
        },
        budget: false,
        pacing: true,
      },
      (attempt) => (attempt <= 2 ? THROTTLED : undefined),
    );
    for (let c = 0; c < 20; c++) h.api.start(c, 0);
    h.sim.run();
    expect(h.api.succeeded).toBe(20);
    // Retries are spread by the pacer, not sent back at once.
    const retries = h.sent.filter(([, a]) => a > 1).map(([, , t]) => t);
    expect(new Set(retries).size).toBeGreaterThan(1);
  });

  it('validates its options like downstream(), every problem at once', () => {
    const sim = new Simulation({ seed: 1 });
    expect(
      () =>
        new SimDownstream(sim, 'x', { attemptTimeoutMs: -1, retry: { maxAttempts: 0 }, nope: 1 } as SimDownstreamOptions, {
          send() {},
        }),
    ).toThrow(/nope[\s\S]*attemptTimeout[\s\S]*maxAttempts/);
  });
});
