import { describe, expect, it } from 'vitest';
import { GcraServer, gcraBound } from '../../../src/sim/models/gcra.js';
import { drive, served } from './harness.js';

const opts = { ratePerSecond: 100, burst: 10, latency: { ms: 1 }, rejectLatency: { ms: 0 } };

describe('GcraServer', () => {
  it('burst at once, then one per emission interval; a rejection does not move TAT', () => {
    const times = [...Array(12).fill(0), 5, 10, 10, 20, 25, 30];
    const answers = drive((sim, r, respond) => new GcraServer(sim, r, opts, respond), times);
    expect(served(answers)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 17]);
  });

  it('lower bound', () => {
    expect(gcraBound(100, opts)).toEqual({ totalRequests: 190, allSucceededMs: 901 });
  });
});
