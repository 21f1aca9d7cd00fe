import type { Pacer, PacerSignal } from '../../policies/pacer.js';
import { RETRY_DEFAULTS } from '../../policies/retry-decision.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  type HedgeCall,
  QUEUE,
  RESULT_FAILED,
  RESULT_OK,
  type Stage,
  type StageCall,
  type VirtualLine,
  WAIT,
} from '../stage.js';

/**
 * A ticket in a shared queue (a fleet's) whose slots move as the fleet learns: asked again
 * whenever a wait ends, like a ticket held in the pacer.
 */
export interface SharedTicket {
  /** ms to wait before asking again (a long wait is split: the slot may move earlier); 0: send now. */
  holdFor(nowMs: number): number;
  /** The wait until the slot as known now (not split), 0 when due: compared with the deadline. */
  slotWait(nowMs: number): number;
}

/**
 * A shared queue around the pacer (a fleet store's): a booking may take a round trip, and
 * cannot be taken back.
 */
export interface PaceBooker {
  /**
   * A slot in the shared queue: ms to wait before sending, or a promise of it or of a
   * `SharedTicket` (a line on virtual time in the simulator, granted with it); `undefined`
   * (now or once answered) when no shared slot applies — the store is not in force, did not
   * answer, or the pacer is still searching (its probe slots move) — and the attempt holds a
   * ticket in the pacer itself. `due`: a ticket held in the pacer fell due (a searching
   * pacer's probe) — a shared slot for it applies whenever the shared queue is in force.
   * `latestMs`: the last moment the caller can still send (its deadline less the least time an
   * attempt needs); a shared queue books no slot after it (a ticket nobody uses would push
   * every later booking out) and answers with a wait that never ends.
   */
  reserve(
    nowMs: number,
    due?: boolean,
    latestMs?: number,
  ): number | PromiseLike<number | SharedTicket | undefined> | VirtualLine | undefined;
  /** Whether attempts are being held back now. */
  throttling(nowMs: number): boolean;
  /** Told of a wait hint from the callee (beyond the pacer's own `onResult`). */
  hint?(nowMs: number, hintMs: number): void;
  /** A first try leaves now, unpaced: while the shared queue is in force it takes a slot there. */
  unpacedSent?(nowMs: number): void;
}

/** What a `PaceBooker` booked (when a shared slot applies). */
type SharedBooking = Exclude<ReturnType<PaceBooker['reserve']>, undefined>;

/** The last moment `call` can send an attempt: its deadline less the least time an attempt needs. */
function latestSend(call: StageCall): number {
  return call.deadline - call.minAttemptTimeMs;
}

/** The stage's token for an attempt that waited for a slot: its answer is a probe's. */
const PACED = 'paced';

/**
 * Adaptive pacing: while the callee is throttling us, attempts leave at the learned rate.
 * A slot whose wait would not end in time for an attempt is given back and the call ends
 * with reason `deadline`. Every answer is reported with its attempt's send time.
 *
 * A paced attempt holds a ticket in the pacer's queue and asks the pacer again whenever a
 * wait ends (`WAIT` with `waitAgain`): slots move as the pacer learns (a cut spaces the queue
 * out, a better estimate brings it in). A caller whose slot would miss its deadline hands it
 * back. Both drivers (`downstream()` and the simulator) run exactly this.
 */
export class PacingStage implements Stage {
  readonly name = 'pacing';
  readonly observesSuccess = true;

  private readonly booker: PaceBooker | undefined;
  private readonly maxHintMs: number;
  /** The ticket each waiting call holds, asked about again when it re-enters. */
  private readonly held = new WeakMap<StageCall, number>();
  /** Calls whose probe ticket fell due and that are booking a shared slot for it. */
  private readonly dueProbe = new WeakSet<StageCall>();
  /** The shared ticket each waiting call holds. */
  private readonly heldShared = new WeakMap<StageCall, SharedTicket>();

  constructor(
    readonly pacer: Pacer,
    private readonly options: {
      /** Pace first attempts too (by default only retries wait for the pacer). */
      paceFirstAttempts?: boolean;
      /** Told of every wait the pacer imposes. */
      onDelay?: (nowMs: number, delayMs: number) => void;
      /** Where slots are booked. @default the pacer */
      booker?: PaceBooker;
      /**
       * The longest wait hint the pacer is told (the retry policy's `maxRetryAfterMs`): a
       * hint beyond what the caller accepts to wait, from an answer that may not even have
       * been retried, must not hold the callee's later retries for longer. @default 300_000
       */
      maxHintMs?: number;
    } = {},
  ) {
    this.booker = options.booker;
    this.maxHintMs = options.maxHintMs ?? RETRY_DEFAULTS.maxRetryAfterMs;
  }

