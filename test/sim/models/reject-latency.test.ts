import { describe, expect, it } from 'vitest';
import { buildServer, type ServerModel } from '../../../src/sim/models/index.js';
import { drive } from './harness.js';

/** 15 requests at t = 0 against `model` (10 per 100 ms, burst 10): when each answer came. */
function answersAt(model: ServerModel, rejectLatencyMs?: number) {
  return drive(
    (sim, _random, respond) =>
      buildServer(
        { model, capacity: 10, slotMs: 100, latencyMs: 200, ...(rejectLatencyMs === undefined ? {} : { rejectLatencyMs }) },
        sim,
        respond,
      ),
    Array(15).fill(0),
  );
}

describe('rejectLatencyMs: a limiter in front of a slow backend', () => {
  for (const model of ['token-bucket', 'leaky-bucket', 'fixed-window', 'gcra', 'concurrency'] as const) {
    it(`${model}: rejections come back after rejectLatencyMs, successes after the latency`, () => {
      const answers = answersAt(model, 5);
      const rejected = answers.filter((a) => !a.ok);
      const served = answers.filter((a) => a.ok);
      expect(rejected).toHaveLength(5);
      for (const a of rejected) expect(a.at).toBe(5);
      for (const a of served) expect(a.at).toBeGreaterThanOrEqual(100);
    });
  }

  it('without it, rejections take the answers’ latency', () => {
    const rejected = answersAt('token-bucket').filter((a) => !a.ok);
    expect(rejected.map((a) => a.at)).toEqual(Array(5).fill(200));
  });
});
