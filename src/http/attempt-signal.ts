import type { Cancel, Clock } from '../time/clock.js';
import { onAbort, type Unsubscribe } from '../time/on-abort.js';

/** When the body of a response handed over must have been read, and what aborts it then. */
export interface BodyDeadline {
  /** Monotonic ms of `clock`. */
  at: number;
  clock: Clock;
  /** The abort reason the body's read rejects with. */
  reason: () => unknown;
}

/**
 * An attempt whose AbortController kindly owns (the runtime's `AttemptContext`): its signal
 * can be handed to `fetch` as is, and aborted after the attempt by the HTTP layer.
 */
export interface OwnedAttempt {
  /** The attempt's own controller, whose signal is the attempt's signal. */
  ownController(): AbortController;
}

/**
 * The signal one attempt's `fetch` runs under when the call has a caller's signal (its own or
 * an inbound request's), or a limit on reading the body (the call's deadline, `bodyTimeoutMs`).
 * `fetch` keeps following its signal after the headers arrive: an abort then errors the body
 * being read. During the attempt `ctx.signal` already follows the caller; after the attempt
 * only the caller's signal and the body's deadline matter.
 *
 * When the attempt is the runtime's own (an {@link OwnedAttempt}: every attempt `Downstream`
 * runs), `fetch` gets the attempt's signal itself, and the body's deadline and the caller's
 * abort after the attempt abort that same controller: no second AbortController (~2.4 µs on
 * Node 20) and no listener on the attempt's signal per request. The runtime never aborts an
 * attempt's signal after its operation has answered, except a hedge that lost the race, whose
 * response nobody reads. Given a bare attempt signal instead, the link makes an AbortController
 * of its own, follows that signal until the response is handed over, then only the caller.
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
  /** What aborts `signal`: the attempt's own controller, or (given a bare signal) one of the link's own. */
  private readonly controller: AbortController;
  private readonly caller: AbortSignal | undefined;
  /** The attempt follows the caller itself until it answers: the link follows it from `handOver` on. */
  private readonly owned: boolean;
  private stopFollowing: Unsubscribe | undefined;
  /** A bare attempt signal, followed until the attempt hands its response over. */
  private attempt: AbortSignal | undefined;
  private onAttemptAbort: (() => void) | undefined;
  /** The body deadline's timer (unref'd: the socket being read keeps the process alive). */
  private cancelBodyTimer: Cancel | undefined;

  constructor(attempt: AbortSignal | OwnedAttempt, caller: AbortSignal | undefined) {
    this.caller = caller;
    this.stopFollowing = undefined;
    this.attempt = undefined;
    this.onAttemptAbort = undefined;
    this.cancelBodyTimer = undefined;
    this.owned = isOwned(attempt);
    if (isOwned(attempt)) {
      this.controller = attempt.ownController();
      return;
    }
    const controller = new AbortController();
    this.controller = controller;
    if (attempt.aborted) controller.abort(attempt.reason);
    else if (caller?.aborted) controller.abort(caller.reason);
    else {
      this.attempt = attempt;
      const onAttemptAbort = (): void => this.abort(attempt.reason);
      this.onAttemptAbort = onAttemptAbort;
      attempt.addEventListener('abort', onAttemptAbort);
      if (caller !== undefined) this.stopFollowing = onAbort(caller, () => this.abort(caller.reason));
    }
  }

  /** For `fetch`'s init. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Stops following both signals, and the body's deadline. Idempotent. */
  release(): void {
    this.leaveAttempt();
    this.stopBodyTimer();
    this.stopFollowingCaller();
  }

  private stopBodyTimer(): void {
    const cancel = this.cancelBodyTimer;
    if (cancel === undefined) return;
    this.cancelBodyTimer = undefined;
    cancel();
  }

  private stopFollowingCaller(): void {
    const stop = this.stopFollowing;
    if (stop === undefined) return;
    this.stopFollowing = undefined;
    stop();
  }

  /**
   * The attempt returned `response` to someone who will read its body (the caller, a retry's
   * drain): from now on only the caller's signal matters, and `bodyDeadline` (when given) by
   * which the body must have been read — until the body is garbage-collected or `release` is
   * called. A response without a body needs nothing.
   */
  handOver(response: Response, bodyDeadline?: BodyDeadline): void {
    // The attempt's signal never aborts once its operation has returned.
    this.leaveAttempt();
    const body = response.body;
    if (body === null || this.controller.signal.aborted) {
      this.release();
      return;
    }
    const caller = this.caller;
    if (this.owned && caller !== undefined) {
      // An owned attempt followed the caller itself until now; the body follows it from here.
      if (caller.aborted) {
        this.abort(caller.reason);
        return;
      }
      this.stopFollowing = onAbort(caller, () => this.abort(caller.reason));
    }
    if (bodyDeadline !== undefined && bodyDeadline.at !== Number.POSITIVE_INFINITY) {
      const { clock, reason } = bodyDeadline;
      // Aborting a fetch whose body was read already is harmless: nothing is left to stop.
      this.cancelBodyTimer = clock.schedule(Math.max(0, bodyDeadline.at - clock.monotonic()), () => {
        this.cancelBodyTimer = undefined;
        this.abort(reason());
      });
    }
    if (this.stopFollowing === undefined && this.cancelBodyTimer === undefined) {
      this.release();
      return;
    }
    if (unread === undefined) this.stopFollowingCaller();
    // The stream, not the response: a stand-in's body keeps reading the original stream.
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
    attempt.removeEventListener('abort', this.onAttemptAbort as () => void);
    this.onAttemptAbort = undefined;
  }
}

/** A bare AbortSignal (from any realm) has no `ownController`. */
function isOwned(attempt: AbortSignal | OwnedAttempt): attempt is OwnedAttempt {
  return typeof (attempt as Partial<OwnedAttempt>).ownController === 'function';
}

const unread: FinalizationRegistry<AttemptSignal> | undefined =
  typeof FinalizationRegistry === 'function' ? new FinalizationRegistry((link) => link.release()) : undefined;
