/**
 * The deadline travels with the call. On Node it lives in an AsyncLocalStorage so that a
 * kindly call made anywhere inside a handler (or inside another kindly call) inherits it
 * without threading it through every function. Elsewhere (browsers) there is no implicit
 * context: pass `deadline` explicitly.
 *
 * node:async_hooks is reached through `process.getBuiltinModule` (Node ≥ 20.16) rather than
 * a static import, so the same ESM build loads in a browser.
 */
interface Storage<T> {
  getStore(): T | undefined;
  run<R>(store: T, fn: () => R): R;
}

/** What the context carries for the work done on behalf of one inbound request or outer call. */
export interface DeadlineScope {
  /** Absolute deadline in monotonic ms of the clock in use (`Infinity` for none). */
  deadline: number;
  /**
   * Aborts when the inbound request is cancelled or its deadline passes. Calls made inside
   * the scope without a signal of their own use it.
   */
  signal?: AbortSignal;
  /**
   * Told when a kindly call inside the scope gives up after exhausting its retries, budget or
   * breaker, so server middleware can mark the response "don't retry".
   */
  onGiveUp?: (reason: string) => void;
}

const storage: Storage<DeadlineScope> | undefined = (() => {
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const hooks = proc?.getBuiltinModule?.('node:async_hooks') as
    | { AsyncLocalStorage: new () => Storage<DeadlineScope> }
    | undefined;
  return hooks ? new hooks.AsyncLocalStorage() : undefined;
})();

/** The deadline scope of the current async context, if any. */
export function currentDeadlineScope(): DeadlineScope | undefined {
  return storage?.getStore();
}

/** Runs `fn` with `scope` as the inherited deadline of every kindly call made inside it. */
export function runWithDeadline<R>(scope: DeadlineScope, fn: () => R): R {
  if (storage === undefined) return fn();
  return storage.run(scope, fn);
}

/** True when deadlines propagate implicitly here (Node), false in browsers. */
export const implicitDeadlines = storage !== undefined;
