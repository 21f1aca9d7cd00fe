/**
 * One `abort` listener per signal, however many waits and calls follow it.
 *
 * Node's `EventTarget.addEventListener` walks every listener already on the target (to skip
 * duplicates), and so does `removeEventListener`: with n calls sharing one caller's
 * `AbortSignal`, each call pays O(n) — 20,000 concurrent calls took 1.6 s instead of 72 ms —
 * and Node warns (`MaxListenersExceededWarning`) past 10 listeners. Here a signal carries a
 * single listener of kindly's, in front of a `Set` of subscriptions: O(1) to add and remove.
 * The listener is removed when the last subscription goes, so a signal that outlives its
 * calls keeps nothing of kindly's.
 *
 * Lives with the clock because sleeps are the lowest layer that waits on a signal; the
 * runtime, the policies and the HTTP layer all subscribe through it.
 */

/** Stops a subscription made with {@link onAbort}. Harmless once the signal aborted, or twice. */
export type Unsubscribe = () => void;

class Subscribers {
  private readonly callbacks = new Set<Subscription>();
  private readonly onAbortEvent = (): void => {
    const list = [...this.callbacks];
    this.callbacks.clear();
    this.signal.removeEventListener('abort', this.onAbortEvent);
    registry.delete(this.signal);
    for (const s of list) {
      try {
        s.callback();
      } catch (error) {
        // As EventTarget does with a throwing listener: reported, and the others still run.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  };

  constructor(private readonly signal: AbortSignal) {}

  add(s: Subscription): void {
    if (this.callbacks.size === 0) this.signal.addEventListener('abort', this.onAbortEvent);
    this.callbacks.add(s);
  }

  delete(s: Subscription): void {
    if (!this.callbacks.delete(s) || this.callbacks.size > 0) return;
    this.signal.removeEventListener('abort', this.onAbortEvent);
    registry.delete(this.signal);
  }
}

class Subscription {
  constructor(
    readonly callback: () => void,
    private readonly subscribers: Subscribers,
  ) {}

  readonly unsubscribe: Unsubscribe = () => this.subscribers.delete(this);
}

const registry = new WeakMap<AbortSignal, Subscribers>();

/**
 * Calls `callback` once when `signal` aborts (not if it already has: check `signal.aborted`
 * first). Returns the function that cancels the subscription.
 */
export function onAbort(signal: AbortSignal, callback: () => void): Unsubscribe {
  let subscribers = registry.get(signal);
  if (subscribers === undefined) {
    subscribers = new Subscribers(signal);
    registry.set(signal, subscribers);
  }
  const s = new Subscription(callback, subscribers);
  subscribers.add(s);
  return s.unsubscribe;
}
