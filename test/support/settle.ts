import type { VirtualClock } from '../../src/testing/index.js';

/** How a promise ended on the virtual clock, and when (`clock.monotonic()` then). */
export interface Settled<T> {
  value?: T;
  error?: unknown;
  at: number;
}

/**
 * Runs the virtual clock until `promise` settles: microtasks first, then timer by timer, so a
 * call's waits (backoff, pacing, lines) pass in virtual time. Throws if it never settles.
 */
export async function settle<T>(clock: VirtualClock, promise: Promise<T>): Promise<Settled<T>> {
  let out: Settled<T> | undefined;
  promise.then(
    (value) => (out = { value, at: clock.monotonic() }),
    (error: unknown) => (out = { error, at: clock.monotonic() }),
  );
  for (let i = 0; i < 10_000 && out === undefined; i++) {
    await clock.advance(0);
    const next = clock.nextAt();
    if (out === undefined && next !== undefined) await clock.advanceTo(next);
  }
  if (out === undefined) throw new Error('never settled');
  return out;
}
