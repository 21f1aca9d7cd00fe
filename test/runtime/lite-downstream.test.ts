import { describe, expect, it } from 'vitest';
import * as root from '../../src/index.js';
import * as lite from '../../src/lite.js';
import { ALL_OPTIONAL_POLICIES } from '../../src/orchestration/all-optional-policies.js';
import { lanePipeline } from '../../src/orchestration/downstream-plan.js';
import { LITE_POLICIES } from '../../src/orchestration/optional-policies.js';
import { Pacer } from '../../src/policies/pacer.js';
import { Downstream } from '../../src/runtime/downstream.js';
import { ALL_DOWNSTREAM_POLICIES } from '../../src/runtime/downstream-policies.js';
import { SeededRandom, VirtualClock } from '../../src/testing/index.js';

const unavailable = () => Object.assign(new Error('HTTP 503'), { status: 503 });

/** Every problem `build` reports, or `[]` when it builds. */
function problems(build: () => unknown): string[] {
  try {
    build();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(root.InvalidOptionsError);
    return (error as root.InvalidOptionsError).problems.map(String);
  }
}

describe('kindly-calls/lite', () => {
  it('exports everything the root entry does, the same values, but its own downstream()', () => {
    const ours = new Map(Object.entries(lite));
    expect([...ours.keys()].sort()).toEqual(Object.keys(root).sort());
    for (const [name, value] of Object.entries(root)) {
      if (name === 'downstream') expect(ours.get(name)).not.toBe(value);
      else expect(ours.get(name), name).toBe(value);
    }
  });

  it('retries and times out attempts, with a breaker and a bulkhead, as the root entry does (virtual clock, seed 3)', async () => {
    const run = async (make: typeof root.downstream) => {
      const clock = new VirtualClock();
      const api = make('api', {
        clock,
        random: new SeededRandom(3),
        retry: { maxAttempts: 3, backoff: { baseMs: 100 } },
        attemptTimeoutMs: 1_000,
        breaker: {},
        bulkhead: { maxConcurrent: 2 },
      });
      let calls = 0;
      // The first attempt hangs (its timeout ends it), the second is a 503, the third succeeds.
      const done = api.call(async () => {
        calls++;
        if (calls === 1) return new Promise<string>(() => {});
        if (calls === 2) throw unavailable();
        return 'ok';
      });
      let value: string | undefined;
      void done.then((v) => {
        value = v;
      });
      for (let i = 0; i < 50 && value === undefined; i++) {
        const next = clock.nextAt();
        await (next === undefined ? clock.advance(0) : clock.advanceTo(next));
      }
      return { value, calls, at: clock.monotonic(), stats: api.stats() };
    };
    const ours = await run(lite.downstream as typeof root.downstream);
    expect(ours.value).toBe('ok');
    expect(ours.calls).toBe(3);
    expect(ours.at).toBeGreaterThan(1_000);
    // Same seed, same pipeline: the two entries' downstreams wait exactly alike.
    expect(ours).toEqual(await run(root.downstream));
  });

  it('turns down each option that needs a policy it leaves out, all at once, naming the entry that has it', () => {
    const found = problems(() =>
      lite.downstream('api', {
        pacing: {},
        concurrency: {},
        hedging: { delayMs: 50 },
        attemptTimeoutMs: { percentile: 0.99 },
      } as unknown as lite.LiteDownstreamOptions),
    );
    expect(found).toHaveLength(4);
    for (const option of ['pacing', 'concurrency', 'hedging', 'attemptTimeoutMs']) {
      expect(
        found.some(
          (p) =>
            p.includes(`\`${option}`) &&
            p.includes("kindly-calls/lite leaves out: import downstream from 'kindly-calls' instead"),
        ),
        option,
      ).toBe(true);
    }
    // The root entry's downstream() builds the same options.
    expect(problems(() => root.downstream('api', { pacing: {}, concurrency: {}, hedging: { delayMs: 50 } }))).toEqual([]);
  });

  it('checks the options it keeps as the root entry does', () => {
    const bad = { retry: { maxAttempts: 0 }, attemptTimeoutMs: -1, breaker: { failureRatio: 2 } };
    const ours = problems(() => lite.downstream('api', bad));
    expect(ours.length).toBeGreaterThanOrEqual(3);
    expect(ours).toEqual(problems(() => root.downstream('api', bad)));
  });

  it('a Downstream built without the optional policies turns pacing down too', () => {
    expect(problems(() => new Downstream('api', { pacing: {} }))).toHaveLength(1);
    expect(problems(() => new Downstream('api', { pacing: {} }, ALL_DOWNSTREAM_POLICIES))).toEqual([]);
  });

  it('a lane pipeline with a part its policies leave out is an error, not a lane without it', () => {
    expect(() => lanePipeline({ optional: LITE_POLICIES, pacer: new Pacer() })).toThrow(/pacing/);
    expect(lanePipeline({ optional: ALL_OPTIONAL_POLICIES, pacer: new Pacer() }).stages.map((s) => s.name)).toEqual(['pacing']);
  });
});
