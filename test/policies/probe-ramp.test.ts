import { describe, expect, it } from 'vitest';
import { ProbeRamp } from '../../src/policies/probe-ramp.js';
import { SeededRandom } from '../../src/random/random.js';

/**
 * Drives a ramp on virtual time against a FIFO callee with `workers` workers and log-normal
 * service (median 100 ms, σ 0.3, named seed): as many attempts in flight as the ramp's level
 * (or `callers` if fewer). Returns the ramp and the latencies it trusted.
 */
function drive(workers: number, options: { callers?: number; seed?: number; untilMs?: number } = {}) {
  const random = new SeededRandom(options.seed ?? 1);
  const service = () => {
    const u1 = random.next() || 1e-12;
    const u2 = random.next();
    return 100 * Math.exp(0.3 * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2));
  };
  const trusted: number[] = [];
  const ramp = new ProbeRamp(3, 1_000, 0.1, 0, (l) => trusted.push(l));
  const workerFreeAt = new Float64Array(workers);
  const inFlight: { start: number; end: number }[] = [];
  const levels: number[] = [];
  for (let t = 0; t < (options.untilMs ?? 3_000); t++) {
    for (let i = inFlight.length - 1; i >= 0; i--) {
      const a = inFlight[i]!;
      if (a.end <= t) {
        inFlight.splice(i, 1);
        ramp.answer(a.end - a.start, a.start, t);
      }
    }
    while (inFlight.length < Math.min(ramp.level, options.callers ?? Number.POSITIVE_INFINITY)) {
      // FIFO: the attempt takes the worker that frees first.
      let w = 0;
      for (let i = 1; i < workers; i++) if (workerFreeAt[i]! < workerFreeAt[w]!) w = i;
      const begin = Math.max(t, workerFreeAt[w]!);
      const end = begin + service();
      workerFreeAt[w] = end;
      inFlight.push({ start: t, end });
      ramp.inFlight(inFlight.length);
    }
    levels.push(ramp.level);
  }
  return { ramp, trusted, levels };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;

describe('ProbeRamp (slow start of the first no-load measurement)', () => {
  it('doubles while a large callee answers in the same time, and trusts only latencies measured below its capacity', () => {
    for (const seed of [1, 2, 3]) {
      const { ramp, trusted, levels } = drive(40, { seed });
      expect(Math.max(...levels), `seed ${seed}`).toBeGreaterThanOrEqual(24);
      expect(ramp.highestFlatLevel, `seed ${seed}`).toBeGreaterThanOrEqual(12);
      expect(ramp.highestFlatLevel, `seed ${seed}`).toBeLessThanOrEqual(40);
      // 50 latencies within the first ~0.6 s instead of 50 / 3 × 100 ms ≈ 1.7 s.
      expect(trusted.length, `seed ${seed}`).toBeGreaterThanOrEqual(50);
      // No queued latency among them: their median is the service median.
      expect(median(trusted), `seed ${seed}`).toBeGreaterThan(90);
      expect(median(trusted), `seed ${seed}`).toBeLessThan(112);
    }
  });

  it('a callee of 4 workers: the queued rounds are dropped, the level falls back, the median stays the service time', () => {
    for (const seed of [1, 2, 3]) {
      const { ramp, trusted, levels } = drive(4, { seed });
      expect(ramp.highestFlatLevel, `seed ${seed}`).toBeLessThanOrEqual(6);
      expect(levels.at(-1), `seed ${seed}`).toBeLessThanOrEqual(6);
      expect(median(trusted), `seed ${seed}`).toBeLessThan(115);
    }
  });

  it('stops doubling at the concurrency the callers actually use', () => {
    const { ramp, levels } = drive(40, { callers: 5 });
    expect(Math.max(...levels)).toBeLessThanOrEqual(6);
    expect(ramp.highestFlatLevel).toBeLessThanOrEqual(6);
  });
});
