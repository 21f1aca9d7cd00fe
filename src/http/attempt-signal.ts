import { onAbort, type Unsubscribe } from '../time/on-abort.js';

/**
 * The signal one attempt's `fetch` runs under when the call has a caller's signal (its own or
 * an inbound request's). `fetch` keeps following its signal after the headers arrive: an
 * abort then errors the body being read. During the attempt `ctx.signal` already follows the
 * caller; after the attempt only the caller's signal matters. So the attempt gets its own
 * AbortController, linked by hand to both.
 *
 * Linked by hand, not with `AbortSignal.any`: on Node 20 that costs ~20 µs per call and keeps
 * a reference per call on a long-lived caller signal (the heap grows ~5 MB per 100,000 calls).
 * A caller's signal carries one listener however many attempts follow it (`onAbort`: Node's
 * `addEventListener` walks every listener already there, and warns past 10). An attempt
 * stops following it when its fetch fails, when its failed
 * body is drained or cancelled, or — for a response handed to the caller — when that body is
 * garbage-collected. Knowing the moment a caller finishes reading a body would take wrapping
 * it in a new `ReadableStream`, which costs ~17 µs per response on Node 20 (measured): more
 * than `AbortSignal.any`. The listener goes when no attempt follows the signal any more.
 */
export class AttemptSignal {
  private readonly controller = new AbortController();
  private stopFollowing: Unsubscribe | undefined;
  /** The attempt's own signal, followed until the attempt hands its response over. */
  private attempt: AbortSignal | undefined;
  private readonly onAttemptAbort = (): void => this.abort(this.attempt?.reason);

  constructor(attempt: AbortSignal, caller: AbortSignal) {
    if (attempt.aborted) this.controller.abort(attempt.reason);
    else if (caller.aborted) this.controller.abort(caller.reason);
    else {
      this.attempt = attempt;
      attempt.addEventListener('abort', this.onAttemptAbort);
      this.stopFollowing = onAbort(caller, () => this.abort(caller.reason));
    }
  }

  /** For `fetch`'s init. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops following both signals. Idempotent. */
  release(): void {
    this.leaveAttempt();
    const stop = this.stopFollowing;
    if (stop === undefined) return;
    this.stopFollowing = undefined;
    stop();
  }

  /**
   * The attempt returned `response` to someone who will read its body (the caller, a retry's
   * drain): from now on only the caller's signal matters, until the body is garbage-collected
   * or `release` is called. A response without a body needs nothing.
   */
  handOver(response: Response): void {
    // The attempt's signal never aborts once its operation has returned.
    this.leaveAttempt();
    if (this.stopFollowing === undefined) return;
    const body = response.body;
    if (body === null || unread === undefined) this.release();
    // The stream, not the response: a clone's tee keeps reading the original stream.
    else unread.register(body, this);
  }

  /** The caller aborted or the attempt ended early. */
  abort(reason: unknown): void {
    this.release();
    this.controller.abort(reason);
  }

  private leaveAttempt(): void {
    const attempt = this.attempt;
    if (attempt === undefined) return;
    this.attempt = undefined;
    attempt.removeEventListener('abort', this.onAttemptAbort);
  }
}

const unread: FinalizationRegistry<AttemptSignal> | undefined =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((link) => link.release()) : undefined;
