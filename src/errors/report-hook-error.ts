/**
 * An error thrown by the caller's own hook (an event listener, `onDiscard`, a breaker's
 * `onStateChange`, `onAttemptError`) where kindly runs it. It must not change the call it
 * observes, nor the policy's state, nor vanish: it is rethrown on a microtask, as the
 * platform reports an error no caller can catch (`reportError`, an `EventTarget` listener's),
 * where the process's `uncaughtException` handler or the page's `error` event sees it.
 */
export function reportHookError(error: unknown): void {
  queueMicrotask(() => {
    throw error;
  });
}

/** Calls `hook(...args)`; an error it throws is reported (`reportHookError`), never thrown here. */
export function callHook<A extends unknown[]>(hook: ((...args: A) => unknown) | undefined, ...args: A): void {
  if (hook === undefined) return;
  try {
    hook(...args);
  } catch (error) {
    reportHookError(error);
  }
}
