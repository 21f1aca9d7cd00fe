/**
 * The root entry holds what a user of `downstream()` needs and nothing else; building blocks
 * live on subpaths (policies, hints, classify, testing, http, …). A new root value must be a
 * deliberate choice, so the list is spelled out here.
 */
import { describe, expect, it } from 'vitest';
import * as classify from '../../src/classify/index.js';
import * as hints from '../../src/hints/index.js';
import * as root from '../../src/index.js';
import * as policies from '../../src/policies/index.js';
import * as testing from '../../src/testing/index.js';

const ROOT_VALUES = [
  'AttemptTimeoutError',
  'BulkheadRejectedError',
  'CircuitOpenError',
  'ConcurrencyLimitError',
  'DOWNSTREAM_DEFAULTS',
  'DeadlineExceededError',
  'Downstream',
  'EVENTS',
  'GiveUpError',
  'HedgeLostError',
  'HttpStatusError',
  'InvalidOptionsError',
  'KindlyError',
  'background',
  'currentDeadlineScope',
  'downstream',
  'interactive',
  'isAttemptTimeoutError',
  'isBulkheadRejectedError',
  'isCircuitOpenError',
  'isConcurrencyLimitError',
  'isDeadlineExceededError',
  'isGiveUpError',
  'isHttpStatusError',
  'isInvalidOptionsError',
  'isKindlyError',
  'runWithDeadline',
];

describe('public surface', () => {
  it('the root entry exports exactly the values a downstream() user needs', () => {
    expect(Object.keys(root).sort()).toEqual([...ROOT_VALUES].sort());
  });

  it('building blocks are reachable from their subpaths', () => {
    expect(Object.keys(policies)).toEqual(
      expect.arrayContaining([
        'RetryPolicy',
        'Backoff',
        'CircuitBreaker',
        'BulkheadSlots',
        'Pacer',
        'RetryBudget',
        'BREAKER_ALLOWED',
      ]),
    );
    expect(Object.keys(hints)).toEqual(expect.arrayContaining(['parseRetryAfter', 'readWaitHint', 'EPOCH_MS_THRESHOLD']));
    expect(Object.keys(classify)).toEqual(expect.arrayContaining(['classifyError', 'classifyStatus', 'isIdempotentMethod']));
    expect(Object.keys(testing)).toEqual(expect.arrayContaining(['VirtualClock', 'SeededRandom', 'systemClock']));
  });

  it('no root value is a building-block constant', () => {
    const constants = Object.keys(root).filter((name) => /^[A-Z][A-Z0-9_]+$/.test(name));
    expect(constants.sort()).toEqual(['DOWNSTREAM_DEFAULTS', 'EVENTS']);
  });
});