  enter(call: StageCall, nowMs: number): Admission {
    if (call.attempt === 1 && this.options.paceFirstAttempts !== true) {
      if (this.booker === undefined) this.pacer.unpacedSent(nowMs);
      else this.booker.unpacedSent?.(nowMs);
      return ADMIT;
    }
    const held = this.held.get(call);
    if (held !== undefined) return this.holdAgain(call, nowMs, held);
    const shared = this.heldShared.get(call);
    if (shared !== undefined) return this.holdShared(call, nowMs, shared);
    const booked = this.booker?.reserve(nowMs, false, latestSend(call));
    if (booked === undefined) return this.book(call, nowMs);
    return this.takeShared(call, nowMs, booked);
  }

  /** A booking in the shared queue: a fixed wait, or a line whose answer `afterQueue` reads. */
  private takeShared(call: StageCall, nowMs: number, booked: SharedBooking): Admission {
    if (typeof booked === 'number') return this.waitFor(call, nowMs, booked);
    call.queue = booked;
    call.queueWaitMs = call.deadline - nowMs;
    return QUEUE;
  }

  /** A slot in the pacer's own queue: a ticket held until due (0: send now). */
  private book(call: StageCall, nowMs: number): Admission {
    const pacer = this.pacer;
    pacer.reserve(nowMs);
    const ticket = pacer.lastTicket;
    if (ticket === 0) {
      // A slot due at once is a slot all the same (a probe, a place in a pool's window): its
      // answer is a paced one. (Not throttling: nothing was booked.)
      if (pacer.throttling(nowMs)) call.token = PACED;
      return ADMIT;
    }
    // A held ticket: wait until the next check, then enter again and ask (slots move).
    this.options.onDelay?.(nowMs, pacer.slotWait(ticket, nowMs));
    this.held.set(call, ticket);
    return this.holdAgain(call, nowMs, ticket);
  }

  /** A held ticket: WAIT until the next check (`holdFor`), entering this stage again. */
  private holdAgain(call: StageCall, nowMs: number, ticket: number): Admission {
    const pacer = this.pacer;
    call.token = PACED;
    // Held while the pacer searched, and the search is over: when a shared queue is in force
    // the ticket moves there now (the local queue would hold it to this process's own share).
    if (this.booker !== undefined && !pacer.searching && pacer.slotWait(ticket, nowMs) > 0) {
      const shared = this.booker.reserve(nowMs, false, latestSend(call));
      if (shared !== undefined) {
        this.held.delete(call);
        pacer.release(ticket, nowMs);
        // (Not a due probe: should the store not answer, the call books in the pacer again.)
        return this.takeShared(call, nowMs, shared);
      }
    }
    const more = pacer.holdFor(ticket, nowMs);
    if (more <= 0) {
      this.held.delete(call);
      // Due (a probe, while the pacer searches): sent through the shared queue if one applies
      // now, which spaces the fleet's probes; `undefined` (now or once answered): send.
      const shared = this.booker?.reserve(nowMs, true, latestSend(call));
      if (shared === undefined) return ADMIT;
      if (typeof shared !== 'number') this.dueProbe.add(call);
      return this.takeShared(call, nowMs, shared);
    }
    const until = latestSend(call);
    // While the pacer searches its slots move, but never before a wait hint has passed.
    if (nowMs >= until || pacer.hintedUntil > until || (!pacer.searching && nowMs + pacer.slotWait(ticket, nowMs) > until)) {
      this.held.delete(call);
      pacer.release(ticket, nowMs);
      return call.refuse('deadline', undefined, undefined);
    }
    call.waitMs = Math.min(more, until - nowMs);
    call.waitAgain = true;
    return WAIT;
  }

  /** A callee being paced (here or, through a fleet's booker, anywhere in the fleet) gets no hedges. */
  enterHedge(_hedge: HedgeCall, nowMs: number): boolean {
    return !(this.booker ?? this.pacer).throttling(nowMs);
  }

