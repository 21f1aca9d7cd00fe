import { describe, expect, it } from 'vitest';
import { SendLog } from '../../src/policies/send-log.js';

describe('the log of a pacer’s recent sends', () => {
  it('counts the sends within a span, both ends included', () => {
    const log = new SendLog();
    for (const t of [10, 20, 20, 30, 45]) log.record(t, 0);
    expect(log.countBetween(20, 30)).toBe(3);
    expect(log.countBetween(20.5, 44.9)).toBe(1);
    expect(log.countBetween(50, 60)).toBe(0);
  });

  it('drops what is older than the horizon given at each record, however many were sent', () => {
    const log = new SendLog();
    // 10,000 sends 1 ms apart, each keeping the last 100 ms: what is counted stays right
    // through the compactions.
    for (let t = 0; t < 10_000; t++) log.record(t, t - 100);
    expect(log.countBetween(0, 10_000)).toBe(101);
    expect(log.countBetween(9_950, 9_999)).toBe(50);
  });

  it('forgets everything when cleared', () => {
    const log = new SendLog();
    log.record(5, 0);
    log.clear();
    expect(log.countBetween(0, 10)).toBe(0);
    log.record(7, 0);
    expect(log.countBetween(0, 10)).toBe(1);
  });
});
