import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AttemptTimeoutError,
  DOWNSTREAM_DEFAULTS,
  type DownstreamOptions,
  downstream,
  GiveUpError,
  isGiveUpError,
  type KindlyEvent,
} from '../../src/index.js';
import { type InternalCallOptions, RUNS_NO_USER_CODE } from '../../src/runtime/attempt.js';
import { currentDeadlineScope } from '../../src/runtime/deadline-context.js';
import type { CallOptions } from '../../src/runtime/downstream.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

const status = (code: number, extra: object = {}) => Object.assign(new Error(`HTTP ${code}`), { status: code, ...extra });

function setup(options: DownstreamOptions = {}, seed = 7) {
  const clock = new VirtualClock();
  const api = downstream('api', { clock, random: new SeededRandom(seed), ...options });
  const events: KindlyEvent[] = [];
  api.onAny((e) => events.push(e));
  return { clock, api, events };
}

/** Settles a promise while driving the virtual clock; returns its result or error. */
async function drive<T>(clock: VirtualClock, promise: Promise<T>): Promise<{ value?: T; error?: unknown }> {
  let out: { value?: T; error?: unknown } | undefined;
  promise.then(
    (value) => {
      out = { value };
    },
    (error: unknown) => {
      out = { error };
    },
  );
  for (let i = 0; i < 10_000 && out === undefined; i++) {
    await clock.advance(0);
    if (out !== undefined) break;
    const next = clock.nextAt();
    if (next === undefined) await clock.advance(0);
    else await clock.advanceTo(next);
  }
  if (out === undefined) throw new Error('call never settled');
  return out;
}

