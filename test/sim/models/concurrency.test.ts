import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../../src/options/validate.js';
import { SeededRandom } from '../../../src/random/random.js';
import { lognormal } from '../../../src/sim/distributions.js';
import { ConcurrencyServer, concurrencyBound, workConservingFinish } from '../../../src/sim/models/concurrency.js';
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

describe('workConservingFinish: the bound on the services a pool actually ran', () => {
  it('equals the rounds of workers times the service time when services take one time', () => {
    expect(workConservingFinish(new Array(100).fill(100), new Array(100).fill(0), 10)).toBe(1000);
  });

  it('is later than the mean would say when services spread: a short worker runs out of work', () => {
    // Two workers: 50 | 50, then 50 | 250. The mean (100) says 2 rounds, 200 ms.
    expect(workConservingFinish([50, 50, 50, 250], [0, 0, 0, 0], 2)).toBe(300);
    expect(concurrencyBound(4, { concurrency: 2, service: { ms: 100 } }).allSucceededMs).toBe(200);
  });

  it('starts the j-th service no earlier than the j-th earliest arrival, in whatever order they are given', () => {
    expect(workConservingFinish([10, 10], [50, 0], 1)).toBe(60);
    expect(workConservingFinish([10, 10, 10], [0, 0, 95], 2)).toBe(105);
  });

  it('no schedule of the same services in the same order finishes sooner (random idle times, named seed)', () => {
    const random = new SeededRandom(0x626f756e); // "boun"
    let tight = 0;
    for (let round = 0; round < 300; round++) {
      const workers = 1 + Math.floor(random.next() * 8);
      const n = workers + Math.floor(random.next() * 40);
      const services = Array.from({ length: n }, () => lognormal(random, 100, 0.8));
      const arrivals = Array.from({ length: n }, () => random.next() * 300);
      const bound = workConservingFinish(services, arrivals, workers);
      // Any pool fed any way: the j-th service starts once the j-th caller has arrived and a
      // worker is free, maybe later (the caller had not sent yet), never before the one before it.
      const ready = [...arrivals].sort((a, b) => a - b);
      const free = new Array<number>(workers).fill(0);
      let last = 0;
      let finish = 0;
      for (let j = 0; j < n; j++) {
        let worker = 0;
        for (let w = 1; w < workers; w++) if ((free[w] as number) < (free[worker] as number)) worker = w;
        const idle = random.next() < 0.3 ? random.next() * 50 : 0;
        const start = Math.max(last, ready[j] as number, free[worker] as number) + idle;
        last = start;
        free[worker] = start + (services[j] as number);
        finish = Math.max(finish, start + (services[j] as number));
      }
      expect(finish, `round ${round}`).toBeGreaterThanOrEqual(bound - 1e-9);
      if (finish - bound < 1e-9) tight++;
    }
    // Rounds without idle time meet it exactly: it is the best schedule, not merely below them.
    expect(tight).toBeGreaterThan(0);
  });

  it('rejects what is not a pool and its services, saying what', () => {
    expect(() => workConservingFinish([100], [0], 0)).toThrow(InvalidOptionsError);
    expect(() => workConservingFinish([100, Number.NaN], [0, 0], 1)).toThrow(/finite number ≥ 0 ms, got NaN/);
    expect(() => workConservingFinish([100, 100], [0], 1)).toThrow(/no more service times \(2\) than arrivals \(1\)/);
    expect(() => workConservingFinish(undefined as unknown as number[], [0], 1)).toThrow(/to be arrays/);
  });
});
