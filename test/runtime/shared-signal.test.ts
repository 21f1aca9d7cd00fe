// Regression test: a caller's AbortSignal shared by many concurrent calls
// carries one listener of kindly's, whatever the number of calls (O(1) add and remove), and
// never triggers MaxListenersExceededWarning.
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { downstream } from '../../src/index.js';
import { VirtualClock } from '../../src/testing/index.js';
import { onAbort } from '../../src/time/on-abort.js';

const CALLS = 20_000;
let warnings: string[] = [];
const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

/** Lets queued warnings (emitted on process.nextTick) arrive. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a caller signal shared by many calls (regression)', () => {
  it(`${CALLS.toLocaleString('en-US')} concurrent calls on one signal: one listener at peak, none after, no warning`, async () => {
    const d = downstream('shared', { budget: false, attemptTimeoutMs: 60_000 });
    const shared = new AbortController();
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const started = performance.now();
    const calls = Array.from({ length: CALLS }, () => d.call(() => gate, { signal: shared.signal }));
    const peak = getEventListeners(shared.signal, 'abort').length;
    open();
    await Promise.all(calls);
    const ms = performance.now() - started;
    await settle();
    console.log(`[figure] ${CALLS} concurrent calls sharing one signal: ${ms.toFixed(0)} ms, ${peak} listener(s) at peak`);
    expect(peak).toBe(1);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    expect(warnings).toEqual([]);
  });

  it('aborting the shared signal stops every call with its reason, each exactly once', async () => {
    const d = downstream('shared', { budget: false, attemptTimeoutMs: 60_000 });
    const shared = new AbortController();
    const calls = Array.from({ length: 1_000 }, () =>
      d.call(() => new Promise<never>(() => undefined), { signal: shared.signal }),
    );
    const reason = new Error('caller gave up');
    shared.abort(reason);
    const results = await Promise.allSettled(calls);
    expect(results.every((r) => r.status === 'rejected' && r.reason === reason)).toBe(true);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('calls sleeping between attempts on one signal: one listener, on the virtual clock', async () => {
    const clock = new VirtualClock();
    const d = downstream('shared', {
      clock,
      budget: false,
      retry: { maxAttempts: 2, backoff: { shape: 'constant', baseMs: 100, jitter: 'none' } },
    });
    const shared = new AbortController();
    let attempts = 0;
    const calls = Array.from({ length: 500 }, () =>
      d.call(
        async () => {
          if (++attempts <= 500) throw Object.assign(new Error('busy'), { code: 'ECONNREFUSED' });
          return 'ok';
        },
        { signal: shared.signal },
      ),
    );
    await clock.advance(50); // every first attempt failed; all 500 are asleep
    expect(getEventListeners(shared.signal, 'abort').length).toBe(1);
    await clock.advance(100);
    expect(await Promise.all(calls)).toHaveLength(500);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    await settle();
    expect(warnings).toEqual([]);
  });
});

describe('onAbort', () => {
  it('calls each subscriber once on abort, skips the unsubscribed, and leaves no listener behind', () => {
    const c = new AbortController();
    const seen: number[] = [];
    const stops = [1, 2, 3].map((n) => onAbort(c.signal, () => seen.push(n)));
    stops[1]?.();
    stops[1]?.(); // twice is harmless
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(1);
    c.abort();
    expect(seen).toEqual([1, 3]);
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
    stops[0]?.(); // after the abort too
  });

  it('removes its listener when the last subscriber leaves', () => {
    const c = new AbortController();
    const a = onAbort(c.signal, () => undefined);
    const b = onAbort(c.signal, () => undefined);
    a();
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(1);
    b();
    expect(getEventListeners(c.signal, 'abort')).toHaveLength(0);
  });
});
