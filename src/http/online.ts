import type { Clock } from '../time/clock.js';

interface Listenable {
  addEventListener(type: string, listener: () => void): void;
  removeEventListener(type: string, listener: () => void): void;
}

/**
 * The parts of a browser page the waits look at. Read from `globalThis` by default; on Node
 * (no `window`, and `navigator.onLine` undefined) there is never anything to wait for.
 */
export interface PageEnvironment {
  navigator?: { onLine?: boolean } | undefined;
  /** Receives `online` (the window). */
  window?: Listenable | undefined;
  /** Receives `visibilitychange`; `visibilityState` is `visible` or `hidden`. */
  document?: (Listenable & { visibilityState?: string }) | undefined;
}

/** The current page, if any. */
export function pageEnvironment(): PageEnvironment {
  const g = globalThis as {
    navigator?: { onLine?: boolean };
    addEventListener?: unknown;
    removeEventListener?: unknown;
    document?: Listenable & { visibilityState?: string };
  };
  const window =
    typeof g.addEventListener === 'function' && typeof g.removeEventListener === 'function' ? (g as Listenable) : undefined;
  return { navigator: g.navigator, window, document: g.document };
}

/**
 * While the browser says it is offline (`navigator.onLine === false`), waits for the
 * `online` event, so that no attempt is burnt on a request that cannot leave.
 *
 * Returns `undefined` when there is nothing to wait for (online, or not a browser), so the
 * common path allocates nothing. Otherwise the promise resolves when the page is back online
 * or when `deadlineMs` (the clock's monotonic ms) arrives — whichever is first; the caller then
 * finds no time left and gives up with reason `deadline` — and rejects with `signal.reason`
 * when `signal` aborts. Without a deadline only `online` or the signal end the wait.
 * Every listener and timer is removed when it settles.
 */
export function waitUntilOnline(
  signal: AbortSignal | undefined,
  deadlineMs: number | undefined,
  clock: Clock,
  page: PageEnvironment = pageEnvironment(),
): Promise<void> | undefined {
  const window = page.window;
  if (window === undefined || page.navigator?.onLine !== false) return undefined;
  return waitFor(() => page.navigator?.onLine !== false, window, 'online', signal, deadlineMs, clock);
}

/**
 * While the page is hidden (`document.visibilityState === 'hidden'`), waits for it to become
 * visible — the `pauseWhileHidden` option: a background tab does not spend the callee's
 * capacity on results no one is looking at. Same contract as {@link waitUntilOnline}.
 */
export function waitUntilVisible(
  signal: AbortSignal | undefined,
  deadlineMs: number | undefined,
  clock: Clock,
  page: PageEnvironment = pageEnvironment(),
): Promise<void> | undefined {
  const document = page.document;
  if (document === undefined || document.visibilityState !== 'hidden') return undefined;
  return waitFor(() => document.visibilityState !== 'hidden', document, 'visibilitychange', signal, deadlineMs, clock);
}

function waitFor(
  ready: () => boolean,
  target: Listenable,
  event: string,
  signal: AbortSignal | undefined,
  deadlineMs: number | undefined,
  clock: Clock,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let cancelTimer: (() => void) | undefined;
    const cleanup = () => {
      target.removeEventListener(event, onEvent);
      signal?.removeEventListener('abort', onAbort);
      cancelTimer?.();
    };
    const onEvent = () => {
      if (!ready()) return;
      cleanup();
      resolve();
    };
    const onAbort = () => {
      cleanup();
      reject(signal?.reason);
    };
    target.addEventListener(event, onEvent);
    signal?.addEventListener('abort', onAbort);
    if (deadlineMs !== undefined && deadlineMs !== Number.POSITIVE_INFINITY) {
      cancelTimer = clock.schedule(Math.max(0, deadlineMs - clock.monotonic()), () => {
        cleanup();
        resolve();
      });
    }
  });
}
