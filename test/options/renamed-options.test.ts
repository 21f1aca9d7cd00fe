/**
 * Every duration option is named for its unit. A user still writing the older unit-less name
 * (`base`, `attemptTimeout`, a call's `timeout`) gets the new name in the error, not a list to scan.
 */
import { describe, expect, it } from 'vitest';
import { Backoff } from '../../src/backoff/backoff.js';
import { downstream } from '../../src/index.js';
import { InvalidOptionsError } from '../../src/options/validate.js';

function problemsOf(build: () => unknown): string[] {
  try {
    build();
  } catch (error) {
    if (error instanceof InvalidOptionsError) return [...error.problems];
    throw error;
  }
  throw new Error('expected InvalidOptionsError');
}

describe('unit-less duration names point at their Ms name', () => {
  it('backoff base, cap, floor and step', () => {
    expect(problemsOf(() => new Backoff({ base: 10, cap: 100, floor: 1, step: 5 } as never))).toEqual([
      'Unknown option `base`: durations end in Ms, use `baseMs`',
      'Unknown option `cap`: durations end in Ms, use `capMs`',
      'Unknown option `floor`: durations end in Ms, use `floorMs`',
      'Unknown option `step`: durations end in Ms, use `stepMs`',
    ]);
  });

  it('downstream attemptTimeout and totalTimeout, retry maxElapsed', () => {
    const problems = problemsOf(() =>
      downstream('renamed', { attemptTimeout: 100, totalTimeout: 1_000, retry: { maxElapsed: 500 } } as never),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'Unknown option `attemptTimeout`: durations end in Ms, use `attemptTimeoutMs`',
        'Unknown option `totalTimeout`: durations end in Ms, use `totalTimeoutMs`',
        'retry: Unknown option `maxElapsed`: durations end in Ms, use `maxElapsedMs`',
      ]),
    );
  });

  it("a call's timeout", async () => {
    const api = downstream('renamed-call');
    await expect(api.call(async () => 1, { timeout: 5 } as never)).rejects.toThrow(
      'Unknown option `timeout`: durations end in Ms, use `timeoutMs`',
    );
  });

  it('an unknown name with no Ms twin still lists the known names', () => {
    expect(problemsOf(() => new Backoff({ bass: 10 } as never))[0]).toMatch(/^Unknown option `bass` \(known: shape, baseMs/);
  });
});
