import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { Simulation } from '../../src/sim/engine.js';
import { type SimCallEnd, SimDownstream, type SimDownstreamOptions } from '../../src/sim/sim-downstream.js';

const FAILED: Classification = { outcome: 'failed', retryable: true, status: 503 };

/** A callee whose attempt (call, attempt, hedge) answers `script` after its ms (undefined: never). */
function harness(
  options: SimDownstreamOptions,
  script: (call: number, attempt: number, hedge: number) => { ms: number; fail?: boolean } | undefined,
) {
  const sim = new Simulation({ seed: 1 });
  const sent: string[] = [];
  const ends: SimCallEnd[] = [];
  const answers: [number, number, number, boolean][] = [];
  const deliver = sim.on((i) => {
    const [call, attempt, hedge, fail] = answers[i]!;
    api.answer(call, sim.now, fail ? FAILED : undefined, hedge, attempt);
  });
  const api: SimDownstream = new SimDownstream(
    sim,
    'callee',
    options,
    {
      send(call, attempt, now, hedge) {
        sent.push(`${call}.${attempt}${hedge > 0 ? `h${hedge}` : ''}@${now}`);
        const a = script(call, attempt, hedge);
        if (a === undefined) return;
        answers.push([call, attempt, hedge, a.fail === true]);
        sim.after(a.ms, deliver, answers.length - 1);
      },
    },
    (end) => ends.push(end),
  );
  const start = sim.on((call, now) => api.start(call, now));
  return { sim, api, sent, ends, startAt: (call: number, at: number) => sim.at(at, start, call) };
}

describe('SimDownstream: the latency policies on virtual time', () => {
  it('a bulkhead with a line: the waiter runs when a slot frees; beyond the line, rejected at admission', () => {
    const h = harness({ retry: false, budget: false, bulkhead: { maxConcurrent: 1, maxQueue: 1 } }, () => ({ ms: 10 }));
    for (const c of [0, 1, 2]) h.startAt(c, 0);
    h.sim.run();
    expect(h.sent).toEqual(['0.1@0', '1.1@10']);
    expect(h.ends.map((e) => [e.call, e.ok, e.reason, e.refused, e.atMs])).toEqual([
      [2, false, 'rejected', true, 0],
      [0, true, undefined, false, 10],
      [1, true, undefined, false, 20],
    ]);
  });

  it('the adaptive limit refuses beyond its limit (reason rejected) without a line', () => {
    const h = harness({ retry: false, budget: false, concurrency: { initialLimit: 2, probeConcurrency: 2 } }, () => ({
      ms: 10,
    }));
    for (const c of [0, 1, 2]) h.startAt(c, 0);
    h.sim.run();
    expect(h.sent).toEqual(['0.1@0', '1.1@0']);
    expect(h.ends.find((e) => e.call === 2)).toMatchObject({ ok: false, reason: 'rejected', refused: true });
  });

  it('a hedge after the delay wins; the slow attempt is abandoned and its late answer dropped', () => {
    const h = harness({ retry: false, hedging: { delayMs: 20, maxExtraLoad: 1 } }, (_c, _a, hedge) => ({
      ms: hedge === 0 ? 100 : 5,
    }));
    h.startAt(0, 0);
    h.sim.run();
    expect(h.sent).toEqual(['0.1@0', '0.1h1@20']);
    expect(h.ends).toEqual([{ call: 0, ok: true, reason: undefined, attempts: 1, refused: false, atMs: 25 }]);
    expect([h.api.hedgesSent, h.api.hedgeWins]).toEqual([1, 1]);
  });

  it('a failure waits for the hedge still running; when every member failed, the retry loop decides', () => {
    const h = harness(
      { retry: { maxAttempts: 2, backoff: { jitter: 'none', baseMs: 50 } }, hedging: { delayMs: 20, maxExtraLoad: 1 } },
      (_c, attempt, hedge) => (attempt === 1 ? { ms: hedge === 0 ? 30 : 40, fail: true } : { ms: 5 }),
    );
    h.startAt(0, 0);
    h.sim.run();
    // The first fails at 30, its hedge at 60: the attempt fails at 60, the retry leaves at 110.
    expect(h.sent).toEqual(['0.1@0', '0.1h1@20', '0.2@110']);
    expect(h.ends).toEqual([{ call: 0, ok: true, reason: undefined, attempts: 2, refused: false, atMs: 115 }]);
    expect(h.api.hedgeWins).toBe(0);
  });

  it('each member times out on its own: the attempt at 50, its hedge at 60, and only then does the attempt fail', () => {
    const h = harness({ retry: false, attemptTimeoutMs: 50, hedging: { delayMs: 10, maxExtraLoad: 1 } }, () => undefined);
    h.startAt(0, 0);
    h.sim.run();
    expect(h.sent).toEqual(['0.1@0', '0.1h1@10']);
    expect(h.ends).toEqual([{ call: 0, ok: false, reason: 'max-attempts', attempts: 1, refused: false, atMs: 60 }]);
  });
});
