import { describe, expect, it } from 'vitest';
import { PoolWindow } from '../../src/policies/pool-window.js';

/** `n` successes in a row, requests waiting (or not). */
function successes(w: PoolWindow, n: number, waiting = true): void {
  for (let i = 0; i < n; i++) w.answer(1, 'ok', waiting);
}

describe('PoolWindow', () => {
  it('admits tickets from its first one up to its size, and one more per answer', () => {
    const w = new PoolWindow(3, 10, 0);
    expect([9, 10, 11, 12, 13].map((t) => w.admits(t))).toEqual([true, true, true, true, false]);
    w.answer(5, 'ok', true);
    expect(w.admits(13)).toBe(true);
    expect(w.admits(14)).toBe(false);
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
});
