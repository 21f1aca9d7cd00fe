/**
 * The call's deadline, in the clock's monotonic ms: the earliest of the inherited one (an
 * inbound request's, an outer call's attempt), the caller's absolute `deadline` and
 * `startedAt + timeout`. `Infinity` when none applies. Pure: the runtime, the simulator and
 * the adapters share it.
 */
export function callDeadline(
  startedAt: number,
  inherited: number | undefined,
  deadline: number | undefined,
  timeoutMs: number | undefined,
): number {
  let d = Number.POSITIVE_INFINITY;
  if (inherited !== undefined) d = inherited;
  if (deadline !== undefined && deadline < d) d = deadline;
  if (timeoutMs !== undefined && startedAt + timeoutMs < d) d = startedAt + timeoutMs;
  return d;
}

/**
 * Whether an attempt may start at `nowMs`: at least `minAttemptTimeMs` ms must be left, and a
 * finite deadline must not have passed.
 */
export function attemptFits(deadline: number, nowMs: number, minAttemptTimeMs: number): boolean {
  return !(deadline - nowMs < minAttemptTimeMs || (deadline !== Number.POSITIVE_INFINITY && deadline <= nowMs));
}
