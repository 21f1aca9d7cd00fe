/**
 * How a lost attempt gets back to its call's async context.
 *
 * An attempt lost to a timer or an abort is lost in someone else's async context: attempt
 * timeouts share one timer wheel, whose native timer fires in the context of whichever request
 * armed it, and an abort fires in the aborter's. What the call then does (its events, its
 * give-up, its next attempt, which runs the caller's operation) must run in the context the
 * call was made in. Two ways lead back there:
 *
 * - a reaction registered on the attempt's promise when the call began (`.then(resumeLost)`
 *   in `Downstream.run`): it runs where it was registered, on every runtime — at the price of
 *   one more promise and one more microtask on every call, lost or not;
 * - resolving the attempt's promise with a thenable, on the lost path only: the promise then
 *   calls the thenable's `then` on a microtask — in the context of the promise's creator (the
 *   call) on Node 20, whose `AsyncLocalStorage` rides on promise hooks, but in the resolver's
 *   (the timer's) on Node 24 and later, whose storage follows the engine's continuation data
 *   (`node bench/context-capture.mjs` prints which on the runtime at hand).
 *
 * So the second way is taken on Node 20 alone, where it was checked, and the common call there
 * keeps no reaction (`kindly:full` 0.88× the CPU on Node 20: docs/benchmarks.md). Everywhere
 * else — later Nodes, Bun, Deno, browsers (where a zone library may carry a context) — the
 * reaction stays. Read once, when the module loads, from the runtime's own version: a probe
 * would have to enter an `AsyncLocalStorage` scope, which on Node 20 switches on promise hooks
 * for the whole process. `test/runtime/lost-attempt-context.test.ts` runs that probe and
 * checks this choice against it.
 */
export const LOST_ATTEMPTS_RESOLVE_WITH_THENABLE: boolean = thenableRunsInCreatorContext();

function thenableRunsInCreatorContext(): boolean {
  const versions = (globalThis as { process?: { versions?: Record<string, string | undefined> } }).process?.versions;
  if (versions === undefined || versions.bun !== undefined || versions.deno !== undefined) return false;
  return Number.parseInt(versions.node ?? '', 10) === 20;
}
