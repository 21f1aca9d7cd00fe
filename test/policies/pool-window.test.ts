import { describe, expect, it } from 'vitest';
import { PoolWindow } from '../../src/policies/pool-window.js';

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
    const window = (ok: number) => {
      for (let i = 0; i < ok; i++) w.answer(1, 'ok', true);
    };
    window(3);
    expect(w.size).toBe(4);
    window(1);
    expect(w.size).toBe(5);
    window(5);
    expect(w.size).toBe(7);
    window(7);
    expect(w.size).toBe(11);
    // Nobody waiting: serving everything there is says nothing about a larger pool.
    for (let i = 0; i < 30; i++) w.answer(2, 'ok', false);
    expect(w.size).toBe(11);
  });

  it('a rejection takes its place back and ends the start-up: then one place per four windows', () => {
    const w = new PoolWindow(4, 1, 0);
    w.answer(1, 'rejected', true);
    expect(w.size).toBe(3);
    expect(w.gate).toBe(1 + 3 + 1);
    for (let i = 0; i < 11; i++) w.answer(2, 'ok', true);
    expect(w.size).toBe(3);
    w.answer(3, 'ok', true);
    expect(w.size).toBe(4);
    for (let i = 0; i < 16; i++) w.answer(4, 'ok', true);
    expect(w.size).toBe(5);
  });

  it('never shrinks below one place', () => {
    const w = new PoolWindow(1, 1, 0);
    w.answer(1, 'rejected', true);
    w.answer(2, 'rejected', true);
    expect(w.size).toBe(1);
    expect(new PoolWindow(0, 1, 0).size).toBe(1);
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
});
