import { describe, expect, it } from 'vitest';
import { HedgeLostError, type HedgeMember, runHedged } from '../../src/runtime/hedged-attempt.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

/** A member answering `value` (or failing with `error`) after `ms`, recording how it was aborted. */
function member(clock: VirtualClock, ms: number, answer: { value: string } | { error: string }, log: string[], name: string) {
  let abortWith: unknown;
  const promise = new Promise<string>((resolve, reject) => {
    clock.schedule(ms, () => ('value' in answer ? resolve(answer.value) : reject(new Error(answer.error))));
  });
  const m: HedgeMember<string> = {
    promise,
    abort: (reason) => {
      abortWith = reason;
      log.push(`${name} aborted: ${reason instanceof HedgeLostError ? 'lost' : String(reason)}`);
    },
  };
  return { m, aborted: () => abortWith };
}

describe('runHedged', () => {
  it('a slow first attempt is hedged after the delay; the hedge wins and the first is aborted as lost', async () => {
    const clock = new VirtualClock({ startMs: 0 });
    const log: string[] = [];
    const discarded: unknown[] = [];
    const first = member(clock, 100, { value: 'first' }, log, 'first');
    const result = runHedged(first.m, {
      clock,
      delayMs: 20,
      maxHedges: 1,
      discard: (a) => discarded.push(a),
      startHedge: (n) => {
        log.push(`hedge ${n} at ${clock.monotonic()}`);
        return member(clock, 10, { value: 'hedge' }, log, 'hedge').m;
      },
    });
    await clock.runAll();
    expect(await result).toEqual({ value: 'hedge', winner: 1 });
    expect(log).toEqual(['hedge 1 at 20', 'first aborted: lost']);
    // The first's own answer came after the winner's: discarded, not the call's.
    expect(discarded).toEqual([{ value: 'first' }]);
  });

  it('no hedge once the first answered; at most maxHedges; a refusal ends hedging', async () => {
    const clock = new VirtualClock({ startMs: 0 });
    const log: string[] = [];
    const fast = runHedged(member(clock, 5, { value: 'fast' }, log, 'first').m, {
      clock,
      delayMs: 20,
      maxHedges: 3,
      startHedge: (n) => {
        log.push(`hedge ${n}`);
        return undefined;
      },
    });
    await clock.runAll();
    expect(await fast).toEqual({ value: 'fast', winner: 0 });
    expect(log).toEqual([]);

    const starts: number[] = [];
    const capped = runHedged(member(clock, 1_000, { value: 'slow' }, log, 'first').m, {
      clock,
      delayMs: 20,
      maxHedges: 2,
      startHedge: (n) => {
        starts.push(n);
        return member(clock, 1_000, { value: `hedge ${n}` }, log, `hedge ${n}`).m;
      },
    });
    await clock.runAll();
    expect((await capped).winner).toBe(0);
    expect(starts).toEqual([1, 2]);

    const refusedAt: number[] = [];
    const refused = runHedged(member(clock, 1_000, { value: 'slow' }, log, 'first').m, {
      clock,
      delayMs: 20,
      maxHedges: 3,
      startHedge: () => {
        refusedAt.push(clock.monotonic());
        return undefined;
      },
    });
    await clock.runAll();
    expect((await refused).winner).toBe(0);
    expect(refusedAt).toHaveLength(1);
  });

  it('a failure waits for the others; when every member failed, the group fails with the last', async () => {
    const clock = new VirtualClock({ startMs: 0 });
    const log: string[] = [];
    const discarded: unknown[] = [];
    const group = runHedged(member(clock, 30, { error: 'first failed' }, log, 'first').m, {
      clock,
      delayMs: 10,
      maxHedges: 1,
      discard: (a) => discarded.push(a),
      startHedge: () => member(clock, 40, { error: 'hedge failed' }, log, 'hedge').m,
    });
    const settled = group.then(
      () => 'resolved',
      (e: Error) => e.message,
    );
    await clock.runAll();
    expect(await settled).toBe('hedge failed');
    expect(discarded).toHaveLength(1);
    expect((discarded[0] as { error: Error }).error.message).toBe('first failed');
    expect(log).toEqual([]);
  });
});