describe('downstream().call — retry loop', () => {
  it('pins its defaults: 3 attempts, 10 s attempt timeout, idempotent', () => {
    expect(DOWNSTREAM_DEFAULTS).toEqual({ attemptTimeoutMs: 10_000, idempotent: true, maxKeys: 1_000 });
    const api = downstream('x');
    expect(api.retry.maxAttempts).toBe(3);
    expect(api.attemptTimeoutMs).toBe(10_000);
  });

  it('retries a 503 and returns the later success; attempt is 1-based and retriesLeft counts down', async () => {
    const { clock, api, events } = setup();
    const seen: Array<[number, number]> = [];
    const result = await drive(
      clock,
      api.call(async (ctx) => {
        seen.push([ctx.attempt, ctx.retriesLeft]);
        if (ctx.attempt < 3) throw status(503);
        return 'ok';
      }),
    );
    expect(result.value).toBe('ok');
    expect(seen).toEqual([
      [1, 2],
      [2, 1],
      [3, 0],
    ]);
    expect(events.filter((e) => e.type === 'retry-scheduled')).toHaveLength(2);
    const s = api.stats();
    expect([s.requests, s.attempts, s.retries, s.successes, s.retrySuccessRate]).toEqual([1, 3, 2, 1, 1]);
    expect(s.addedLatencyMs).toBeGreaterThan(0);
  });

  it('gives up after maxAttempts with the last error as cause, attempts, elapsed and outcome', async () => {
    const { clock, api, events } = setup();
    let n = 0;
    const { error } = await drive(
      clock,
      api.call(async () => {
        n++;
        throw status(n < 3 ? 503 : 502);
      }),
    );
    expect(error).toBeInstanceOf(GiveUpError);
    const e = error as GiveUpError;
    expect(isGiveUpError(e)).toBe(true);
    expect(e.reason).toBe('max-attempts');
    expect(e.attempts).toBe(3);
    expect((e.cause as { status: number }).status).toBe(502);
    expect(e.outcome).toBe('unknown');
    expect(e.elapsedMs).toBe(clock.monotonic());
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'max-attempts', attempts: 3 });
  });

  it('never retries a non-retryable status (404) and never mutates the user error', async () => {
    const { clock, api } = setup();
    const original = status(404);
    const snapshot = { ...original };
    let n = 0;
    const { error } = await drive(
      clock,
      api.call(async () => {
        n++;
        throw original;
      }),
    );
    expect(n).toBe(1);
    expect((error as GiveUpError).reason).toBe('not-retryable');
    expect((error as GiveUpError).cause).toBe(original);
    expect({ ...original }).toEqual(snapshot);
  });

  it('times out an attempt (outcome unknown), aborts its signal, and retries', async () => {
    const { clock, api } = setup({ attemptTimeoutMs: 50 });
    const aborted: unknown[] = [];
    const { value } = await drive(
      clock,
      api.call((ctx) => {
        if (ctx.attempt === 1) {
          return new Promise<string>((_, reject) => {
            ctx.signal.addEventListener('abort', () => {
              aborted.push(ctx.signal.reason);
              reject(ctx.signal.reason);
            });
          });
        }
        return 'second';
      }),
    );
    expect(value).toBe('second');
    expect(aborted[0]).toBeInstanceOf(AttemptTimeoutError);
    expect(api.stats().timeouts).toBe(1);
  });

  it('a caller abort during a sleep settles at once with the abort reason, without waiting', async () => {
    const { clock, api, events } = setup({ retry: { backoff: { baseMs: 60_000, jitter: 'none' } } });
    const controller = new AbortController();
    const call = api.call(
      async () => {
        throw status(503);
      },
      { signal: controller.signal },
    );
    let settled: unknown;
    call.catch((e: unknown) => {
      settled = e;
    });
    await clock.advance(0); // first attempt fails; now sleeping 60 s
    expect(settled).toBeUndefined();
    const reason = new Error('user went away');
    controller.abort(reason);
    await clock.advance(0); // no virtual time passes
    expect(settled).toBe(reason);
    expect(clock.monotonic()).toBe(0);
    expect(events.at(-1)).toMatchObject({ type: 'give-up', reason: 'aborted' });
  });

  it('a POST-like non-idempotent call is not re-sent after an unknown outcome', async () => {
    const { clock, api } = setup({ idempotent: false });
    let sent = 0;
    const { error } = await drive(
      clock,
      api.call(async () => {
        sent++;
        throw status(502);
      }),
    );
    expect(sent).toBe(1);
    expect((error as GiveUpError).reason).toBe('not-idempotent');
  });

  it('a non-idempotent call is retried after a failed outcome (never reached the callee)', async () => {
    const { clock, api } = setup({ idempotent: false });
    let sent = 0;
    const { value } = await drive(
      clock,
      api.call(async () => {
        sent++;
        if (sent === 1) throw status(429);
        return 'done';
      }),
    );
    expect(value).toBe('done');
  });

  it('the verify hook decides the retry of an unknown non-idempotent call', async () => {
    for (const applied of [true, false]) {
      const { clock, api } = setup({ idempotent: false });
      let sent = 0;
      const asked: number[] = [];
      const result = await drive(
        clock,
        api.call(
          async () => {
            sent++;
            if (sent === 1) throw status(500);
            return 'second';
          },
          {
            verify: ({ attempt }) => {
              asked.push(attempt);
              return applied;
            },
          },
        ),
      );
      expect(asked).toEqual([1]);
      if (applied) {
        expect(sent).toBe(1);
        expect((result.error as GiveUpError).reason).toBe('verified-applied');
      } else {
        expect(result.value).toBe('second');
      }
    }
  });

  it('a wait hint longer than the time left ends the call now, with retryAfterMs', async () => {
    const { clock, api } = setup({ totalTimeoutMs: 5_000 });
    const { error } = await drive(
      clock,
      api.call(async () => {
        throw status(503, { response: { status: 503, headers: { 'retry-after': '120' } } });
      }),
    );
    const e = error as GiveUpError;
    expect(e.reason).toBe('hint-too-long');
    expect(e.retryAfterMs).toBe(120_000);
    expect(clock.monotonic()).toBe(0);
  });

  it('honours a wait hint as a minimum', async () => {
    const { clock, api, events } = setup();
    let n = 0;
    await drive(
      clock,
      api.call(async () => {
        if (n++ === 0) throw status(429, { response: { status: 429, headers: { 'retry-after': '2' } } });
        return 1;
      }),
    );
    const scheduled = events.find((e) => e.type === 'retry-scheduled');
    expect(scheduled).toMatchObject({ hintMs: expect.any(Number) });
    expect(clock.monotonic()).toBeGreaterThanOrEqual(2000);
    expect(clock.monotonic()).toBeLessThanOrEqual(2400);
  });

  it('nested calls inherit the deadline through the async context', async () => {
    const { clock, api } = setup();
    const inner = downstream('inner', { clock });
    let innerDeadline: number | undefined;
    await drive(
      clock,
      api.call(() => inner.call((ctx) => (innerDeadline = ctx.deadline)), { timeoutMs: 300 }),
    );
    expect(innerDeadline).toBe(300);
  });

  it('regression: an operation of kindly’s own that runs no user code gets no deadline scope (Node 20 promise hooks)', async () => {
    const { clock, api } = setup();
    const seen: Array<number | undefined> = [];
    const own: CallOptions<number> & InternalCallOptions = { timeoutMs: 300, [RUNS_NO_USER_CODE]: true };
    await drive(
      clock,
      api.call(() => seen.push(currentDeadlineScope()?.deadline), own),
    );
    // The same call from user code: nested calls inherit the deadline.
    await drive(
      clock,
      api.call(() => seen.push(currentDeadlineScope()?.deadline), { timeoutMs: 300 }),
    );
    expect(seen).toEqual([undefined, 300 + clock.monotonic()]);
  });

  it('regression: a finished call’s value, operation and signal are not kept alive by kindly (system clock)', async () => {
    // Nothing of kindly's may keep a finished call's value (through the attempt's promise and
    // its resolving functions), its operation or its signal alive: not the timer wheel, not
    // the promise executor's hand-over of the last attempt's resolving functions.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const api = downstream('retention', { attemptTimeoutMs: 60_000 });
    let value: WeakRef<object> | undefined;
    let operation: WeakRef<object> | undefined;
    let signal: WeakRef<object> | undefined;
    await (async () => {
      const answer = { payload: new Uint8Array(1024) };
      const op = async (context: { signal: AbortSignal }) => {
        // What listens to the attempt's signal (a fetch's request) lives as long as it does.
        signal = new WeakRef(context.signal);
        return answer;
      };
      value = new WeakRef(answer);
      operation = new WeakRef(op);
      if ((await api.call(op)) !== answer) throw new Error("not the operation's value");
    })();
    const kept = () => value?.deref() !== undefined || operation?.deref() !== undefined || signal?.deref() !== undefined;
    // Well before the attempt's timeout (60 s) or the wheel's bucket could let go of anything.
    for (let i = 0; i < 20 && kept(); i++) {
      await new Promise((resolve) => setImmediate(resolve));
      gc();
    }
    expect(value?.deref()).toBeUndefined();
    expect(operation?.deref()).toBeUndefined();
    expect(signal).toBeDefined();
    expect(signal?.deref()).toBeUndefined();
  });

  it('an expired deadline fails at once with outcome failed and no attempt', async () => {
    const { clock, api } = setup();
    await clock.advance(1_000);
    let attempts = 0;
    const { error } = await drive(
      clock,
      api.call(
        () => {
          attempts++;
        },
        { deadline: 500 },
      ),
    );
    expect(attempts).toBe(0);
    expect((error as GiveUpError).reason).toBe('deadline');
    expect((error as GiveUpError).outcome).toBe('failed');
  });

  it('a fallback receives the reason and replaces the error', async () => {
    const { clock, api } = setup();
    const { value } = await drive(
      clock,
      api.call(
        async () => {
          throw status(404);
        },
        { fallback: ({ reason }) => `stale (${reason})` },
      ),
    );
    expect(value).toBe('stale (not-retryable)');
    expect(api.stats().fallbacks).toBe(1);
  });

  it('invalid options fail at construction, listing every problem', () => {
    expect(() =>
      downstream('x', { attemptTimeoutMs: -5, totalTimeoutMs: Number.NaN, retry: { maxAttempts: 0 }, colour: 'red' } as never),
    ).toThrow(/colour[\s\S]*attemptTimeoutMs[\s\S]*-5[\s\S]*totalTimeoutMs[\s\S]*NaN[\s\S]*maxAttempts/);
  });
});

