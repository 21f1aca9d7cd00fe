import { describe, expect, it } from 'vitest';
import { PoolWindow } from '../../src/policies/pool-window.js';

/** `n` successes in a row, requests waiting (or not). */
function successes(w: PoolWindow, n: number, waiting = true): void {
  for (let i = 0; i < n; i++) w.answer(1, 'ok', waiting);
}

describe('PoolWindow', () => {
  it('admits tickets from its first one up to its size, and one more per answer', () => {
    const w = new PoolWindow(3, 10, 0);
    expect([9, 10, 11, 12, 13].map((t) => w.admits(t, 0))).toEqual([true, true, true, true, false]);
    w.answer(5, 'ok', true);
    expect(w.admits(13, 0)).toBe(true);
    expect(w.admits(14, 0)).toBe(false);
    w.answer(6, 'other', true);
    expect(w.gate).toBe(15);
  });

  it('grows with the rest of the flight, never shrinks with it', () => {
    const w = new PoolWindow(3, 1, 0);
    w.flightServed(11);
    expect(w.size).toBe(11);
    w.flightServed(5);
    expect(w.size).toBe(11);
  });

  it('grows as TCP starts up — one place per window of successes, then two, four — while requests wait', () => {
    const w = new PoolWindow(4, 1, 0);
    const sizes = [3, 1, 5, 7].map((n) => {
      successes(w, n);
      return w.size;
    });
    expect(sizes).toEqual([4, 5, 7, 11]);
    // Nobody waiting: serving everything there is says nothing about a larger pool.
    successes(w, 30, false);
    expect(w.size).toBe(11);
  });

  it('a rejection takes its place back and ends the start-up: then one place per four windows', () => {
    const w = new PoolWindow(4, 1, 0);
    w.answer(1, 'rejected', true);
    expect([w.size, w.gate]).toEqual([3, 1 + 3 + 1]);
    const sizes = [11, 1, 16].map((n) => {
      successes(w, n);
      return w.size;
    });
    expect(sizes).toEqual([3, 4, 5]);
  });

  it('never shrinks below one place', () => {
    const w = new PoolWindow(1, 1, 0);
    w.answer(1, 'rejected', true);
    w.answer(2, 'rejected', true);
    expect(w.size).toBe(1);
    expect(new PoolWindow(0, 1, 0).size).toBe(1);
  });

  it('tells when its own requests are served about as fast as they are rejected: no pool', () => {
    const answers = (okMs: number, rejectedMs: number, n: number) => {
      const w = new PoolWindow(4, 1, 0);
      for (let i = 0; i < n; i++) {
        w.answer(i, 'ok', true, okMs);
        w.answer(i, 'rejected', true, rejectedMs);
      }
      return w;
    };
    expect(answers(1, 1, 8).servesAsFastAsRejects).toBe(true);
    expect(answers(2, 1, 8).servesAsFastAsRejects).toBe(true);
    // A pool: served in its service time, rejected at once.
    expect(answers(2.5, 1, 8).servesAsFastAsRejects).toBe(false);
    expect(answers(100, 1, 30).servesAsFastAsRejects).toBe(false);
    // Too few answers to say.
    expect(answers(1, 1, 7).servesAsFastAsRejects).toBe(false);
    // Answers that say nothing about load, or without a latency, are not counted.
    const w = answers(1, 1, 7);
    w.answer(9, 'other', true, 1);
    w.answer(9, 'ok', true);
    w.answer(9, 'rejected', true);
    expect(w.servesAsFastAsRejects).toBe(false);
  });

  it('is no pool once its lone request is rejected again and again, over four of the flight’s service times', () => {
    // The flight was served in 2 ms. Down to one place, nothing of the window's or of first
    // tries in flight, and every request rejected: a pool would have served one.
    const lone = (rejections: number, everyMs: number) => {
      const w = new PoolWindow(1, 1, 0, 2);
      for (let i = 0; i < rejections; i++) w.answer(1 + i * everyMs, 'rejected', true, 0.5);
      return w;
    };
    expect(lone(8, 1).rejectsAlone(8)).toBe(false);
    expect(lone(8, 1).rejectsAlone(9)).toBe(true);
    // Eight, but within four service times (8 ms): a herd's first tries may hold every worker
    // that long.
    expect(lone(8, 0.5).rejectsAlone(4.5)).toBe(false);
    // Seven only.
    expect(lone(7, 2).rejectsAlone(20)).toBe(false);
    // A success between them starts the count again.
    const served = lone(5, 1);
    served.answer(6, 'ok', true, 2);
    for (let i = 0; i < 5; i++) served.answer(7 + i, 'rejected', true, 0.5);
    expect(served.rejectsAlone(12)).toBe(false);
    // Rejections while the window still held places are the pool being full, not empty.
    const full = new PoolWindow(4, 1, 0, 2);
    for (let i = 0; i < 3; i++) full.answer(1 + i, 'rejected', true, 0.5);
    expect(full.size).toBe(1);
    for (let i = 0; i < 7; i++) full.answer(4 + i, 'rejected', true, 0.5);
    expect(full.rejectsAlone(20)).toBe(false);
    full.answer(11, 'rejected', true, 0.5);
    expect(full.rejectsAlone(20)).toBe(true);
    // First tries this pacer let go hold places of the pool: their rejections say it is full.
    const others = new PoolWindow(1, 1, 0, 2);
    others.otherSent(0, 100, 100);
    for (let i = 0; i < 12; i++) others.answer(1 + i, 'rejected', true, 0.5);
    expect(others.rejectsAlone(13)).toBe(false);
  });

  it('averages its first latencies rather than taking the first for all of them', () => {
    // Service times that spread: the first success may come back fast. Its 2 ms taken as the
    // mean and smoothed by 1/8 from there, eight successes read 15.4 ms, under twice the
    // rejections' 10 ms; their mean is 21.3 ms.
    const w = new PoolWindow(4, 1, 0);
    for (const ms of [2, 24, 24, 24, 24, 24, 24, 24]) w.answer(1, 'ok', true, ms);
    for (let i = 0; i < 8; i++) w.answer(1, 'rejected', true, 10);
    expect(w.servesAsFastAsRejects).toBe(false);
  });

  it('gives the places a full pool’s other requests hold back one by one, as they are served', () => {
    const w = new PoolWindow(4, 1, 0);
    expect(w.gate).toBe(5);
    // A first try rejected: the pool is full of them, none of the window's places is free.
    w.othersFilled(10, 100);
    expect(w.gate).toBe(1);
    w.otherServed(60);
    w.otherServed(61);
    expect(w.gate).toBe(3);
    // Another first try of the same herd rejected: the two served stay freed.
    w.othersFilled(70, 100);
    expect(w.gate).toBe(3);
    w.otherServed(80);
    w.otherServed(81);
    w.otherServed(82); // more served than held: nothing more to free
    expect(w.gate).toBe(5);
    // The next herd, more than a service time later, fills the pool again.
    w.othersFilled(300, 100);
    expect(w.gate).toBe(1);
    // Their answers never come: after `staleMs` without a place freed, the places are free.
    expect(w.rescue(350, 100)).toBe(false);
    expect(w.rescue(400, 100)).toBe(true);
    expect(w.gate).toBe(5);
  });

  it('expects one place per service time / size, and has the next `size` in line ask often', () => {
    const w = new PoolWindow(10, 1, 0);
    // Gate at 11: ticket 11 is first in line.
    expect(w.expectedWait(10, 100)).toBe(0);
    expect(w.expectedWait(11, 100)).toBe(10);
    expect(w.expectedWait(15, 100)).toBe(50);
    expect(w.checkAfter(11, 100)).toBe(2.5);
    expect(w.checkAfter(20, 100)).toBe(2.5);
    expect(w.checkAfter(23, 100)).toBe(30);
  });

  it('takes one request as lost when no place was freed for the stale time', () => {
    const w = new PoolWindow(2, 1, 100);
    expect(w.rescue(150, 100)).toBe(false);
    expect(w.gate).toBe(3);
    expect(w.rescue(200, 100)).toBe(true);
    expect(w.gate).toBe(4);
    expect(w.rescue(250, 100)).toBe(false);
    w.answer(260, 'ok', false);
    expect(w.rescue(340, 100)).toBe(false);
    expect(w.rescue(360, 100)).toBe(true);
  });

  it('is no pool once four of its own successes came back four times faster than the flight’s; the rate it was taken for is the flight’s places per service time', () => {
    const w = new PoolWindow(10, 1, 0, 160);
    for (let i = 0; i < 3; i++) w.answer(10 + i, 'ok', true, 2);
    expect(w.servesFasterThanFlight).toBe(false);
    w.answer(13, 'ok', true, 2);
    expect(w.servesFasterThanFlight).toBe(true);
    // The window grows on successes while requests wait; the rate is the flight's all the same.
    for (let i = 0; i < 8; i++) w.answer(14 + i, 'ok', true, 2);
    expect(w.size).toBeGreaterThan(10);
    expect(w.placesRate).toBeCloseTo(10 / 160, 12);
    // A pool's successes take its service time.
    const pool = new PoolWindow(10, 1, 0, 160);
    for (let i = 0; i < 20; i++) pool.answer(10 + i, 'ok', true, 100);
    expect(pool.servesFasterThanFlight).toBe(false);
    // Without the flight's time, nothing to compare.
    const unknown = new PoolWindow(10, 1, 0);
    for (let i = 0; i < 20; i++) unknown.answer(10 + i, 'ok', true, 1);
    expect(unknown.servesFasterThanFlight).toBe(false);
    expect(unknown.placesRate).toBeNaN();
  });

  /**
   * A window of two places whose requests were served in `okMs` and rejected in `rejectedMs`
   * (the way there and back), each sent and answered in turn: four served, one rejected (now
   * one place), and ticket 6, sent at 240, still in flight. Ticket 7 is at the gate.
   */
  function answeredWindow(okMs: number, rejectedMs: number): PoolWindow {
    const w = new PoolWindow(2, 1, 0);
    let ticket = 1;
    for (const at of [0, okMs]) {
      w.sent(at, ticket++);
      w.sent(at, ticket++);
      w.answer(at + okMs, 'ok', false, okMs);
      w.answer(at + okMs, 'ok', false, okMs);
    }
    w.sent(240, ticket++);
    w.sent(240, ticket++);
    w.answer(240 + rejectedMs, 'rejected', false, rejectedMs);
    expect([w.size, w.gate]).toEqual([1, 7]);
    return w;
  }

  it('lets one request go ahead of an answer once a request in flight has had one service time, when answers take a while back', () => {
    // Served in 120 ms, rejected in 20: 100 ms of service, 20 ms there and back.
    const w = answeredWindow(120, 20);
    expect(w.admits(7, 339)).toBe(false);
    expect(w.admits(7, 340)).toBe(true);
    // One at a time.
    expect(w.admits(8, 340)).toBe(false);
    w.sent(340, 7);
    expect(w.admits(8, 500)).toBe(false);
  });

  it('has each request in flight stand for one sent ahead at most: one from a long tail does not keep a place open', () => {
    const w = answeredWindow(120, 20);
    // Ticket 6 (sent at 240) is slow to come back; ticket 7 goes ahead for it at 340.
    w.sent(340, 7);
    // Ticket 7 is answered at once: its place frees, ticket 8 is at the gate.
    w.answer(350, 'ok', false, 10);
    expect(w.gate).toBe(8);
    expect(w.admits(8, 360)).toBe(false);
    // Ticket 7's own service time passing does not count: it was answered.
    expect(w.admits(8, 460)).toBe(false);
  });

  it('sends nothing ahead when its successes’ round trips spread: a worker’s service cannot be foreseen', () => {
    const w = new PoolWindow(2, 1, 0);
    // Served in 100, 140, 100, 140 ms (spread 20 ms of 100 ms services), rejected in 20.
    let at = 0;
    let ticket = 1;
    for (const okMs of [100, 140, 100, 140]) {
      w.sent(at, ticket++);
      w.answer(at + okMs, 'ok', false, okMs);
      at += okMs;
    }
    w.sent(at, ticket++);
    w.sent(at, ticket++);
    w.answer(at + 20, 'rejected', false, 20);
    expect(w.admits(w.gate, at + 300)).toBe(false);
  });

  it('takes no place back when a request sent ahead is rejected, and sends the next one later', () => {
    const w = answeredWindow(120, 20);
    w.sent(340, 7);
    w.answer(360, 'rejected', false, 20);
    // A guess that missed, not a sign of load: the window keeps its place.
    expect([w.size, w.gate]).toEqual([1, 8]);
    // Ticket 6 (sent at 240) stood for that one; its answer frees the place for ticket 8.
    expect(w.admits(8, 360)).toBe(false);
    w.answer(360, 'ok', false, 120);
    expect(w.admits(8, 360)).toBe(true);
    w.sent(360, 8);
    // The next goes ahead after 1.1 service times (the margin grew), not after one.
    expect(w.admits(9, 360 + 105)).toBe(false);
    expect(w.admits(9, 360 + 110)).toBe(true);
    // A rejection of a request that went within the places still takes one back.
    const plain = answeredWindow(120, 20);
    plain.answer(260, 'rejected', false, 20);
    expect(plain.size).toBe(1);
    expect(plain.gate).toBe(8);
  });

  it('takes a request let go below the gate for one within the places, however many it counts in flight: its rejection takes a place back (regression: cold herds sent 250–305 requests into express-queue)', () => {
    // Two places from ticket 3. Ticket 1, booked before the window was made, leaves after it:
    // it goes at once (below the window) and is counted in flight, so the window counts one
    // more in flight than its places hold.
    const w = new PoolWindow(2, 3, 0);
    w.sent(0, 1);
    w.sent(0.5, 3);
    w.sent(1, 4);
    w.answer(101, 'ok', false, 100.5, 0.5);
    expect(w.gate).toBe(6);
    // Ticket 5 goes within the places, while two are counted in flight. Rejected: the pool
    // is full, one place fewer, and ticket 6 waits for an answer. (Read as sent ahead, its
    // rejection took no place back and freed one: the next went at once, into the full pool.)
    w.sent(101, 5);
    w.answer(103, 'rejected', false, 2, 101);
    expect(w.size).toBe(1);
    expect(w.admits(6, 103)).toBe(false);
  });

  it('sends nothing ahead when answers come back quickly, or before it has timed its own answers', () => {
    // 5 ms there and back against 100 ms of service: a worker hardly idles.
    const quick = answeredWindow(105, 5);
    expect(quick.admits(7, 10_000)).toBe(false);
    // Served as fast as rejected: no service time to go by.
    const flat = answeredWindow(30, 20);
    expect(flat.admits(7, 10_000)).toBe(false);
    // Untimed answers: nothing to estimate from.
    const w = new PoolWindow(1, 1, 0);
    w.sent(0, 1);
    w.answer(120, 'ok', false);
    expect(w.admits(3, 10_000)).toBe(false);
  });
});

