/**
 * Run in a process of its own by test/runtime/hook-errors.test.ts: each scenario makes one
 * of the caller's hooks throw inside a downstream, on the virtual clock, and records how the
 * call ended, what the downstream counted, and which errors reached the process as uncaught
 * (kindly reports a hook's error that way) or as unhandled rejections (it must not make any).
 * Prints one JSON line.
 */
import { type DownstreamOptions, downstream, type KindlyEvent } from '../../../src/index.js';
import { SeededRandom, VirtualClock } from '../../../src/testing/index.js';
import { settle } from '../../support/settle.js';

const reported: string[] = [];
const unhandled: string[] = [];
process.on('uncaughtException', (error) => reported.push((error as Error).message));
process.on('unhandledRejection', (error) => unhandled.push(String(error)));

function setup(options: DownstreamOptions) {
  const clock = new VirtualClock();
  const api = downstream('api', { clock, random: new SeededRandom(5), budget: false, ...options });
  const events: KindlyEvent[] = [];
  api.onAny((e) => events.push(e));
  return { clock, api, events };
}

/** How the call ended: its value, or its give-up reason (else the error as text). */
async function ended<T>(clock: VirtualClock, promise: Promise<T>): Promise<{ value?: T; error?: string }> {
  const out = await settle(clock, promise);
  // Microtasks queued after the call settled (a reported hook error) run before the next check.
  await new Promise((resolve) => setImmediate(resolve));
  if (!('error' in out)) return { value: out.value as T };
  return { error: (out.error as { reason?: string }).reason ?? String(out.error) };
}

const failure = () => Promise.reject(Object.assign(new Error('HTTP 503'), { status: 503 }));

const scenarios: Record<string, () => Promise<unknown>> = {
  async onStateChange() {
    const { clock, api, events } = setup({
      retry: false,
      breaker: {
        threshold: 2,
        breakMs: 100,
        breakJitter: 0,
        onStateChange: () => {
          throw new Error('onStateChange bug');
        },
      },
    });
    await ended(clock, api.call(failure));
    await ended(clock, api.call(failure));
    await clock.advance(150);
    const probe = await ended(
      clock,
      api.call(async () => 'OK'),
    );
    const changes = events.flatMap((e) => (e.type === 'breaker-state' ? [`${e.from}>${e.to}`] : []));
    return { probe, successes: api.stats().successes, changes, state: api.breakerState() };
  },
  async isFailure() {
    const { clock, api } = setup({
      retry: false,
      breaker: {
        threshold: 1,
        breakMs: 100,
        breakJitter: 0,
        isFailure: () => {
          throw new Error('isFailure bug');
        },
      },
    });
    const first = await ended(clock, api.call(failure));
    await clock.advance(150);
    const probe = await ended(clock, api.call(failure));
    // The failed probe opened it again, for a longer break; then the next probe is admitted.
    await clock.advance(1_000);
    const after = await ended(
      clock,
      api.call(async () => 'OK'),
    );
    return { first, probe, after, state: api.breakerState() };
  },
  async onDiscard() {
    const { clock, api } = setup({ retry: false, hedging: { delayMs: 50, maxExtraLoad: 1 } });
    let n = 0;
    const call = api.call(
      async () => {
        const mine = ++n;
        await clock.sleep(mine === 1 ? 100 : 10);
        return mine;
      },
      {
        onDiscard: () => {
          throw new Error('onDiscard bug');
        },
      },
    );
    const result = await ended(clock, call);
    await clock.advance(200);
    await new Promise((resolve) => setImmediate(resolve));
    return { result, hedgeWins: api.stats().hedgeWins };
  },
  async onAttemptError() {
    const { clock, api } = setup({ retry: { maxAttempts: 3, backoff: { baseMs: 10, jitter: 'none' } } });
    let n = 0;
    const result = await ended(
      clock,
      api.call(async () => (++n === 1 ? failure() : 'OK'), {
        onAttemptError: () => {
          throw new Error('onAttemptError bug');
        },
      }),
    );
    const stats = api.stats();
    return { result, attempts: stats.attempts, successes: stats.successes };
  },
  async listener() {
    const { clock, api } = setup({ retry: false });
    api.on('attempt-start', () => {
      throw new Error('listener bug');
    });
    const result = await ended(
      clock,
      api.call(async () => 'OK'),
    );
    return { result };
  },
};

const name = process.argv[2] ?? '';
const run = scenarios[name];
if (run === undefined) throw new Error(`no scenario ${name}`);
const outcome = await run();
await new Promise((resolve) => setImmediate(resolve));
process.stdout.write(`${JSON.stringify({ outcome, reported, unhandled })}\n`);
