import { describe, expect, it } from 'vitest';
import { ConcurrencyServer, concurrencyBound } from '../../../src/sim/models/concurrency.js';
import { drive } from './harness.js';

describe('ConcurrencyServer', () => {
  it('workers serve at once, the queue waits (latency grows with load), 503 at once when full', () => {
    const opts = { concurrency: 2, queue: 2, service: { ms: 100 }, rejectLatency: { ms: 0 } };
    const answers = drive((sim, r, respond) => new ConcurrencyServer(sim, r, opts, respond), [0, 0, 0, 0, 0, 150]);
    expect(answers.map((a) => [a.client, a.ok, a.at])).toEqual([
      [4, false, 0],
      [0, true, 100],
      [1, true, 100],
      [2, true, 200],
      [3, true, 200],
      [5, true, 300],
    ]);
  });

  it('random service times draw from the given stream: same seed, same answers', () => {
    const opts = { concurrency: 3, queue: 10, service: { ms: 50, distribution: 'lognormal' as const } };
    const a = drive((sim, r, respond) => new ConcurrencyServer(sim, r, opts, respond), Array(10).fill(0));
    const b = drive((sim, r, respond) => new ConcurrencyServer(sim, r, opts, respond), Array(10).fill(0));
    expect(a).toEqual(b);
    expect(new Set(a.map((x) => x.at)).size).toBeGreaterThan(5);
  });

  it('measured service times: each request holds its worker for one of them', () => {
    const opts = { concurrency: 1, queue: 10, service: { ms: 150, samples: [100, 200] }, rejectLatency: { ms: 0 } };
    const answers = drive((sim, r, respond) => new ConcurrencyServer(sim, r, opts, respond), Array(8).fill(0));
    const gaps = answers.map((a, i) => a.at - (i === 0 ? 0 : answers[i - 1]!.at));
    expect(new Set(gaps)).toEqual(new Set([100, 200]));
  });

  it('rejects bad measured samples, every problem at once', () => {
    const build = (samples: number[]) => () =>
      drive((sim, r, respond) => new ConcurrencyServer(sim, r, { concurrency: 1, service: { ms: 1, samples } }, respond), [0]);
    expect(build([])).toThrow(/service\.samples.*empty/);
    expect(build([5, -1, Number.NaN])).toThrow(/every `service\.samples` entry.*-1/);
  });

  it('a served answer takes `latency` back to its caller after the service ends', () => {
    const opts = { concurrency: 1, queue: 1, service: { ms: 100 }, rejectLatency: { ms: 1 }, latency: { ms: 1 } };
    const answers = drive((sim, r, respond) => new ConcurrencyServer(sim, r, opts, respond), [0, 0, 0]);
    expect(answers.map((a) => [a.client, a.ok, a.at])).toEqual([
      [2, false, 1],
      [0, true, 101],
      [1, true, 201],
    ]);
    expect(concurrencyBound(3, opts).allSucceededMs).toBe(301);
  });

  it('lower bound', () => {
    expect(concurrencyBound(100, { concurrency: 10, service: { ms: 100 } })).toEqual({
      totalRequests: 190,
      allSucceededMs: 1000,
    });
  });
});
