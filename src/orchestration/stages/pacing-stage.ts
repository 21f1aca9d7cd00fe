import type { Pacer, PacerSignal } from '../../policies/pacer.js';
import type { Clock } from '../../time/clock.js';
import {
  ADMIT,
  type Admission,
  type AttemptResult,
  QUEUE,
  RESULT_FAILED,
  RESULT_OK,
  type Stage,
  type StageCall,
  WAIT,
} from '../stage.js';

/**
 * Where send slots are booked: the pacer itself, or a fleet store's shared queue around it
 * (whose booking may take a round trip, and cannot be taken back).
 */
export interface PaceBooker {
  /** ms to wait before sending, or a promise of it (a shared booking). */
  reserve(nowMs: number): number | PromiseLike<number>;
  /** Whether attempts are being held back now. */
  throttling(nowMs: number): boolean;
  /** Told of a wait hint from the callee (beyond the pacer's own `onResult`). */
  hint?(nowMs: number, hintMs: number): void;
}

/** What the pacer's line resolves to when the slot would come too late for the deadline. */
const TOO_LATE = -1;

/** The stage's token for an attempt that waited for a slot: its answer is a probe's. */
const PACED = 'paced';

/**
 * Adaptive pacing: while the callee is throttling us, attempts leave at the learned rate.
 * A slot whose wait would not end in time for an attempt is given back and the call ends
 * with reason `deadline`. Every answer is reported with its attempt's send time.
 *
 * A paced attempt holds a ticket in the pacer's queue and waits in a line that asks the
 * pacer again whenever a wait ends: slots move as the pacer learns (a cut spaces the queue
 * out, a better estimate brings it in). A caller that gives up or is aborted while waiting
 * hands its slot back.
 */
export class PacingStage implements Stage {
  readonly name = 'pacing';
  readonly observesSuccess = true;

  private readonly booker: PaceBooker;
  /** Callers sleeping until their slot: woken when the schedule changes. */
  private readonly sleepers = new Set<AbortController>();

  constructor(
    readonly pacer: Pacer,
    private readonly options: {
      /** Pace first attempts too (by default only retries wait for the pacer). */
      paceFirstAttempts?: boolean;
      /** Told of every wait the pacer imposes. */
      onDelay?: (nowMs: number, delayMs: number) => void;
      /** Where slots are booked. @default the pacer */
      booker?: PaceBooker;
      /** The clock a held ticket's line sleeps on (required to hold tickets). */
      clock?: Clock;
    } = {},
  ) {
    this.booker = options.booker ?? pacer;
  }

  enter(call: StageCall, nowMs: number): Admission {
    if (call.attempt === 1 && this.options.paceFirstAttempts !== true) return ADMIT;
    const generation = this.pacer.generation;
    const booked = this.booker.reserve(nowMs);
    // A booking may restart a schedule that had fallen behind: wake whoever waits on it.
    if (this.pacer.generation !== generation) this.wakeSleepers();
    if (typeof booked !== 'number') {
      call.queue = booked;
      call.queueWaitMs = call.deadline - nowMs;
      return QUEUE;
    }
    const ticket = this.booker === this.pacer ? this.pacer.lastTicket : 0;
    const clock = this.options.clock;
    if (ticket !== 0 && clock !== undefined) {
      // Searching, a slot is provisional: only a definite one is held against the deadline.
      const until = call.deadline - call.minAttemptTime;
      if (!this.pacer.searching && nowMs + this.pacer.slotWait(ticket, nowMs) > until) {
        this.pacer.release(ticket, nowMs);
        return call.refuse('deadline', undefined, undefined);
      }
      this.options.onDelay?.(nowMs, this.pacer.slotWait(ticket, nowMs));
      call.token = PACED;
      call.queue = { acquire: (signal) => this.hold(clock, ticket, until, signal) };
      call.queueWaitMs = call.deadline - nowMs;
      return QUEUE;
    }
    return this.waitFor(call, nowMs, booked, true);
  }

  /** A shared booking answered: `value` is the wait (or the held ticket's line ended). */
  afterQueue(call: StageCall, nowMs: number, value: unknown): Admission {
    if (value === TOO_LATE) return call.refuse('deadline', undefined, undefined);
    call.token = PACED;
    return this.waitFor(call, nowMs, value as number, false);
  }

  /**
   * Waits for `ticket`'s slot; 0 when it is due. Slots move as the pacer learns: every waiting
   * caller sleeps until its slot as booked now or until the pacer's schedule changes (told by
   * `exit`, which reports answers), whichever comes first — no polling.
   */
  private async hold(clock: Clock, ticket: number, until: number, signal: AbortSignal | undefined): Promise<number> {
    const pacer = this.pacer;
    for (;;) {
      const now = clock.monotonic();
      const wait = pacer.slotWait(ticket, now);
      if (wait <= 0) return 0;
      // Searching, a slot is provisional: the caller waits until its deadline at most.
      if (now + (pacer.searching ? 0 : wait) > until || now >= until) {
        pacer.release(ticket, now);
        return TOO_LATE;
      }
      const generation = pacer.generation;
      const wake = new AbortController();
      const onAbort = () => wake.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.add(wake);
      try {
        await clock.sleep(Math.min(wait, until - now), wake.signal);
      } catch (error) {
        if (signal?.aborted) {
          pacer.release(ticket, clock.monotonic());
          throw signal.reason;
        }
        // Woken: the schedule changed.
        if (pacer.generation === generation && !wake.signal.aborted) throw error;
      } finally {
        this.sleepers.delete(wake);
        signal?.removeEventListener('abort', onAbort);
      }
    }
  }

  /** Wakes every caller waiting for a slot (the pacer's schedule changed). */
  private wakeSleepers(): void {
    if (this.sleepers.size === 0) return;
    const woken = [...this.sleepers];
    this.sleepers.clear();
    for (const wake of woken) wake.abort();
  }

  private waitFor(call: StageCall, nowMs: number, wait: number, local: boolean): Admission {
    if (wait <= 0) return ADMIT;
    call.token = PACED;
    if (nowMs + wait > call.deadline - call.minAttemptTime) {
      // A local slot is given back; one in a fleet's queue cannot be.
      if (local) this.pacer.cancelLastReservation();
      return call.refuse('deadline', undefined, undefined);
    }
    this.options.onDelay?.(nowMs, wait);
    call.waitMs = wait;
    return WAIT;
  }

  exit(call: StageCall, nowMs: number, result: AttemptResult): void {
    const paced = call.token === PACED;
    const before = this.pacer.generation;
    if (result === RESULT_OK) {
      this.pacer.onResult(nowMs, 'ok', undefined, call.attemptStart, paced);
    } else if (result === RESULT_FAILED) {
      const c = call.classification;
      if (c === undefined) return;
      const signal: PacerSignal | undefined = c.throttled ? 'rejected' : c.timeout ? 'timeout' : undefined;
      if (signal !== undefined || c.hintMs !== undefined)
        this.pacer.onResult(nowMs, signal ?? 'rejected', c.hintMs, call.attemptStart, paced);
    }
    if (this.pacer.generation !== before) this.wakeSleepers();
  }

  /**
   * While pacing, a retry still waits its own backoff first (the pacer never sends a retry
   * earlier than the caller asked), then for its slot at the learned rate. The delay is
   * marked paced so that even a zero one yields: every answer that arrived together is
   * reported to the pacer before any of those callers books its slot.
   */
  retryDelay(_call: StageCall, nowMs: number, delayMs: number): number {
    return this.booker.throttling(nowMs) ? delayMs : -1;
  }
}
