import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A hook of the caller's that throws where kindly runs it must change neither the call it
 * observes nor the policy's state, and must not vanish: its error is reported as an uncaught
 * error (as a throwing event listener's is), never as an unhandled rejection. Each scenario
 * runs in a process of its own, which records what reached it (support/hook-errors.child.ts).
 */
const CHILD = fileURLToPath(new URL('./support/hook-errors.child.ts', import.meta.url));

interface Report {
  outcome: Record<string, unknown>;
  reported: string[];
  unhandled: string[];
}

function scenario(name: string): Report {
  const out = execFileSync(process.execPath, ['--import', 'tsx', CHILD, name], { encoding: 'utf8', timeout: 20_000 });
  return JSON.parse(out.trim().split('\n').pop() as string) as Report;
}

describe('hooks that throw', () => {
  it('a breaker’s onStateChange: the probe’s value still reaches the caller, and kindly’s own state and events still follow', () => {
    const r = scenario('onStateChange');
    expect(r.outcome).toEqual({
      probe: { value: 'OK' },
      successes: 1,
      changes: ['closed>open', 'open>half-open', 'half-open>closed'],
      state: 'closed',
    });
    expect(r.reported).toEqual(['onStateChange bug', 'onStateChange bug', 'onStateChange bug']);
    expect(r.unhandled).toEqual([]);
  });

  it('a breaker’s isFailure: the default predicate decides, and a failed probe does not leave the breaker half-open for good', () => {
    const r = scenario('isFailure');
    expect(r.outcome).toEqual({
      first: { error: 'max-attempts' },
      probe: { error: 'max-attempts' },
      after: { value: 'OK' },
      state: 'closed',
    });
    expect(r.reported).toEqual(['isFailure bug', 'isFailure bug']);
    expect(r.unhandled).toEqual([]);
  });

  it('onDiscard, told of a hedge’s losing answer: reported, not an unhandled rejection', () => {
    const r = scenario('onDiscard');
    expect(r.outcome).toEqual({ result: { value: 2 }, hedgeWins: 1 });
    expect(r.reported).toEqual(['onDiscard bug']);
    expect(r.unhandled).toEqual([]);
  });

  it('onAttemptError: the call still retries and succeeds, and counts as it should', () => {
    const r = scenario('onAttemptError');
    expect(r.outcome).toEqual({ result: { value: 'OK' }, attempts: 2, successes: 1 });
    expect(r.reported).toEqual(['onAttemptError bug']);
    expect(r.unhandled).toEqual([]);
  });

  it('an event listener: the call goes on (as before), the error reported', () => {
    const r = scenario('listener');
    expect(r.outcome).toEqual({ result: { value: 'OK' } });
    expect(r.reported).toEqual(['listener bug']);
    expect(r.unhandled).toEqual([]);
  });
});
