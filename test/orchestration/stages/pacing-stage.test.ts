import { describe, expect, it } from 'vitest';
import { ADMIT, QUEUE, REFUSE, RESULT_FAILED, RESULT_OK, WAIT } from '../../../src/orchestration/stage.js';
import { PacingStage, type SharedTicket } from '../../../src/orchestration/stages/pacing-stage.js';
import { Pacer } from '../../../src/policies/pacer.js';
import { stageCall } from './stage-call.js';

const throttled = { outcome: 'failed', retryable: true, throttled: true, status: 429 } as const;

/** A pacer that has just been told to slow down by a burst of 429s. */
function throttledStage(options: ConstructorParameters<typeof PacingStage>[1] = {}) {
  const stage = new PacingStage(new Pacer(), options);
  for (let i = 0; i < 20; i++) stage.exit(stageCall({ classification: throttled, attemptStart: 0 }), 10, RESULT_FAILED);
  return stage;
}

describe('PacingStage', () => {
  it('marks a retry decided while throttling as paced (the budget does not charge it), and only then', () => {
    const healthy = new PacingStage(new Pacer());
    const call = stageCall({ attempt: 2, retryPaced: false });
    expect(healthy.admitRetry(call, 10)).toBeUndefined();
    expect(call.retryPaced).toBe(false);
    expect(throttledStage().admitRetry(call, 10)).toBeUndefined();
    expect(call.retryPaced).toBe(true);
  });

  it('first attempts pass unpaced unless paceFirstAttempts', () => {
    expect(throttledStage().enter(stageCall({ attempt: 1 }), 10)).toBe(ADMIT);
  });

  it('a retry waits for its booked slot (checking again as it moves), and the wait is reported', () => {
    const delays: number[] = [];
    const stage = throttledStage({ onDelay: (_now, ms) => delays.push(ms) });
    let call = stageCall({ attempt: 2 });
    for (let i = 0; i < 5; i++) {
      call = stageCall({ attempt: 2 });
      expect(stage.enter(call, 10)).toBe(WAIT);
    }
    // The fifth probe's slot, as booked; the first check is sooner (the slot may move) and
    // enters this stage again.
    expect(delays.at(-1)).toBeGreaterThan(0);
    expect(call.waitMs).toBeGreaterThan(0);
    expect(call.waitMs).toBeLessThanOrEqual(delays.at(-1)!);
    expect(call.waitAgain).toBe(true);
    let now = 10 + call.waitMs;
    let admitted = false;
    for (let i = 0; i < 100 && !admitted; i++) {
      if (stage.enter(call, now) === ADMIT) admitted = true;
      else now += call.waitMs;
    }
    expect(admitted).toBe(true);
    expect(now).toBeCloseTo(10 + delays.at(-1)!, 6);
  });

  it('a slot that would end after the deadline is given back and the call refused with reason deadline', () => {
    const stage = throttledStage();
    for (let i = 0; i < 5; i++) stage.enter(stageCall({ attempt: 2 }), 10);
    const before = stage.pacer.paced;
    const call = stageCall({ attempt: 2, deadline: 11 });
    expect(stage.enter(call, 10)).toBe(REFUSE);
    expect(call.refused?.reason).toBe('deadline');
    expect(stage.pacer.paced).toBe(before);
  });

  it('a caller that aborts while holding a ticket hands its slot back; the next booking takes it (regression: the slot stayed booked)', () => {
    const stage = throttledStage();
    const calls = Array.from({ length: 4 }, () => stageCall({ attempt: 2 }));
    for (const call of calls) expect(stage.enter(call, 10)).toBe(WAIT);
    const before = stage.pacer.paced;
    const slotOfThird = stage.pacer.slotWait(3, 10);
    stage.leave(calls[2]!, 10);
    expect(stage.pacer.paced).toBe(before - 1);
    stage.leave(calls[2]!, 10); // twice: nothing more to give back
    expect(stage.pacer.paced).toBe(before - 1);
    const next = stageCall({ attempt: 2 });
    expect(stage.enter(next, 10)).toBe(WAIT);
    expect(stage.pacer.lastTicket).toBe(3);
    expect(stage.pacer.slotWait(stage.pacer.lastTicket, 10)).toBe(slotOfThird);
  });

  it('after a slow flight, a retry admitted at once holds a place in the pool’s window, and its answer — a 500 too — frees it (regression: only waited-for slots were counted)', () => {
    // 10 workers × 100 ms, one queued: the flight served 11, so 11 may be in flight.
    const stage = new PacingStage(new Pacer());
    for (let i = 0; i < 89; i++)
      stage.exit(stageCall({ classification: throttled, attemptStart: 0 }), 40 + i * 0.2, RESULT_FAILED);
    for (let i = 0; i < 10; i++) stage.exit(stageCall({ attemptStart: 0 }), 140, RESULT_OK);
    stage.exit(stageCall({ attemptStart: 0 }), 240, RESULT_OK);
    const calls = Array.from({ length: 15 }, () => stageCall({ attempt: 2, attemptStart: 350 }));
    const sent = new Set(calls.filter((call) => stage.enter(call, 350) === ADMIT));
    // The first slot is due at once (nobody booked since the search ended); the others wait.
    expect([...sent]).toEqual([calls[0]]);
    /** Calls still waiting ask again at `now`; how many have been let go so far. */
    const letGo = (now: number) => {
      for (const call of calls) if (!sent.has(call) && stage.enter(call, now) === ADMIT) sent.add(call);
      return sent.size;
    };
    expect(letGo(400)).toBe(11);
    // The one admitted at once is answered: its place goes to the next in line.
    stage.exit(calls[0]!, 410, RESULT_OK);
    expect(letGo(410)).toBe(12);
    // A 500 says nothing about load, but its request is done: its place is free too.
    const failed = calls[1]!;
    failed.classification = { outcome: 'failed', retryable: true, throttled: false, status: 500 };
    stage.exit(failed, 420, RESULT_FAILED);
    expect(letGo(420)).toBe(13);
  });

  it('while throttling, a retry keeps its own backoff (marked paced, so even 0 yields); otherwise untouched', () => {
    const stage = throttledStage();
    expect(stage.retryDelay(stageCall(), 10, 0)).toBe(0);
    expect(stage.retryDelay(stageCall(), 10, 250)).toBe(250);
    expect(new PacingStage(new Pacer()).retryDelay(stageCall(), 10, 250)).toBe(-1);
  });

  it('refuses hedges while the callee is being paced — here, or anywhere in the fleet through its booker', () => {
    const hedge = { ...stageCall({ attempt: 1 }), hedge: 1 };
    expect(new PacingStage(new Pacer()).enterHedge(hedge, 10)).toBe(true);
    expect(throttledStage().enterHedge(hedge, 10)).toBe(false);
    let fleetThrottling = true;
    const booker = { reserve: () => undefined, throttling: () => fleetThrottling };
    const inFleet = new PacingStage(new Pacer(), { booker });
    expect(inFleet.enterHedge(hedge, 10)).toBe(false);
    fleetThrottling = false;
    expect(inFleet.enterHedge(hedge, 10)).toBe(true);
  });

  it('a shared ticket (a fleet’s) is held and asked again at each check: a slot brought earlier is taken, one past the deadline refuses', () => {
    // A fleet queue's slot for this call, as its process knows it: moved by a test.
    let slotAt = 500;
    const ticket: SharedTicket = {
      slotWait: (now) => Math.max(0, slotAt - now),
      holdFor: (now) => Math.min(Math.max(0, slotAt - now), 40),
    };
    const delays: number[] = [];
    const stage = throttledStage({
      onDelay: (_now, ms) => delays.push(ms),
      booker: { reserve: () => Promise.resolve(ticket), throttling: () => true },
    });
    const call = stageCall({ attempt: 2 });
    expect(stage.afterQueue(call, 20, ticket)).toBe(WAIT);
    expect(delays).toEqual([480]);
    expect(call.waitMs).toBe(40);
    expect(call.waitAgain).toBe(true);
    // The fleet learned a higher rate: the slot moved to 70; the next check takes it.
    slotAt = 70;
    expect(stage.enter(call, 60)).toBe(WAIT);
    expect(call.waitMs).toBe(10);
    expect(stage.enter(call, 70)).toBe(ADMIT);
    // Moved past the caller's deadline: refused with reason deadline, not sent late.
    const late = stageCall({ attempt: 2, deadline: 300 });
    slotAt = 200;
    expect(stage.afterQueue(late, 20, ticket)).toBe(WAIT);
    slotAt = 400;
    expect(stage.enter(late, 60)).toBe(REFUSE);
    expect(late.refused?.reason).toBe('deadline');
  });

  it('a ticket held while the pacer searched moves to the shared queue once the search ends (regression: a fleet process drained it at its own share)', () => {
    const ticket: SharedTicket = { slotWait: () => 0, holdFor: () => 0 };
    let booked = 0;
    const stage = throttledStage({
      booker: {
        // While the pacer searches, its probes are held here; afterwards the shared queue applies.
        reserve: (_now, due) => {
          if (stage.pacer.searching && !due) return undefined;
          booked++;
          return Promise.resolve(ticket);
        },
        throttling: () => true,
      },
    });
    const calls = Array.from({ length: 5 }, () => stageCall({ attempt: 2 }));
    for (const call of calls) expect(stage.enter(call, 10)).toBe(WAIT);
    expect(booked).toBe(0);
    // Another process found the callee's rate: the search ends here too.
    expect(stage.pacer.adopt(20, 11)).toBe(true);
    const last = calls.at(-1)!;
    expect(stage.pacer.slotWait(stage.pacer.lastTicket, 11)).toBeGreaterThan(0);
    expect(stage.enter(last, 11)).toBe(QUEUE);
    expect(booked).toBe(1);
    // Its local slot was handed back, and the shared ticket is held as any other.
    expect(stage.afterQueue(last, 12, ticket)).toBe(ADMIT);
  });
});