  /** The caller aborted while holding a ticket: its slot goes to the next booking. */
  leave(call: StageCall, nowMs: number): void {
    this.heldShared.delete(call);
    const ticket = this.held.get(call);
    if (ticket === undefined) return;
    this.held.delete(call);
    this.pacer.release(ticket, nowMs);
  }

  /**
   * A shared booking answered: `value` is the wait, a `SharedTicket`, or `undefined` to book
   * in the pacer.
   */
  afterQueue(call: StageCall, nowMs: number, value: unknown): Admission {
    if (value === undefined) return this.dueProbe.delete(call) ? ADMIT : this.book(call, nowMs);
    this.dueProbe.delete(call);
    call.token = PACED;
    if (typeof value === 'number') return this.waitFor(call, nowMs, value);
    const ticket = value as SharedTicket;
    const wait = ticket.slotWait(nowMs);
    // (A slot the caller cannot use is refused by `holdShared`: no delay was imposed.)
    if (nowMs + wait <= latestSend(call)) this.options.onDelay?.(nowMs, wait);
    return this.holdShared(call, nowMs, ticket);
  }

  /** A shared ticket: WAIT until the next check, entering this stage again (its slot may move). */
  private holdShared(call: StageCall, nowMs: number, ticket: SharedTicket): Admission {
    call.token = PACED;
    const more = ticket.holdFor(nowMs);
    if (more <= 0) {
      this.heldShared.delete(call);
      return ADMIT;
    }
    const until = latestSend(call);
    if (nowMs + ticket.slotWait(nowMs) > until) {
      this.heldShared.delete(call);
      return call.refuse('deadline', undefined, undefined);
    }
    this.heldShared.set(call, ticket);
    call.waitMs = Math.min(more, until - nowMs);
    call.waitAgain = true;
    return WAIT;
  }

  /** A fixed wait for a slot in the shared queue (which cannot be given back). */
  private waitFor(call: StageCall, nowMs: number, wait: number): Admission {
    if (wait <= 0) return ADMIT;
    call.token = PACED;
    if (nowMs + wait > latestSend(call)) return call.refuse('deadline', undefined, undefined);
    this.options.onDelay?.(nowMs, wait);
    call.waitMs = wait;
    return WAIT;
  }

  exit(call: StageCall, nowMs: number, result: AttemptResult): void {
    const paced = call.token === PACED;
    if (result === RESULT_OK) {
      this.pacer.onResult(nowMs, 'ok', undefined, call.attemptStart, paced);
    } else if (result === RESULT_FAILED) {
      const c = call.classification;
      if (c === undefined) return;
      const signal: PacerSignal | undefined = c.throttled ? 'rejected' : c.timeout ? 'timeout' : undefined;
      // A hint counts from an answer about capacity (one the caller would retry), and only up
      // to what the caller accepts to wait: a `Retry-After` on a 404, or of a day, held every
      // later retry to this callee (the hint is not checked against the caller's limits there).
      const hintMs = c.hintMs === undefined || !c.retryable ? undefined : Math.min(c.hintMs, this.maxHintMs);
      if (signal !== undefined || hintMs !== undefined)
        this.pacer.onResult(nowMs, signal ?? 'rejected', hintMs, call.attemptStart, paced);
      else this.pacer.onSettled(nowMs, call.attemptStart, paced);
    }
  }

  /**
   * A retry decided while pacing will wait for its slot at the callee's measured rate: the
   * budget (asked after this stage) does not charge it — the pacer already holds what
   * reaches the callee to what it proved it serves.
   */
  admitRetry(call: StageCall, nowMs: number): undefined {
    if ((this.booker ?? this.pacer).throttling(nowMs)) call.retryPaced = true;
    return undefined;
  }

  /**
   * While pacing, a retry still waits its own backoff first (the pacer never sends a retry
   * earlier than the caller asked), then for its slot at the learned rate. (A failure of a
   * retry released here does not advance the caller's backoff: `RetryInput.backoffStep`.) The delay is
   * marked paced so that even a zero one yields: every answer that arrived together is
   * reported to the pacer before any of those callers books its slot.
   */
  retryDelay(_call: StageCall, nowMs: number, delayMs: number): number {
    return (this.booker ?? this.pacer).throttling(nowMs) ? delayMs : -1;
  }
}
