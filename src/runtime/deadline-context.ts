/**
 * The deadline travels with the call. On Node it lives in an AsyncLocalStorage so that a
 * kindly call made anywhere inside a handler (or inside another kindly call) inherits it
 * without threading it through every function. Elsewhere (browsers) there is no implicit
 * context: pass `deadline` explicitly.
 *
 * node:async_hooks is reached through `process.getBuiltinModule` (Node ≥ 20.16) rather than
 * a static import, so the same ESM build loads in a browser.
 *
 * There is one storage per process, not one per loaded copy of this module: a CommonJS server
 * (`require('kindly-calls/http')`) calling an ESM downstream (`import('kindly-calls')`), or two
 * copies of the package in one `node_modules` tree, load this file twice — each with its own
 * storage, a scope entered by one invisible to the other. The storage therefore lives on
 * `globalThis` under a `Symbol.for` key, as the error brands do. The key carries a version:
 * bump it when `DeadlineScope` changes incompatibly, so that copies that disagree on its shape
 * keep separate storages instead of misreading each other's scopes.
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

/** Where the process-wide storage lives on `globalThis`. */
export const DEADLINE_STORAGE_KEY: unique symbol = Symbol.for('kindly-calls.deadline-scope.v1');

const storage: Storage<DeadlineScope> | undefined = (() => {
  const global = globalThis as { [DEADLINE_STORAGE_KEY]?: Storage<DeadlineScope> };
  const shared = global[DEADLINE_STORAGE_KEY];
  if (shared !== undefined) return shared;
  const proc = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process;
  const hooks = proc?.getBuiltinModule?.('node:async_hooks') as
    | { AsyncLocalStorage: new () => Storage<DeadlineScope> }
    | undefined;
  if (hooks === undefined) return undefined;
  const created = new hooks.AsyncLocalStorage();
  // Not enumerable, not writable: a later copy reads it, nobody replaces it.
  Object.defineProperty(global, DEADLINE_STORAGE_KEY, { value: created });
  return created;
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
