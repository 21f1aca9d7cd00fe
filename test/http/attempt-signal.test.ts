import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AttemptSignal } from '../../src/http/attempt-signal.js';
import { AttemptContext } from '../../src/runtime/attempt.js';
import { VirtualClock } from '../../src/testing/index.js';
import { until } from './support/loopback.js';

const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe('AttemptSignal (regression: no AbortSignal.any, nothing accumulates on a long-lived signal)', () => {
  it('aborts with the attempt’s reason while the attempt runs, and with the caller’s after', () => {
    const caller = new AbortController();
    const first = new AbortController();
    const during = new AttemptSignal(first.signal, caller.signal);
    const timeout = new Error('attempt timed out');
    first.abort(timeout);
    expect(during.signal.aborted).toBe(true);
    expect(during.signal.reason).toBe(timeout);

    const second = new AbortController();
    const after = new AttemptSignal(second.signal, caller.signal);
    after.handOver(new Response('body'));
    second.abort(new Error('too late: the attempt has returned'));
    expect(after.signal.aborted).toBe(false);
    const reason = new Error('caller left');
    caller.abort(reason);
    expect(after.signal.reason).toBe(reason);
    expect(listeners(caller.signal)).toBe(0);
  });

  it('an already aborted signal aborts at once and adds no listener', () => {
    const caller = new AbortController();
    const reason = new Error('gone');
    caller.abort(reason);
    const link = new AttemptSignal(new AbortController().signal, caller.signal);
    expect(link.signal.reason).toBe(reason);
    expect(listeners(caller.signal)).toBe(0);
  });

  it('a response without a body releases the link when handed over', () => {
    const caller = new AbortController();
    const attempt = new AbortController();
    const link = new AttemptSignal(attempt.signal, caller.signal);
    expect(listeners(caller.signal)).toBe(1);
    expect(listeners(attempt.signal)).toBe(1);
    link.handOver(new Response(null, { status: 204 }));
    expect(listeners(caller.signal)).toBe(0);
    expect(listeners(attempt.signal)).toBe(0);
  });

  it('a handed-over body that is garbage-collected unread releases its link', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const caller = new AbortController();
    for (let i = 0; i < 100; i++)
      new AttemptSignal(new AbortController().signal, caller.signal).handOver(new Response(`body ${i}`));
    expect(listeners(caller.signal)).toBe(1);
    await until(() => {
      gc();
      return listeners(caller.signal) === 0;
    }, 'the dropped bodies’ links to be released');
  });

  it('property: whatever the attempts do, the caller’s signal carries one listener while any follows it, none after', () => {
    const step = fc.oneof(
      fc.constant({ op: 'start' as const }),
      fc.record({ op: fc.constant('release' as const), which: fc.nat() }),
      fc.record({ op: fc.constant('hand-over-empty' as const), which: fc.nat() }),
      fc.record({ op: fc.constant('attempt-abort' as const), which: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.boolean(), (steps, callerAborts) => {
        const caller = new AbortController();
        const live: Array<{ link: AttemptSignal; attempt: AbortController }> = [];
        for (const s of steps) {
          if (s.op === 'start') {
            const attempt = new AbortController();
            live.push({ link: new AttemptSignal(attempt.signal, caller.signal), attempt });
            continue;
          }
          if (live.length === 0) continue;
          const [chosen] = live.splice(s.which % live.length, 1);
          if (chosen === undefined) continue;
          if (s.op === 'release') chosen.link.release();
          else if (s.op === 'hand-over-empty') chosen.link.handOver(new Response(null));
          else {
            chosen.attempt.abort(new Error('timeout'));
            expect(chosen.link.signal.aborted).toBe(true);
          }
          expect(listeners(chosen.attempt.signal)).toBe(0);
        }
        expect(listeners(caller.signal)).toBe(live.length > 0 ? 1 : 0);
        if (callerAborts) {
          caller.abort(new Error('caller left'));
          for (const { link } of live) expect(link.signal.aborted).toBe(true);
          expect(listeners(caller.signal)).toBe(0);
        }
        for (const { link } of live) link.release();
        expect(listeners(caller.signal)).toBe(0);
      }),
    );
  });

  describe('given the attempt itself (the runtime’s own attempts: no second AbortController)', () => {
    /** An attempt as the runtime's AttemptContext is: its signal, and its own controller. */
    const owned = () => {
      const controller = new AbortController();
      return { attempt: { signal: controller.signal, ownController: () => controller }, controller };
    };

    it('hands fetch the attempt’s own signal, and follows the caller only after the attempt answered', () => {
      const caller = new AbortController();
      const { attempt } = owned();
      const link = new AttemptSignal(attempt, caller.signal);
      expect(link.signal).toBe(attempt.signal);
      // During the attempt the attempt follows the caller itself: the link adds nothing.
      expect(listeners(caller.signal)).toBe(0);
      link.handOver(new Response('body'));
      expect(listeners(caller.signal)).toBe(1);
      const reason = new Error('caller left');
      caller.abort(reason);
      expect(attempt.signal.reason).toBe(reason);
      expect(listeners(caller.signal)).toBe(0);
    });

    it('with the runtime’s AttemptContext: fetch gets the attempt’s own signal, and the caller aborts it after the hand-over', () => {
      const caller = new AbortController();
      const timing = {
        attempt: 1,
        retriesLeft: 0,
        attemptStart: 0,
        timeoutMs: Number.POSITIVE_INFINITY,
        deadlineBound: false,
        attemptTimeoutMs: Number.POSITIVE_INFINITY,
      };
      const context = new AttemptContext({ clock: new VirtualClock(), name: 'api' }, timing, caller.signal);
      const link = new AttemptSignal(context, caller.signal);
      expect(link.signal).toBe(context.signal);
      link.handOver(new Response('body'));
      const reason = new Error('caller left');
      caller.abort(reason);
      expect(context.signal.reason).toBe(reason);
    });

    it('the body’s deadline aborts the attempt’s signal after the attempt answered', () => {
      let fire: (() => void) | undefined;
      const clock = {
        monotonic: () => 0,
        schedule: (_ms: number, callback: () => void) => {
          fire = callback;
          return () => {
            fire = undefined;
          };
        },
      } as unknown as import('../../src/time/clock.js').Clock;
      const { attempt } = owned();
      const link = new AttemptSignal(attempt, undefined);
      const late = new Error('body deadline');
      link.handOver(new Response('body'), { at: 100, clock, reason: () => late });
      expect(attempt.signal.aborted).toBe(false);
      fire?.();
      expect(attempt.signal.reason).toBe(late);
    });

    it('a caller that aborted before the hand-over aborts at once; release and an empty body leave nothing behind', () => {
      const caller = new AbortController();
      const first = owned();
      const gone = new Error('gone');
      const early = new AttemptSignal(first.attempt, caller.signal);
      caller.abort(gone);
      early.handOver(new Response('body'));
      expect(first.attempt.signal.reason).toBe(gone);

      const other = new AbortController();
      const second = owned();
      const empty = new AttemptSignal(second.attempt, other.signal);
      empty.handOver(new Response(null, { status: 204 }));
      expect(listeners(other.signal)).toBe(0);
      const third = owned();
      const released = new AttemptSignal(third.attempt, other.signal);
      released.handOver(new Response('body'));
      expect(listeners(other.signal)).toBe(1);
      released.release();
      expect(listeners(other.signal)).toBe(0);
      other.abort(new Error('after release'));
      expect(third.attempt.signal.aborted).toBe(false);
    });
  });
});
