import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { SeededRandom } from '../../src/random/random.js';
import { downstream } from '../../src/runtime/downstream.js';
import { Simulation } from '../../src/sim/engine.js';
import { SimDownstream, type SimDownstreamOptions } from '../../src/sim/sim-downstream.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

/**
 * SimDownstream against the real downstream() on a VirtualClock with the latency policies: a
 * bulkhead with a line, hedging, attempt timeouts (fixed or derived), the adaptive limit with a
 * line, retries with jitter and the retry budget. The callee is a function of (call, attempt,
 * hedge): how long that attempt takes and how it ends (success, 503, or no answer), the same
 * for both drivers; the runtime's operations honour their abort signal. They must agree
 * attempt by attempt: every send at the same instant, every call ending the same way at the
 * same instant, the same hedges and hedge wins.
 */
const FAILED: Classification = Object.freeze({ outcome: 'failed', retryable: true, status: 503 });

/** A deterministic draw in [0, 1) from the attempt's coordinates. */
function unit(seed: number, call: number, attempt: number, hedge: number): number {
  let h = (seed * 0x9e3779b1) ^ (call * 0x85ebca6b) ^ (attempt * 0xc2b2ae35) ^ (hedge * 0x27d4eb2f);
  h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
  h = Math.imul(h ^ (h >>> 12), 0x297a2d39);
  return ((h ^ (h >>> 15)) >>> 0) / 2 ** 32;
}

/** The callee: latency and answer of one attempt. */
function answerOf(seed: number, call: number, attempt: number, hedge: number): { ms: number; how: 'ok' | 'fail' | 'hang' } {
  const u = unit(seed, call, attempt, hedge);
  const ms = 5 + 40 * unit(seed + 1, call, attempt, hedge) + (u < 0.15 ? 150 : 0);
  return { ms, how: u > 0.97 ? 'hang' : u > 0.85 ? 'fail' : 'ok' };
}

const CALLS = 300;
const arrivalOf = (call: number) => call * 4.37;

type Send = [call: number, attempt: number, hedge: number, atMs: number];
type End = [call: number, ok: boolean, reason: string | undefined, atMs: number];

function viaSimulator(seed: number, options: SimDownstreamOptions) {
  const sim = new Simulation({ seed });
  const sends: Send[] = [];
  const ends: End[] = [];
  const answers: { call: number; attempt: number; hedge: number; failure: Classification | undefined }[] = [];
  const deliver = sim.on((i) => {
    const a = answers[i]!;
    api.answer(a.call, sim.now, a.failure, a.hedge, a.attempt);
  });
  const api: SimDownstream = new SimDownstream(
    sim,
    'callee',
    options,
    {
      send: (call, attempt, now, hedge) => {
        sends.push([call, attempt, hedge, now]);
        const a = answerOf(seed, call, attempt, hedge);
        if (a.how === 'hang') return;
        answers.push({ call, attempt, hedge, failure: a.how === 'ok' ? undefined : FAILED });
        sim.after(a.ms, deliver, answers.length - 1);
      },
    },
    (end) => ends.push([end.call, end.ok, end.reason, end.atMs]),
  );
  const start = sim.on((call, now) => api.start(call, now));
  for (let c = 0; c < CALLS; c++) sim.at(arrivalOf(c), start, c);
  sim.run();
  return { sends, ends: ends.sort((a, b) => a[0] - b[0]), hedges: api.hedgesSent, hedgeWins: api.hedgeWins };
}

async function viaDownstream(seed: number, options: SimDownstreamOptions) {
  const clock = new VirtualClock({ startMs: 0 });
  const failure = new Error('503');
  const api = downstream('callee', {
    ...options,
    clock,
    random: new SeededRandom(seed),
    classify: (error) => (error === failure ? FAILED : undefined),
  });
  const sends: Send[] = [];
  const ends: End[] = [];
  for (let c = 0; c < CALLS; c++) {
    const call = c;
    const sentPerAttempt = new Map<number, number>();
    const operation = (context: { attempt: number; signal: AbortSignal }) => {
      const hedge = sentPerAttempt.get(context.attempt) ?? 0;
      sentPerAttempt.set(context.attempt, hedge + 1);
      sends.push([call, context.attempt, hedge, clock.monotonic()]);
      const a = answerOf(seed, call, context.attempt, hedge);
      const signal = context.signal;
      return new Promise<void>((resolve, reject) => {
        const cancel = a.how === 'hang' ? () => {} : clock.schedule(a.ms, () => (a.how === 'ok' ? resolve() : reject(failure)));
        signal.addEventListener(
          'abort',
          () => {
            cancel();
            reject(signal.reason);
          },
          { once: true },
        );
      });
    };
    clock.schedule(
      0,
      () => {
        api.call(operation).then(
          () => ends.push([call, true, undefined, clock.monotonic()]),
          (error: { reason?: string }) => ends.push([call, false, error.reason, clock.monotonic()]),
        );
      },
      arrivalOf(c),
    );
  }
  await clock.runAll(1_000_000);
  const stats = api.stats();
  return { sends, ends: ends.sort((a, b) => a[0] - b[0]), hedges: stats.hedges, hedgeWins: stats.hedgeWins };
}

const RETRY = { maxAttempts: 3, backoff: { shape: 'exponential', baseMs: 20, capMs: 200, jitter: 'full' } } as const;

describe('SimDownstream agrees with downstream() on a VirtualClock (latency policies)', () => {
  const cases: [string, SimDownstreamOptions][] = [
    [
      'bulkhead with a line, hedging, fixed attempt timeouts',
      {
        retry: RETRY,
        attemptTimeoutMs: 120,
        bulkhead: { maxConcurrent: 6, maxQueue: 2, queueTimeoutMs: 15 },
        hedging: { delayMs: 25, maxExtraLoad: 0.3 },
      },
    ],
    [
      'adaptive limit with a line, derived timeouts, two hedges at a learned delay, a total timeout',
      {
        retry: RETRY,
        totalTimeoutMs: 400,
        attemptTimeoutMs: { percentile: 0.9, factor: 1.5, floorMs: 20, ceilingMs: 300, minSamples: 10 },
        concurrency: { initialLimit: 8, probeConcurrency: 4, windowSamples: 20, maxQueue: 5, queueTimeoutMs: 40 },
        hedging: { percentile: 0.8, minSamples: 10, maxHedges: 2, maxExtraLoad: 0.4 },
      },
    ],
  ];
  for (const [name, options] of cases) {
    for (const seed of [1, 2]) {
      it(`${name}, seed ${seed}: the same sends at the same instants, the same ends`, async () => {
        const sim = viaSimulator(seed, options);
        const real = await viaDownstream(seed, options);
        expect(real.sends.length).toBe(sim.sends.length);
        expect(real.sends).toEqual(sim.sends);
        expect(real.ends).toEqual(sim.ends);
        expect([real.hedges, real.hedgeWins]).toEqual([sim.hedges, sim.hedgeWins]);
        // Not trivial: retries, hedges that won and lost, calls that failed.
        expect(sim.sends.some(([, attempt]) => attempt > 1)).toBe(true);
        expect(sim.hedgeWins).toBeGreaterThan(0);
        expect(sim.hedges).toBeGreaterThan(sim.hedgeWins);
        const reasons = new Set(sim.ends.map(([, , reason]) => reason));
        // Some gave up after their attempts, and some were turned away by a full line or a wait too long.
        expect(reasons.has('max-attempts')).toBe(true);
        expect(reasons.has('rejected')).toBe(true);
      });
    }
  }
});
