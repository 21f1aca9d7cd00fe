import { describe, expect, it } from 'vitest';
import { attemptFits, callDeadline } from '../../src/orchestration/deadline.js';

describe('callDeadline', () => {
  it('is the earliest of the inherited deadline, the caller’s and start + timeout; Infinity without any', () => {
    expect(callDeadline(100, undefined, undefined, undefined)).toBe(Number.POSITIVE_INFINITY);
    expect(callDeadline(100, 900, undefined, undefined)).toBe(900);
    expect(callDeadline(100, 900, 500, undefined)).toBe(500);
    expect(callDeadline(100, 900, 500, 200)).toBe(300);
    expect(callDeadline(100, 250, 500, 200)).toBe(250);
  });
});

describe('attemptFits', () => {
  it('needs minAttemptTimeMs left and a deadline not yet passed', () => {
    expect(attemptFits(Number.POSITIVE_INFINITY, 1e12, 1)).toBe(true);
    expect(attemptFits(100, 99, 1)).toBe(true);
    expect(attemptFits(100, 99.5, 1)).toBe(false);
    expect(attemptFits(100, 100, 0)).toBe(false);
  });
});
