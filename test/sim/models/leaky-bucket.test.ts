import { describe, expect, it } from 'vitest';
import { LeakyBucketServer, leakyBucketBound } from '../../../src/sim/models/leaky-bucket.js';
import { drive, served } from './harness.js';

const opts = { ratePerSecond: 100, burst: 9, latency: { ms: 1 }, rejectLatency: { ms: 0 } };

describe('LeakyBucketServer (nginx limit_req)', () => {
  it('nodelay: burst + 1 pass at once, then one per 1 / rate; rejections leave the bucket alone', () => {
    const times = [...Array(12).fill(0), 5, 10, 10, 20];
    const answers = drive((sim, r, respond) => new LeakyBucketServer(sim, r, opts, respond), times);
    expect(served(answers)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15]);
    expect(answers.filter((a) => a.ok).every((a) => a.at === times[a.client]! + 1)).toBe(true);
  });

  it('delay: admitted requests are held until the bucket drains to them (excess / rate)', () => {
    const times = [0, 0, 0, 0];
    const answers = drive(
      (sim, r, respond) => new LeakyBucketServer(sim, r, { ...opts, burst: 2, mode: 'delay' }, respond),
      times,
    );
    expect(answers.map((a) => [a.client, a.ok, a.at])).toEqual([
      [3, false, 0],
      [0, true, 1],
      [1, true, 11],
      [2, true, 21],
    ]);
  });

  it('lower bound: burst + 1 at once, the rest at the rate', () => {
    expect(leakyBucketBound(100, opts)).toEqual({ totalRequests: 190, allSucceededMs: 901 });
  });
});
