/**
 * One signal that aborts when either of two does, linked by hand: on Node 20
 * `AbortSignal.any()` costs tens of µs and keeps a reference per call on long-lived signals.
 * `dispose` removes both listeners, so nothing accumulates on a signal that outlives calls.
 */
export function linkSignals(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  if (a.aborted) controller.abort(a.reason);
  else if (b.aborted) controller.abort(b.reason);
  const onA = () => controller.abort(a.reason);
  const onB = () => controller.abort(b.reason);
  a.addEventListener('abort', onA, { once: true });
  b.addEventListener('abort', onB, { once: true });
  return {
    signal: controller.signal,
    dispose: () => {
      a.removeEventListener('abort', onA);
      b.removeEventListener('abort', onB);
    },
  };
}
