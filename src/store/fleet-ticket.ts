import type { SharedTicket } from '../orchestration/stages/pacing-stage.js';
import type { Pacer } from '../policies/pacer.js';
import { slotOf } from './fleet-ledger.js';
import type { PaceEpoch } from './fleet-store.js';

/** A wait this short is slept in one go; longer ones are checked again (slots move). */
const EXACT_WAIT_MS = 5;
/**
 * A long wait is checked again half-way, and at least this often: a new epoch arrives with
 * any reply (at the latest with the next background sync, every 80 ms), and a caller that
 * slept through it would miss a slot brought earlier.
 */
const RECHECK_MS = 40;

/**
 * One process's view of the fleet's queue (see `PaceLedger`): the latest epoch it heard of,
 * from any reply (its bookings, its syncs). Replies may arrive out of order: the one the
 * store answered last wins. Slots are store time; `toLocal` converts them.
 *
 * The process's own pacer follows the queue as far as this process's tickets reach in it
 * under that epoch (`Pacer.followQueue`): start-up counts them as waiting, throttling lasts
 * while they do, and a fall-back to local pacing books after them. That end moves both ways
 * with every reply: a queue booked at a first guess of 13/s ended 7 s out, and a process whose
 * store went down after the fleet had re-spaced at 100/s would otherwise have waited for it.
 */
export class FleetQueueView {
  private epoch: PaceEpoch = { baseTicket: 0, baseAt: 0, gap: 0 };
  private heardAt = Number.NEGATIVE_INFINITY;
  /** The last ticket this process booked (0: none). */
  private lastTicket = 0;

  constructor(
    private readonly toLocal: (storeMs: number) => number,
    private readonly pacer: Pick<Pacer, 'followQueue'>,
  ) {}

  /**
   * A reply the store answered at `storeNow`, with its epoch and, for a booking, the ticket
   * it booked for this process.
   */
  learn(storeNow: number, epoch: PaceEpoch, booked?: number): void {
    if (booked !== undefined && booked > this.lastTicket) this.lastTicket = booked;
    if (storeNow >= this.heardAt) {
      this.heardAt = storeNow;
      this.epoch = { baseTicket: epoch.baseTicket, baseAt: epoch.baseAt, gap: epoch.gap };
    }
    if (this.lastTicket > 0) this.pacer.followQueue(this.slot(this.lastTicket + 1), true);
  }

  /**
   * The store went down: the pacer stops following the fleet's queue (its tickets already held
   * keep their slots under the last epoch); the next booking follows it again.
   */
  forget(): void {
    this.lastTicket = 0;
    this.pacer.followQueue(Number.NEGATIVE_INFINITY, true);
  }

  /** Local ms at which `ticket` leaves, as far as this process knows. */
  slot(ticket: number): number {
    return this.toLocal(slotOf(this.epoch, ticket));
  }

  /** A booked ticket, to hold until its slot. */
  ticket(ticket: number): SharedTicket {
    return new FleetTicket(this, ticket);
  }
}

class FleetTicket implements SharedTicket {
  constructor(
    private readonly queue: FleetQueueView,
    private readonly ticket: number,
  ) {}

  slotWait(nowMs: number): number {
    return Math.max(this.queue.slot(this.ticket) - nowMs, 0);
  }

  holdFor(nowMs: number): number {
    const wait = this.slotWait(nowMs);
    return wait <= EXACT_WAIT_MS ? wait : Math.min(Math.max(wait / 2, EXACT_WAIT_MS), RECHECK_MS);
  }
}

/**
 * What a booking gets when the fleet's next slot is later than its caller can use (the store
 * booked nothing): its wait never ends, so the pacing stage refuses the call with `deadline`.
 */
export const UNSERVABLE_SLOT: SharedTicket = {
  holdFor: () => Number.POSITIVE_INFINITY,
  slotWait: () => Number.POSITIVE_INFINITY,
};
