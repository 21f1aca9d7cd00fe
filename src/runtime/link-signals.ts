import { onAbort } from '../time/on-abort.js';

/**
 * One signal that aborts when either of two does, linked by hand: on Node 20
 * `AbortSignal.any()` costs tens of µs and keeps a reference per call on long-lived signals.
 * Subscribes through `onAbort`, so a signal shared by many calls (a caller's, an inbound
 * request's) carries one listener of kindly's however many links follow it; `dispose` removes
 * both subscriptions in O(1), so nothing accumulates on a signal that outlives calls.
 */
export function linkSignals(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  if (a.aborted) {
    controller.abort(a.reason);
    return { signal: controller.signal, dispose: noop };
  }
  if (b.aborted) {
    controller.abort(b.reason);
    return { signal: controller.signal, dispose: noop };
  }
  const stopA = onAbort(a, () => {
    stopB();
    controller.abort(a.reason);
  });
  const stopB = onAbort(b, () => {
    stopA();
    controller.abort(b.reason);
  });
  return {
    signal: controller.signal,
    dispose: () => {
      stopA();
      stopB();
    },
  };
}

function noop(): void {}
