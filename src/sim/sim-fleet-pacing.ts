import type { LineWaiter, VirtualLine } from '../orchestration/stage.js';
import type { PaceBooker } from '../orchestration/stages/pacing-stage.js';
import { PACER_DEFAULTS, type Pacer } from '../policies/pacer.js';
import { bookSlot, emptyPace, type PaceLedger, syncPace } from '../store/fleet-ledger.js';
import { FLEET_SYNC_MS } from '../store/fleet-link.js';
import { adoptFleetEstimate, PacedAnswerTally, paceContribution } from '../store/fleet-pace-rate.js';
import { FleetQueueView, UNSERVABLE_SLOT } from '../store/fleet-ticket.js';
import { SimulatedStore } from './simulated-store.js';

/**
 * A fleet's shared pacing queue on virtual time: the fleet ledger (the arithmetic the Redis
 * store runs in Lua) and, for each process, what `FleetLink` does with it — a `PaceBooker`
 * for that process's pacing stage, and the background sync every `FLEET_SYNC_MS` that shares
 * the process's learned rate and learns whether the fleet is throttled. Every answer of the
 * store arrives `storeRttMs` after the question. The store is always up here (its outages
 * are tested against a real redis-server).
 */
export class SimFleetPacing extends SimulatedStore {
  private readonly ledger: PaceLedger = emptyPace();
  private readonly quietMs = PACER_DEFAULTS.quietMs;
  private readonly minRate = 1 / PACER_DEFAULTS.maxSpacingMs;

  /** Process `owner`'s link for its pacer, as `FleetLink.reserve`/`throttling` give it. */
  link(owner: string, pacer: Pacer, phaseMs: number): PaceBooker {
    const sim = this.sim;
    const rtt = this.storeRttMs;
    /** Until when the fleet is throttled, as this process last heard (a round trip late). */
    let activeUntil = Number.NEGATIVE_INFINITY;
    const throttling = (now: number) => pacer.throttling(now) || now < activeUntil;
    /** Where the fleet's queue stands, as this process last heard (store time is sim time); the pacer follows it. */
    const queue = new FleetQueueView((ms) => ms, pacer);
    const tally = new PacedAnswerTally();
    const sync = (now: number) => {
      if (throttling(now)) {
        const reply = syncPace(this.ledger, now, {
          owner,
          ...paceContribution(pacer, now, tally),
          contributionMs: this.quietMs,
          minRate: this.minRate,
          active: pacer.throttling(now),
          quietMs: this.quietMs,
          hintMs: 0,
          ttlMs: 60_000,
        });
        sim.schedule(
          rtt,
          (_: undefined, at) => {
            activeUntil = reply.activeUntil;
            tally.heardEstimate = reply.estimate;
            queue.learn(reply.now, reply);
            adoptFleetEstimate(pacer, reply.estimate, at);
          },
          undefined,
        );
      }
      if (this.active) sim.schedule(FLEET_SYNC_MS, (_: undefined, at) => sync(at), undefined);
    };
    // Processes start their sync loops at different phases, as real ones do.
    sim.scheduleAt(phaseMs, (_: undefined, at) => sync(at), undefined);
    /** A booking for a caller that can send until `latest` (no slot after it is booked). */
    const booking = (latest: number): VirtualLine => ({
      join: (waiter: LineWaiter, now: number) => {
        // Booked at once in the store's ledger, known here a round trip later.
        const reply = bookSlot(this.ledger, now, {
          owner,
          ...paceContribution(pacer, now, tally),
          contributionMs: this.quietMs,
          minRate: this.minRate,
          ttlMs: 60_000,
          latest: latest < Number.POSITIVE_INFINITY ? latest : undefined,
        });
        sim.schedule(
          rtt,
          (_: undefined, at) => {
            tally.heardEstimate = reply.estimate;
            queue.learn(reply.now, reply, reply.ticket === 0 ? undefined : reply.ticket);
            adoptFleetEstimate(pacer, reply.estimate, at);
            waiter.granted(at, reply.ticket === 0 ? UNSERVABLE_SLOT : queue.ticket(reply.ticket));
          },
          undefined,
        );
        return undefined;
      },
    });
    return {
      throttling,
      unpacedSent: (now: number) => {
        if (throttling(now)) tally.sentFirst();
      },
      reserve: (now: number, due = false, latest = Number.POSITIVE_INFINITY) => {
        if (pacer.searching && !due) return undefined;
        if (!throttling(now)) return 0;
        return booking(latest);
      },
    };
  }
}
