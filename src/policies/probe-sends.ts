import { nearestSend } from './nearest-send.js';

/**
 * When each of a search's probes was due and when it actually left. A parked caller is told
 * when to look again (`told`); one whose event loop is busy — a cold process reading a backlog
 * of the flight's answers — looks late, and its probe leaves late. That lateness is this
 * client's, not the callee's: a served probe's span is measured to when it was due (`dueOf`),
 * the later of its slot and the time its caller was told to look again, plus what a timer
 * may be late by on its own.
 *
 * On a clock whose timers fire on time (the simulator's) nothing is late, and `dueOf` is the
 * send time itself. A search sends a handful of probes; the log holds the latest `MAX_PROBES`,
 * and the wake-ups of at most `MAX_WAKE_UPS` parked callers (a caller that gives up is
 * forgotten; the oldest go first beyond that, so a long search cannot grow it without bound).
 */
export class ProbeSends {
  private readonly wakeAt = new Map<number, number>();
  /** The latest probes, oldest first. */
  private readonly probes: { readonly sentAt: number; readonly dueAt: number }[] = [];

  /** The caller holding `ticket` was told to look again at `atMs`. */
  told(ticket: number, atMs: number): void {
    if (this.wakeAt.size >= MAX_WAKE_UPS && !this.wakeAt.has(ticket)) {
      // Maps iterate in insertion order: the first key is the longest parked.
      const oldest = this.wakeAt.keys().next().value as number;
      this.wakeAt.delete(oldest);
    }
    this.wakeAt.set(ticket, atMs);
  }

  /** The caller holding `ticket` gave it up: it will not leave. */
  forget(ticket: number): void {
    this.wakeAt.delete(ticket);
  }

  /** The probe holding `ticket`, whose slot is `slotMs`, left at `sentMs`. */
  left(ticket: number, sentMs: number, slotMs: number): void {
    const wake = this.wakeAt.get(ticket);
    this.wakeAt.delete(ticket);
    // Never told to wait (due at its booking), or its slot came after the last wake-up it
    // was told of: the slot is when it was due.
    const due = wake === undefined || slotMs > wake ? slotMs : wake;
    if (this.probes.length === MAX_PROBES) this.probes.shift();
    // A timer's own lateness is no lag: the probe could not have left sooner, and taken out,
    // a token bucket's first probes (due 1.1, 1.3, 1.7 ms after the flight, sent ~1 ms later)
    // read the callee twice as fast (real herds: 197 → 217 requests).
    this.probes.push({ sentAt: sentMs, dueAt: Math.min(due + TIMER_SLACK_MS, sentMs) });
  }

  /**
   * When the probe that left at `sentMs` was due: the logged probe whose send is nearest
   * (`nearestSend`), taken off the log, so that of probes sent together (one busy turn of the
   * event loop) each answer finds its own, in the order they left. `sentMs` itself when none
   * was logged within `TOLERANCE_MS` of it.
   */
  dueOf(sentMs: number): number {
    const at = nearestSend(this.probes, sentMs);
    const probe = this.probes[at];
    if (probe === undefined || Math.abs(probe.sentAt - sentMs) > TOLERANCE_MS) return sentMs;
    this.probes.splice(at, 1);
    return probe.dueAt;
  }

  /** The search ended: no caller is told to look again for a probe (the sends stay, for late answers). */
  searchOver(): void {
    this.wakeAt.clear();
  }

  clear(): void {
    this.wakeAt.clear();
    this.probes.length = 0;
  }
}

const MAX_PROBES = 32;
/** Parked callers whose wake-up is kept: more than a herd of callers waits at once. */
const MAX_WAKE_UPS = 4096;
/**
 * How late a timer may fire without the client being busy (ms): Node's fire up to ~1–2 ms
 * after they are due, browsers clamp nested ones to 4 ms.
 */
const TIMER_SLACK_MS = 4;
/** How far an answer's send time may be from the logged one and still be that probe's (ms). */
const TOLERANCE_MS = 0.5;
