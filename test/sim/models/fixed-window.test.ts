import { describe, expect, it } from 'vitest';
import { FixedWindowServer, fixedWindowBound } from '../../../src/sim/models/fixed-window.js';
import { drive, served } from './harness.js';

const opts = { limit: 3, windowMs: 100, latency: { ms: 1 }, rejectLatency: { ms: 0 } };

describe('FixedWindowServer', () => {
  it('first-request windows: the count restarts at the first request after the window ends', () => {
    const times = [50, 50, 50, 50, 149, 150, 150, 150, 150];
    const answers = drive((sim, r, respond) => new FixedWindowServer(sim, r, opts, respond), times);
    expect(served(answers)).toEqual([0, 1, 2, 5, 6, 7]);
  });

  it('epoch windows: aligned to multiples of the window', () => {
    const times = [50, 50, 50, 50, 100, 100];
    const answers = drive((sim, r, respond) => new FixedWindowServer(sim, r, { ...opts, align: 'epoch' }, respond), times);
    expect(served(answers)).toEqual([0, 1, 2, 4, 5]);
  });

  it('lower bound: limit per window', () => {
    expect(fixedWindowBound(10, opts)).toEqual({ totalRequests: 17, allSucceededMs: 301 });
  });
});