describe('downstream().call — properties on the virtual clock', () => {
  it('attempts never exceed maxAttempts, elapsed never exceeds maxElapsedMs, no sleep ends past the deadline', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.integer({ min: 1, max: 5_000 }),
        fc.constantFrom('none', 'full', 'equal', 'decorrelated' as const),
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.array(fc.constantFrom(500, 503, 429, 200, 'timeout' as const), { minLength: 1, maxLength: 8 }),
        async (maxAttempts, maxElapsedMs, deadline, jitter, seed, script) => {
          const { clock, api, events } = setup(
            { attemptTimeoutMs: 100, retry: { maxAttempts, maxElapsedMs, backoff: { baseMs: 50, jitter, capMs: 2_000 } } },
            seed,
          );
          let attempts = 0;
          await drive(
            clock,
            api.call(
              () => {
                const step = script[attempts++ % script.length];
                if (step === 200) return 'ok';
                if (step === 'timeout') return new Promise(() => {});
                throw status(step as number);
              },
              { deadline },
            ),
          );
          expect(attempts).toBeLessThanOrEqual(maxAttempts);
          const starts = events.filter((e) => e.type === 'attempt-start');
          for (const s of starts) {
            expect(s.atMs).toBeLessThanOrEqual(maxElapsedMs);
            expect(s.atMs).toBeLessThan(deadline);
          }
          for (const e of events) {
            if (e.type === 'retry-scheduled') expect(e.atMs + e.delayMs).toBeLessThanOrEqual(deadline);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a POST without key is never re-sent after an unknown outcome, whatever the failure sequence', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(500, 502, 503, 504, 429, 408, 'timeout' as const), { minLength: 1, maxLength: 6 }),
        fc.integer(),
        async (script, seed) => {
          const { clock, api } = setup({ idempotent: false, attemptTimeoutMs: 100, retry: { maxAttempts: 6 } }, seed);
          const outcomes: string[] = [];
          let i = 0;
          await drive(
            clock,
            api.call(() => {
              const step = script[i++ % script.length];
              if (step === 'timeout') {
                outcomes.push('unknown');
                return new Promise(() => {});
              }
              outcomes.push(step === 429 || step === 503 || step === 408 ? 'failed' : 'unknown');
              throw status(step as number);
            }),
          );
          // Only a `failed` outcome may be followed by another send.
          for (let k = 0; k < outcomes.length - 1; k++) expect(outcomes[k]).toBe('failed');
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('downstream().call — abort property', () => {
  it('an abort at any moment of a sleep settles the call at that moment, with the abort reason', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5_000 }),
        fc.constantFrom('none', 'full', 'equal', 'decorrelated' as const),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        fc.integer(),
        async (base, jitter, when, seed) => {
          const { clock, api, events } = setup(
            { retry: { maxAttempts: 2, backoff: { baseMs: base, jitter, capMs: 5_000 } } },
            seed,
          );
          const controller = new AbortController();
          let settled: { at: number; error: unknown } | undefined;
          api
            .call(async () => Promise.reject(status(503)), { signal: controller.signal })
            .catch((error: unknown) => (settled = { at: clock.monotonic(), error }));
          await clock.advance(0);
          const scheduled = events.find((e) => e.type === 'retry-scheduled');
          if (scheduled === undefined || scheduled.type !== 'retry-scheduled' || scheduled.delayMs === 0) return;
          const abortAt = Math.floor(scheduled.delayMs * when);
          await clock.advanceTo(abortAt);
          const reason = new Error('abort');
          controller.abort(reason);
          await clock.advance(0);
          expect(settled).toEqual({ at: abortAt, error: reason });
          expect(clock.pending).toBe(0); // the sleep's timer is gone too
        },
      ),
      { numRuns: 200 },
    );
  });
});
