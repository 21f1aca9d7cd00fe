import { describe, expect, it } from 'vitest';
import { ProbeSends } from '../../src/policies/probe-sends.js';

describe('ProbeSends', () => {
  it('a probe that left late was due at the later of its slot and when its caller was told to look again, plus a timer’s own slack (4 ms)', () => {
    const log = new ProbeSends();
    log.told(7, 54);
    log.left(7, 74, 50); // slot 50, told 54, left 74: due at 58
    log.told(8, 60);
    log.left(8, 90, 70); // the slot moved past the last wake-up: due at 74
    expect(log.dueOf(74)).toBe(58);
    expect(log.dueOf(90)).toBe(74);
  });

  it('a probe that left within a timer’s slack of when it was due, or before its slot, was due when it left', () => {
    const log = new ProbeSends();
    log.left(3, 12, 10); // never told to wait, its slot 2 ms past
    log.told(4, 20);
    log.left(4, 23.5, 20);
    log.left(5, 30, 35); // a slot after the send
    expect(log.dueOf(12)).toBe(12);
    expect(log.dueOf(23.5)).toBe(23.5);
    expect(log.dueOf(30)).toBe(30);
  });

  it('an answer finds its probe by the nearest send time, within half a ms; an unknown one was due when it left', () => {
    const log = new ProbeSends();
    log.told(1, 10);
    log.left(1, 30, 10);
    log.told(2, 30.2);
    log.left(2, 40.4, 30.2);
    expect(log.dueOf(30.05)).toBe(14);
    expect(log.dueOf(40.3)).toBe(34.2);
    expect(log.dueOf(31)).toBe(31);
    log.clear();
    expect(log.dueOf(30)).toBe(30);
  });

  it('keeps the latest 32 probes', () => {
    const log = new ProbeSends();
    for (let i = 0; i < 40; i++) {
      log.told(i + 1, i * 10);
      log.left(i + 1, i * 10 + 9, i * 10);
    }
    expect(log.dueOf(9)).toBe(9); // the first, forgotten
    expect(log.dueOf(399)).toBe(394);
    expect(log.dueOf(89)).toBe(84); // the 9th of 40: kept
    expect(log.dueOf(79)).toBe(79); // the 8th: forgotten
  });

  it('forgets when callers were told to look again once the search is over, not when probes left', () => {
    const log = new ProbeSends();
    log.told(1, 10);
    log.left(1, 30, 5);
    log.told(2, 20);
    log.searchOver();
    log.left(2, 40, 12); // told 20, forgotten: due at its slot, 12
    expect(log.dueOf(30)).toBe(14);
    expect(log.dueOf(40)).toBe(16);
  });

  it('probes that left together (one busy turn of the event loop): each answer finds its own, in the order they left', () => {
    const log = new ProbeSends();
    log.told(1, 10);
    log.left(1, 40, 10); // due at 14
    log.told(2, 30);
    log.left(2, 40, 30); // due at 34
    expect(log.dueOf(40)).toBe(14);
    expect(log.dueOf(40)).toBe(34);
    expect(log.dueOf(40)).toBe(40); // a third answer: no probe of its own
  });

  it('keeps the wake-ups of at most 4,096 parked callers, the longest parked dropped first; one that gives up is forgotten', () => {
    const log = new ProbeSends();
    for (let ticket = 1; ticket <= 4097; ticket++) log.told(ticket, 50);
    log.left(1, 100, 0); // its wake-up dropped: due at its slot, 0, plus the slack
    log.left(2, 200, 0); // kept: due at its wake-up, 50, plus the slack
    log.told(5000, 60);
    log.forget(5000);
    log.left(5000, 300, 0);
    expect(log.dueOf(100)).toBe(4);
    expect(log.dueOf(200)).toBe(54);
    expect(log.dueOf(300)).toBe(4);
  });
});
