// Flights and probes a herd sends a pacer, shared by the pacer's tests.
import { Pacer } from '../../../src/policies/pacer.js';

/** A burst of `answers` requests sent at 0 and answered together at `at`, the first `served` ok. */
export function burst(pacer: Pacer, at: number, answers: number, served: number): void {
  for (let i = 0; i < answers; i++) pacer.onResult(at, i < served ? 'ok' : 'rejected', undefined, 0);
}

/**
 * A flight of `flight` requests at t = 0 answered at 1 ms with `served` served, then the rest
 * booked at 1 ms: the probes' send times, the first `rejected` of them rejected after 1 ms.
 */
export function probesAfterFlight(p: Pacer, flight: number, served: number, rejected: number) {
  burst(p, 1, flight, served);
  const tickets = book(p, flight - served, 1);
  const probes = tickets.map((t) => 1 + p.slotWait(t, 1));
  for (const sent of probes.slice(0, rejected)) p.onResult(sent + 1, 'rejected', undefined, sent, true);
  return { tickets, probes };
}

/**
 * A fixed window of 10 per 100 ms answering in 1 ms (the simulator's herd), 100 callers at
 * t = 0: probes at 1.1 … 52.1 ms rejected, the one at 103.3 ms served (the window reopened for
 * it), answered at 104.3 ms. The bracket guessed 1 / 51.1 ms.
 */
export function probedWindow(): { p: Pacer; tickets: number[] } {
  const p = new Pacer();
  const { tickets, probes } = probesAfterFlight(p, 100, 10, 9);
  p.onResult(104.3, 'ok', undefined, probes[9], true);
  return { p, tickets };
}

/**
 * After `probedWindow`: the count, nine more served one per round trip (1 ms) from 104.3 ms.
 * Returns when the last was answered.
 */
export function countNine(p: Pacer, tickets: number[]): number {
  let now = 104.3;
  for (let k = 10; k < 19; k++) {
    if (p.holdFor(tickets[k] as number, now) !== 0) throw new Error(`count request ${k - 9} not due at ${now}`);
    p.onResult(now + 1, 'ok', undefined, now, true);
    now += 1;
  }
  return now;
}

/** Books `count` sends at `nowMs`; the ticket of each (0: sent at once). */
export function book(p: Pacer, count: number, nowMs: number): number[] {
  return Array.from({ length: count }, () => {
    p.reserve(nowMs);
    return p.lastTicket;
  });
}

/**
 * `probedWindow`, then what follows against that window of 10 per 100 ms (answers in 1 ms):
 * the count (nine more served, one per round trip) and the reprobes for its reopening at
 * 203.3 ms — rejected until the one sent at `opener`, served (`beforeAnswer` runs before that
 * answer comes back). Returns the tickets, the index of the served reprobe's and the send of the
 * last rejected one.
 */
export function confirmedWindow(beforeAnswer?: (p: Pacer, tickets: number[], k: number, opener: number) => void): {
  p: Pacer;
  tickets: number[];
  k: number;
  opener: number;
  rejectedAt: number;
} {
  const { p, tickets } = probedWindow();
  const now = countNine(p, tickets);
  let k = 19;
  let at = now + p.slotWait(tickets[k] as number, now);
  let rejectedAt = Number.NaN;
  while (at <= 203.3) {
    p.onResult(at + 1, 'rejected', undefined, at, true);
    rejectedAt = at;
    k++;
    at = at + 1 + p.slotWait(tickets[k] as number, at + 1);
  }
  beforeAnswer?.(p, tickets, k, at);
  p.onResult(at + 1, 'ok', undefined, at, true);
  return { p, tickets, k, opener: at, rejectedAt };
}
