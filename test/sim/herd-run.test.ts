import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import { herdLowerBound, herdSpreadLowerBound, runHerd } from '../../src/sim/herd-run.js';
import { HERD_RETRY_OPTIONS, RETRY_HERD_STRATEGIES, retryStrategy } from '../../src/sim/herd-strategies.js';
import { spread } from '../../src/sim/summary.js';

const STANDARD_HERD = { clients: 100, capacity: 10, slotMs: 100 };
const byName = (name: string) => {
  const s = [...RETRY_HERD_STRATEGIES, ADAPTIVE_HERD_STRATEGY].find((x) => x.name === name);
  if (s === undefined) throw new Error(name);
  return s;
};

describe('runHerd', () => {
  it('fixed 1 s: 550 requests, 90 retries in one slot, all succeeded at 10.0 s', () => {
    const r = runHerd({ ...STANDARD_HERD, seed: 1 }, byName('fixed'), { recordSeries: true });
    expect(r).toMatchObject({ totalRequests: 550, peakRetriesPerSlot: 90, allSucceededMs: 10_000, succeeded: 100, gaveUp: 0 });
    // 100 at t = 0, then 90, 80, … 10 arriving one second after each slot's answers.
    const nonZero = (r.requestsPerSlot ?? []).map((n, slot) => [slot, n]).filter(([, n]) => n! > 0);
    expect(nonZero).toEqual([0, 90, 80, 70, 60, 50, 40, 30, 20, 10].map((n, k) => [k * 11, k === 0 ? 100 : n]));
  });

  it('exponential without jitter: 550 requests, 90 retries in one slot, all succeeded at 27.2 s', () => {
    const r = runHerd({ ...STANDARD_HERD, seed: 1 }, byName('exponential'));
    expect(r).toMatchObject({ totalRequests: 550, peakRetriesPerSlot: 90, allSucceededMs: 27_200 });
  });

  it('deterministic strategies do not depend on the seed', () => {
    for (const name of ['fixed', 'exponential']) {
      expect(runHerd({ ...STANDARD_HERD, seed: 1 }, byName(name))).toEqual(runHerd({ ...STANDARD_HERD, seed: 99 }, byName(name)));
      expect(byName(name).random).toBe(false);
    }
    expect(byName('full').random).toBe(true);
  });

  it('full jitter over the CLI default of 200 seeds: median ≈ 303 requests, ≈ 55 peak, ≈ 2.0 s', () => {
    const runs = Array.from({ length: 200 }, (_, i) => runHerd({ ...STANDARD_HERD, seed: 1 + i }, byName('full')));
    const total = spread(runs.map((r) => r.totalRequests));
    const peak = spread(runs.map((r) => r.peakRetriesPerSlot));
    const done = spread(runs.map((r) => r.allSucceededMs));
    expect(total.median).toBeGreaterThanOrEqual(285);
    expect(total.median).toBeLessThanOrEqual(320);
    expect(peak.median).toBeGreaterThanOrEqual(45);
    expect(peak.median).toBeLessThanOrEqual(65);
    expect(done.median).toBeGreaterThanOrEqual(1600);
    expect(done.median).toBeLessThanOrEqual(2400);
  });

  it("adaptive pacing (kindly's Pacer): ≤ 209 requests and ≤ 1.3 s", () => {
    const r = runHerd({ ...STANDARD_HERD, seed: 1 }, ADAPTIVE_HERD_STRATEGY);
    expect(r.totalRequests).toBeLessThanOrEqual(209);
    expect(r.allSucceededMs).toBeLessThanOrEqual(1300);
    expect(r.gaveUp).toBe(0);
  });

  it('the lower bound is 190 requests and 1.0 s for the standard setup', () => {
    expect(herdLowerBound(STANDARD_HERD)).toEqual({ totalRequests: 190, allSucceededMs: 1000 });
    expect(herdLowerBound({ clients: 5, capacity: 10, slotMs: 100 })).toEqual({ totalRequests: 5, allSucceededMs: 100 });
  });

  it('same seed, same run; a different seed gives a different jittered run', () => {
    const a = runHerd({ ...STANDARD_HERD, seed: 7 }, byName('full'), { recordSeries: true });
    const b = runHerd({ ...STANDARD_HERD, seed: 7 }, byName('full'), { recordSeries: true });
    const c = runHerd({ ...STANDARD_HERD, seed: 8 }, byName('full'), { recordSeries: true });
    expect(a).toEqual(b);
    expect(c.requestsPerSlot).not.toEqual(a.requestsPerSlot);
  });

  it('a client that gives up leaves "all succeeded" at Infinity', () => {
    const give = retryStrategy('three', 'three attempts', { maxAttempts: 3, backoff: { jitter: 'none' } });
    const r = runHerd({ ...STANDARD_HERD, seed: 1 }, give);
    expect(r.gaveUp).toBeGreaterThan(0);
    expect(r.succeeded + r.gaveUp).toBe(100);
    expect(r.allSucceededMs).toBe(Number.POSITIVE_INFINITY);
  });

  it('reports progress as clients finish', () => {
    const seen: number[] = [];
    runHerd({ clients: 70_000, capacity: 10_000, slotMs: 100, seed: 1 }, byName('fixed'), { onProgress: (n) => seen.push(n) });
    expect(seen).toEqual([65_536, 70_000]);
  });

  it('every strategy: everyone succeeds, never fewer requests or sooner than the lower bound', () => {
    const strategies = [...RETRY_HERD_STRATEGIES, ADAPTIVE_HERD_STRATEGY];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(50, 100),
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: strategies.length - 1 }),
        (clients, capacity, slotMs, seed, which) => {
          const setup = { clients, capacity, slotMs, seed };
          const r = runHerd(setup, strategies[which]!);
          const bound = herdLowerBound(setup);
          expect(r.succeeded).toBe(clients);
          expect(r.totalRequests).toBeGreaterThanOrEqual(bound.totalRequests);
          expect(r.allSucceededMs).toBeGreaterThanOrEqual(bound.allSucceededMs);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('uses the documented retry options (exponential ceiling min(5 s, 100 ms × 2ⁿ))', () => {
    expect(HERD_RETRY_OPTIONS.exponential.backoff).toMatchObject({ baseMs: 200, factor: 2, capMs: 5000, jitter: 'none' });
    expect(HERD_RETRY_OPTIONS.full.backoff).toMatchObject({ baseMs: 200, factor: 2, capMs: 5000, jitter: 'full' });
  });
});

describe('herdSpreadLowerBound (first tries spread over time)', () => {
  const MODELS = [
    { model: 'slot' },
    { model: 'token-bucket' },
    { model: 'fixed-window' },
    { model: 'gcra' },
    { model: 'concurrency', queue: 1 },
  ] as const;

  it('no strategy on any seed beats it, on every model and spread (the bound for t = 0 was beaten)', () => {
    const strategies = ['full', 'floor', 'decorrelated', 'adaptive'].map(byName);
    for (const server of MODELS) {
      for (const arrivalMs of [10, 120, 500]) {
        const setup = { ...STANDARD_HERD, seed: 1, arrivalMs, server };
        const bound = herdSpreadLowerBound(setup, 4);
        for (const strategy of strategies) {
          for (let seed = 1; seed <= 4; seed++) {
            const run = runHerd({ ...setup, seed }, strategy);
            const where = `${server.model} over ${arrivalMs} ms, ${strategy.name}, seed ${seed}`;
            expect({ where, requests: run.totalRequests >= bound.totalRequests }).toEqual({ where, requests: true });
            expect({ where, time: run.allSucceededMs >= bound.allSucceededMs }).toEqual({ where, time: true });
          }
        }
      }
    }
    // What the old bound got wrong: with first tries over 500 ms, adaptive pacing sends fewer
    // requests than "every first try plus one retry per client beyond capacity".
    const spread500 = { ...STANDARD_HERD, seed: 1, arrivalMs: 500 };
    expect(runHerd(spread500, byName('adaptive')).totalRequests).toBeLessThan(herdLowerBound(spread500).totalRequests);
  });

  it('is the bound for t = 0 when nothing is spread', () => {
    const setup = { ...STANDARD_HERD, seed: 3, server: { model: 'token-bucket' } } as const;
    expect(herdSpreadLowerBound(setup, 3)).toEqual(herdLowerBound(setup));
  });
});
