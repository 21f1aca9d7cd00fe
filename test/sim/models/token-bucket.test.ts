import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/options/validate.js';
import { TokenBucketServer, tokenBucketBound } from '../../../src/sim/models/token-bucket.js';
import { drive, served } from './harness.js';

const opts = { ratePerSecond: 100, burst: 10, latency: { ms: 1 }, rejectLatency: { ms: 0 } };

describe('TokenBucketServer', () => {
  it('serves the bucket at once, rejects the rest at once, then one per 10 ms', () => {
    const times = [...Array(15).fill(0), 5, 10, 10, 20];
    const answers = drive((sim, r, respond) => new TokenBucketServer(sim, r, opts, respond), times);
    expect(served(answers)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 16, 18]);
    const rejected = answers.filter((a) => !a.ok);
    expect(rejected.map((a) => a.client)).toEqual([10, 11, 12, 13, 14, 15, 17]);
    expect(rejected[0]!.at).toBe(0); // rejections answered at once
    expect(answers.find((a) => a.client === 0)!.at).toBe(1);
  });

  it('refills to the bucket size, no further', () => {
    const times = [0, 10_000, ...Array(12).fill(10_000)];
    const answers = drive((sim, r, respond) => new TokenBucketServer(sim, r, opts, respond), times);
    expect(served(answers)).toHaveLength(11); // 1 + 10 (full again), not 1 + 13
  });

  it('lower bound: burst at once, the rest at the rate', () => {
    expect(tokenBucketBound(100, opts)).toEqual({ totalRequests: 190, allSucceededMs: 901 });
  });

  it('validates every option at once', () => {
    expect(() => drive((sim, r, respond) => new TokenBucketServer(sim, r, { ratePerSecond: -1, burst: 0 }, respond), [])).toThrow(
      InvalidOptionsError,
    );
  });
});
