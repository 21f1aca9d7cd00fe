import { describe, expect, it } from 'vitest';
import { MAX_HINT_MS } from '../../src/hints/hint-ms.js';
import {
  EPOCH_MS_THRESHOLD,
  EPOCH_SECONDS_THRESHOLD,
  isGrpcPushbackStop,
  isRateLimitExhausted,
  readGrpcRetryPushback,
  readRateLimit,
  readRateLimitRemaining,
  readRateLimitReset,
  readXRateLimitReset,
} from '../../src/hints/rate-limit-fields.js';

const NOW = Date.UTC(2026, 0, 15, 12, 0, 0);
const NOW_S = NOW / 1000;

describe('readRateLimit (current draft: List of policies)', () => {
  it('an exhausted policy (r=0) waits t seconds; string or token names', () => {
    expect(readRateLimit('"default";r=0;t=10')).toBe(10_000);
    expect(readRateLimit('default;r=0;t=10')).toBe(10_000);
    expect(readRateLimit('"default";t=10;r=0')).toBe(10_000);
  });

  it('a policy with quota left is not a wait', () => {
    expect(readRateLimit('"default";r=50;t=30')).toBeUndefined();
    expect(readRateLimit('"default";r=1;t=30')).toBeUndefined();
  });

  it('several exhausted policies: the longest reset wins; live ones are ignored', () => {
    expect(readRateLimit('"burst";r=0;t=5, "daily";r=0;t=3600, "hourly";r=10;t=99999')).toBe(3_600_000);
  });

  it('an exhausted item without t takes the same-named policy window w, only when a policy is given', () => {
    expect(readRateLimit('"day";r=0')).toBeUndefined();
    expect(readRateLimit('"day";r=0', '"burst";q=10;w=1, "day";q=1000;w=86400')).toBe(86_400_000);
    expect(readRateLimit('"day";r=0', '"other";q=10;w=1')).toBeUndefined();
    expect(readRateLimit('"day";r=0', 'not a ( valid list')).toBeUndefined();
    // A t in the field beats the policy's window.
    expect(readRateLimit('"day";r=0;t=7', '"day";q=1000;w=86400')).toBe(7_000);
  });

  it('a policy name given twice: the first one’s window counts; items of many names each find theirs', () => {
    expect(readRateLimit('"day";r=0', '"day";q=1000;w=86400, "day";q=5;w=1')).toBe(86_400_000);
    expect(readRateLimit('"day";r=0', '"day";q=1000, "day";q=5;w=1')).toBeUndefined();
    // Thousands of names on both sides (a hostile server's fields): the last item matches.
    const names = Array.from({ length: 4_000 }, (_, i) => `"n${i}"`);
    const rateLimit = names.map((n) => `${n};r=0`).join(', ');
    const policy = `${names
      .slice(1)
      .map((n) => `${n};q=1;w=1`)
      .join(', ')}, "n0";q=1;w=60`;
    expect(readRateLimit(rateLimit, policy)).toBe(60_000);
  });

  it('ignores negative or non-integer resets and remaining counts', () => {
    expect(readRateLimit('"d";r=0;t=-5')).toBeUndefined();
    expect(readRateLimit('"d";r=0;t=1.5')).toBeUndefined();
    expect(readRateLimit('"d";r=0.0;t=5')).toBeUndefined();
    expect(readRateLimit('"d";r="0";t=5')).toBeUndefined();
  });

  it('rejects a field that is not a valid structured field', () => {
    expect(readRateLimit('"default";r=0;t=10,')).toBeUndefined();
    expect(readRateLimit('"default" ;r=0;t=10')).toBeUndefined();
    expect(readRateLimit('')).toBeUndefined();
    expect(readRateLimit('garbage here')).toBeUndefined();
  });

  it('caps a 15-digit reset instead of overflowing', () => {
    expect(readRateLimit('"d";r=0;t=999999999999999')).toBe(MAX_HINT_MS);
  });
});

describe('readRateLimit (earlier drafts: Dictionary)', () => {
  it('remaining=0 waits reset seconds', () => {
    expect(readRateLimit('limit=100, remaining=0, reset=10')).toBe(10_000);
    expect(readRateLimit('remaining=0,reset=0')).toBe(0);
  });

  it('remaining above 0, a missing reset or a negative one is not a wait', () => {
    expect(readRateLimit('limit=100, remaining=5, reset=10')).toBeUndefined();
    expect(readRateLimit('limit=100, remaining=0')).toBeUndefined();
    expect(readRateLimit('limit=100, remaining=0, reset=-1')).toBeUndefined();
    expect(readRateLimit('limit=100, reset=10')).toBeUndefined();
  });
});

