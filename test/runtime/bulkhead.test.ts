import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBulkheadRejectedError } from '../../src/errors/errors.js';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { BULKHEAD_DEFAULTS } from '../../src/policies/bulkhead-slots.js';
import { Bulkhead } from '../../src/runtime/bulkhead.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

/** An AbortController whose signal counts its live 'abort' listeners. */
function countedController(): { controller: AbortController; listeners: () => number } {
  const controller = new AbortController();
  const signal = controller.signal;
  const live = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((type: string, listener: EventListener, options?: AddEventListenerOptions) => {
    if (type === 'abort') live.add(listener);
    add(type, listener, options);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((type: string, listener: EventListener, options?: EventListenerOptions) => {
    if (type === 'abort') live.delete(listener);
    remove(type, listener, options);
  }) as typeof signal.removeEventListener;
  // A `once` listener is gone after it fired.
  add('abort', () => live.clear());
  return { controller, listeners: () => live.size };
}

/** Lets settled promises run their callbacks. */
const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('Bulkhead', () => {
  it('defaults are pinned', () => {
    expect(BULKHEAD_DEFAULTS).toEqual({ maxConcurrent: 25, maxQueue: 0, queueTimeoutMs: 1_000 });
    const b = new Bulkhead({}, new VirtualClock());
    expect([b.maxConcurrent, b.maxQueue, b.queueTimeoutMs]).toEqual([25, 0, 1_000]);
  });

  it('rejects bad options, listing every problem with its value', () => {
    try {
      new Bulkhead({ maxConcurrent: 0, maxQueue: -1, queueTimeoutMs: Number.NaN, size: 3 } as never, new VirtualClock());
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const text = (error as InvalidOptionsError).problems.join('\n');
      for (const fragment of ['`size`', '`maxConcurrent`', 'got 0', '`maxQueue`', 'got -1', '`queueTimeoutMs`', 'NaN']) {
        expect(text).toContain(fragment);
      }
    }
  });

  it('tryAcquire takes free slots synchronously; release gives them back', () => {
    const b = new Bulkhead({ maxConcurrent: 2 }, new VirtualClock());
    expect([b.tryAcquire(), b.tryAcquire(), b.tryAcquire()]).toEqual([true, true, false]);
    expect(b.active).toBe(2);
    b.release();
    expect(b.active).toBe(1);
    expect(b.tryAcquire()).toBe(true);
  });

  it('a full queue rejects at once with queue-full (outcome failed)', async () => {
    const b = new Bulkhead({ maxConcurrent: 1, maxQueue: 1 }, new VirtualClock());
    await b.acquire();
    const waiting = b.acquire();
    const error = await b.acquire().catch((e: unknown) => e);
    expect(isBulkheadRejectedError(error)).toBe(true);
    expect(error).toMatchObject({ why: 'queue-full', outcome: 'failed' });
    expect(b.queued).toBe(1);
    expect(b.rejected).toBe(1);
    b.release();
    await waiting;
    expect([b.active, b.queued]).toEqual([1, 0]);
  });

  it('waiting times out after min(queueTimeoutMs, maxWaitMs)', async () => {
    const clock = new VirtualClock();
    const b = new Bulkhead({ maxConcurrent: 1, maxQueue: 5, queueTimeoutMs: 500 }, clock);
    b.tryAcquire();
    const settled: Array<[string, number]> = [];
    const watch = (name: string, p: Promise<void>) =>
      p.then(
        () => settled.push([`${name} ok`, clock.monotonic()]),
        (e: { why?: string }) => settled.push([`${name} ${e.why}`, clock.monotonic()]),
      );
    watch('long', b.acquire());
    watch('short', b.acquire(undefined, 200));
    await clock.advance(199);
    expect(settled).toEqual([]);
    await clock.advance(1);
    expect(settled).toEqual([['short queue-timeout', 200]]);
    await clock.advance(300);
    expect(settled).toEqual([
      ['short queue-timeout', 200],
      ['long queue-timeout', 500],
    ]);
    expect([b.queued, clock.pending]).toEqual([0, 0]);
    const none = await b.acquire(undefined, 0).catch((e: { why?: string }) => e.why);
    expect(none).toBe('queue-timeout');
  });

  it('an aborted waiter leaves the queue at once with the abort reason, leaving no listener or timer', async () => {
    const clock = new VirtualClock();
    const b = new Bulkhead({ maxConcurrent: 1, maxQueue: 3 }, clock);
    b.tryAcquire();
    const { controller, listeners } = countedController();
    const first = b.acquire(controller.signal);
    const second = b.acquire();
    expect([b.queued, listeners(), clock.pending]).toEqual([2, 1, 2]);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(first).rejects.toBe(reason);
    expect([b.queued, listeners(), clock.pending]).toEqual([1, 0, 1]);
    b.release();
    await second; // the slot went to the next in line, not to the aborted one
    expect([b.active, b.queued, clock.pending]).toEqual([1, 0, 0]);
  });

  it('a granted waiter removes its abort listener; an already-aborted signal never queues', async () => {
    const clock = new VirtualClock();
    const b = new Bulkhead({ maxConcurrent: 1, maxQueue: 3 }, clock);
    b.tryAcquire();
    const { controller, listeners } = countedController();
    const waiting = b.acquire(controller.signal);
    expect(listeners()).toBe(1);
    b.release();
    await waiting;
    expect([listeners(), clock.pending]).toEqual([0, 0]);
    controller.abort(new Error('late'));
    expect(b.active).toBe(1); // aborting after the grant changes nothing

    const gone = new AbortController();
    gone.abort(new Error('before'));
    await expect(b.acquire(gone.signal)).rejects.toThrow('before');
    expect(b.queued).toBe(0);
  });

  it('never exceeds maxConcurrent, grants in FIFO order, and aborted waiters leave no trace (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 6 }),
        fc.array(fc.constantFrom('acquire', 'acquire', 'release', 'abort', 'tick'), { maxLength: 80 }),
        async (maxConcurrent, maxQueue, ops) => {
          const clock = new VirtualClock();
          const b = new Bulkhead({ maxConcurrent, maxQueue, queueTimeoutMs: 1_000 }, clock);
          const waiters: Array<{ id: number; controller: AbortController; listeners: () => number; state: string }> = [];
          const granted: number[] = [];
          let held = 0;
          let id = 0;
          for (const op of ops) {
            if (op === 'acquire') {
              const { controller, listeners } = countedController();
              const w = { id: id++, controller, listeners, state: 'waiting' };
              waiters.push(w);
              b.acquire(controller.signal).then(
                () => {
                  w.state = 'granted';
                  granted.push(w.id);
                  held++;
                },
                () => {
                  w.state = 'rejected';
                },
              );
            } else if (op === 'release' && held > 0) {
              held--;
              b.release();
            } else if (op === 'abort') {
              const w = waiters.find((x) => x.state === 'waiting');
              w?.controller.abort(new Error('abort'));
            } else if (op === 'tick') {
              await clock.advance(400);
            }
            await flush();
            if (b.active > maxConcurrent || b.active !== held) return false;
            const waiting = waiters.filter((w) => w.state === 'waiting');
            if (b.queued !== waiting.length || b.queued > maxQueue) return false;
            // Only the waiting keep a listener.
            if (waiters.some((w) => w.listeners() !== (w.state === 'waiting' ? 1 : 0))) return false;
          }
          // Grants happen in the order the waiters arrived.
          return granted.every((g, i) => i === 0 || granted[i - 1]! < g);
        },
      ),
    );
  });
});
