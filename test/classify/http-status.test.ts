import { describe, expect, it } from 'vitest';
import { classifyStatus, DEFAULT_RETRYABLE_STATUSES, isInFlightConflict } from '../../src/classify/http-status.js';

describe('classifyStatus', () => {
  it('pins the default retryable statuses', () => {
    expect(DEFAULT_RETRYABLE_STATUSES).toEqual([408, 429, 500, 502, 503, 504]);
    expect(Object.isFrozen(DEFAULT_RETRYABLE_STATUSES)).toBe(true);
  });

  it.each([
    // status, outcome, retryable, throttled
    [400, 'failed', false, false],
    [401, 'failed', false, false],
    [403, 'failed', false, false],
    [404, 'failed', false, false],
    [408, 'failed', true, false],
    [409, 'failed', false, false],
    [410, 'failed', false, false],
    [422, 'failed', false, false],
    [425, 'failed', false, false],
    [429, 'failed', true, true],
    [451, 'failed', false, false],
    [499, 'failed', false, false],
    [500, 'unknown', true, false],
    [501, 'failed', false, false],
    [502, 'unknown', true, false],
    [503, 'failed', true, true],
    [504, 'unknown', true, false],
    [505, 'failed', false, false],
    [507, 'unknown', false, false],
    [511, 'unknown', false, false],
    [599, 'unknown', false, false],
    [600, 'unknown', false, false],
  ] as const)('%i ⇒ %s, retryable %s, throttled %s', (status, outcome, retryable, throttled) => {
    const classification = classifyStatus(status);
    expect(classification).toEqual({ outcome, retryable, status, ...(throttled ? { throttled: true } : {}) });
  });

  it.each([100, 200, 204, 301, 304, 399, 0, -1, 1000, 429.5, Number.NaN, Number.POSITIVE_INFINITY])(
    '%s is not a failure status ⇒ undefined',
    (status) => {
      expect(classifyStatus(status)).toBeUndefined();
    },
  );

  it('a custom retryable set replaces the default (array or Set)', () => {
    expect(classifyStatus(409, { retryableStatuses: [409] })?.retryable).toBe(true);
    expect(classifyStatus(500, { retryableStatuses: [409] })?.retryable).toBe(false);
    expect(classifyStatus(500, { retryableStatuses: new Set([500]) })?.retryable).toBe(true);
    expect(classifyStatus(503, { retryableStatuses: [] })).toEqual({
      outcome: 'failed',
      retryable: false,
      status: 503,
      throttled: true,
    });
  });
});

describe('isInFlightConflict', () => {
  it('is a 409 with an idempotency key, nothing else', () => {
    expect(isInFlightConflict(409, true)).toBe(true);
    expect(isInFlightConflict(409, false)).toBe(false);
    expect(isInFlightConflict(422, true)).toBe(false);
  });
});