describe('isRateLimitExhausted', () => {
  it('is true for r=0 or remaining=0, even without a reset', () => {
    expect(isRateLimitExhausted('"d";r=0')).toBe(true);
    expect(isRateLimitExhausted('"a";r=3, "b";r=0;t=1')).toBe(true);
    expect(isRateLimitExhausted('limit=10, remaining=0')).toBe(true);
    expect(isRateLimitExhausted('"d";r=3;t=1')).toBe(false);
    expect(isRateLimitExhausted('limit=10, remaining=2')).toBe(false);
    expect(isRateLimitExhausted('nonsense,')).toBe(false);
  });
});

describe('readRateLimitReset / readXRateLimitReset', () => {
  it('small numbers are delay-seconds', () => {
    expect(readRateLimitReset('30', NOW)).toBe(30_000);
    expect(readXRateLimitReset('30', NOW)).toBe(30_000);
    expect(readXRateLimitReset(String(EPOCH_SECONDS_THRESHOLD - 1), NOW)).toBe((EPOCH_SECONDS_THRESHOLD - 1) * 1000);
  });

  it('numbers ≥ 1e9 are epoch seconds; ≥ 1e12 epoch ms; past ⇒ 0', () => {
    expect(readXRateLimitReset(String(NOW_S + 45), NOW)).toBe(45_000);
    expect(readRateLimitReset(String(NOW_S + 45), NOW)).toBe(45_000);
    expect(readXRateLimitReset(String(NOW + 1_500), NOW)).toBe(1_500);
    expect(readXRateLimitReset(String(NOW_S - 10), NOW)).toBe(0);
    expect(readXRateLimitReset(String(EPOCH_SECONDS_THRESHOLD), NOW)).toBe(0);
    expect(readXRateLimitReset(String(EPOCH_MS_THRESHOLD), NOW)).toBe(0);
  });

  it('X-RateLimit-Reset accepts a fraction (Discord), rounded up; RateLimit-Reset does not', () => {
    expect(readXRateLimitReset(`${NOW_S + 1}.2501`, NOW)).toBe(1_251);
    expect(readXRateLimitReset('1.5', NOW)).toBe(1_500);
    expect(readRateLimitReset('1.5', NOW)).toBeUndefined();
  });

  it('rejects garbage and negatives; epoch values need a finite now', () => {
    for (const bad of ['', '-5', 'soon', '5s', '1,2', '+3']) {
      expect(readRateLimitReset(bad, NOW)).toBeUndefined();
      expect(readXRateLimitReset(bad, NOW)).toBeUndefined();
    }
    expect(readXRateLimitReset(String(NOW_S), Number.NaN)).toBeUndefined();
    expect(readXRateLimitReset('5', Number.NaN)).toBe(5_000);
  });
});

describe('readRateLimitRemaining', () => {
  it('reads a non-negative integer', () => {
    expect(readRateLimitRemaining('0')).toBe(0);
    expect(readRateLimitRemaining(' 42 ')).toBe(42);
    expect(readRateLimitRemaining('9'.repeat(30))).toBe(MAX_HINT_MS);
    for (const bad of ['', '-1', '0.5', 'none', '0, 1']) expect(readRateLimitRemaining(bad)).toBeUndefined();
  });
});

describe('grpc-retry-pushback-ms', () => {
  it('a non-negative integer is a delay in ms', () => {
    expect(readGrpcRetryPushback('0')).toBe(0);
    expect(readGrpcRetryPushback('250')).toBe(250);
    expect(readGrpcRetryPushback('9'.repeat(40))).toBe(MAX_HINT_MS);
  });

  it('a negative one is a stop, not a wait; garbage is neither', () => {
    expect(readGrpcRetryPushback('-1')).toBeUndefined();
    expect(isGrpcPushbackStop('-1')).toBe(true);
    expect(isGrpcPushbackStop(' -250 ')).toBe(true);
    for (const value of ['', '-', '--1', '-1.5', 'abc', '1', '0', '-0x1', '-0', '-000']) {
      expect(isGrpcPushbackStop(value), value).toBe(false);
    }
    // "-0" is the integer zero: retry at once, not a stop.
    expect(readGrpcRetryPushback('-0')).toBe(0);
    for (const bad of ['', '1.5', 'abc', '+1']) expect(readGrpcRetryPushback(bad)).toBeUndefined();
  });
});
