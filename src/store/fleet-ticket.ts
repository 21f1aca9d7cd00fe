import type { SharedTicket } from '../orchestration/stages/pacing-stage.js';
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
 */
export class FleetQueueView {
  private epoch: PaceEpoch = { baseTicket: 0, baseAt: 0, gap: 0 };
  private heardAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly toLocal: (storeMs: number) => number) {}

  /** An epoch from a reply the store answered at `storeNow`. */
  learn(storeNow: number, epoch: PaceEpoch): void {
    if (storeNow < this.heardAt) return;
    this.heardAt = storeNow;
    this.epoch = { baseTicket: epoch.baseTicket, baseAt: epoch.baseAt, gap: epoch.gap };
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