describe('PoolWindow: first tries this process let go while it paces', () => {
  it('each holds a place until answered, and one sent longer ago than the stale time holds none', () => {
    // (A service time of 0: no first try counts as arriving, below.)
    const w = new PoolWindow(10, 1, 0);
    expect(w.gate).toBe(11);
    for (const at of [0, 1, 2]) w.otherSent(at, 400, 0);
    expect(w.gate).toBe(8);
    w.otherAnswered(1);
    expect(w.gate).toBe(9);
    // An aborted caller reports no answer: 400 ms on, its place is free again.
    w.otherSent(500, 400, 0);
    expect(w.gate).toBe(10);
  });

  it('arriving at least as fast as the pool frees places, they hold the places even when rejected at once (regression: real express-queue, 705–723 requests against 604)', () => {
    const w = new PoolWindow(10, 1, 0);
    // Twelve first tries within one service time (100 ms), each rejected a ms later.
    for (let i = 0; i < 12; i++) {
      w.otherSent(i * 8, 400, 100);
      w.otherAnswered(i * 8);
    }
    expect(w.admits(1, 90)).toBe(false);
    // Six within the last service time: four places for the window's own requests.
    expect([1, 2, 3, 4, 5].map((t) => w.admits(t, 140))).toEqual([true, true, true, true, false]);
    // None for a service time: every place is the window's again.
    expect(w.admits(10, 189)).toBe(true);
    expect(w.admits(11, 189)).toBe(false);
  });

  it('places given up to rejections while first tries held places come back once none is in flight (regression: the backlog left at half the pool’s rate)', () => {
    const w = new PoolWindow(4, 1, 0);
    w.otherSent(0, 400, 0);
    w.sent(1, 1);
    w.answer(2, 'rejected', false, 1, 1);
    expect(w.size).toBe(3);
    w.otherAnswered(0);
    expect(w.size).toBe(4);
    // A rejection with no first try in flight is a smaller pool: the place stays given up.
    w.sent(3, 2);
    w.answer(4, 'rejected', false, 1, 3);
    expect(w.size).toBe(3);
  });

  it('first tries of the search still unanswered when it is made hold their places until answered, however long ago they left, and stale ones none (regression: the window kept 8 of 10 workers busy)', () => {
    // Made at 300 ms, service time 100 ms: the first tries of 150 and 160 ms are long out of
    // the last service time, but still unanswered; the one of 40 ms is older than the stale time.
    const w = new PoolWindow(10, 1, 300);
    w.arrivedBefore([150, 160, 290], [{ sentAt: 150 }, { sentAt: 160 }, { sentAt: 290 }], 300, 100, 250);
    expect(w.gate).toBe(1 + 10 - 3);
    const stale = new PoolWindow(10, 1, 300);
    stale.arrivedBefore([40], [{ sentAt: 40 }], 300, 100, 250);
    expect(stale.gate).toBe(11);
    // Their answers free their places; a service time after the last of them left, every place
    // is the window's again.
    w.otherAnswered(150);
    w.otherAnswered(160);
    expect(w.gate).toBe(1 + 10 - 1);
    w.otherAnswered(290);
    expect([10, 11].map((t) => w.admits(t, 400))).toEqual([true, false]);
    // Unanswered, they hold theirs no longer than the stale time.
    const unanswered = new PoolWindow(10, 1, 300);
    unanswered.arrivedBefore([], [{ sentAt: 150 }, { sentAt: 160 }], 300, 100, 250);
    expect([8, 9].map((t) => unanswered.admits(t, 350))).toEqual([true, false]);
    expect([9, 10].map((t) => unanswered.admits(t, 405))).toEqual([true, false]);
    expect([10, 11].map((t) => unanswered.admits(t, 415))).toEqual([true, false]);
  });

  it('a rejection while those first tries are in flight takes its place: counted from the start, the window sent none into theirs', () => {
    const w = new PoolWindow(10, 1, 300);
    w.arrivedBefore([], [{ sentAt: 150 }], 300, 100, 250);
    w.sent(301, 1);
    w.answer(320, 'rejected', true, 19, 301);
    w.otherAnswered(150);
    expect(w.size).toBe(9);
  });

  it('at one place, a rejection frees none while the window’s own requests are in flight: the next waits for their answers (regression: ~300 requests a second, two in three rejected)', () => {
    const w = new PoolWindow(1, 1, 0);
    w.sent(0, 1);
    w.sent(0, 2);
    expect(w.gate).toBe(2);
    w.answer(100, 'rejected', false, 100, 0);
    expect(w.gate).toBe(2);
    w.answer(101, 'ok', false, 101, 0);
    expect(w.gate).toBe(3);
    // With nothing of its own in flight, a rejection frees its place, or nothing would go again.
    w.sent(102, 3);
    w.answer(103, 'rejected', false, 1, 102);
    expect(w.gate).toBe(4);
  });
});
