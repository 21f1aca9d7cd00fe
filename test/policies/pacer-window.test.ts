import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/policies/pacer.js';
import { book, burst, confirmedWindow, probesAfterFlight } from './support/pacer-flights.js';

// A window of 10 per 100 ms that opens at the first request after the last one ended (as
// express-rate-limit's does), answering in 1 ms: opened at 103.3 ms by the probe, counted,
// its reopening found by the reprobes — the last rejected at 203.02 ms, the one at 210.79 ms
// served (`confirmedWindow`).
describe('pacing against a window the pacer has counted', () => {
  it('the window’s opener served, the rest of its count goes at once (regression: one per 10 ms, the herd’s last window took 90 ms)', () => {
    const { p, tickets, k, opener, rejectedAt } = confirmedWindow();
    expect(rejectedAt).toBeCloseTo(203.02, 9);
    expect(opener).toBeCloseTo(210.79, 9);
    const now = opener + 1;
    // Nine more fit in the window the reprobe opened: all due now. Before, they left at the
    // rate the window measured, ~10 ms apart, the last 90 ms after the opener.
    for (let j = k + 1; j < k + 10; j++) expect(p.holdFor(tickets[j] as number, now), `ticket ${j - k}`).toBe(0);
    // The tenth opens the next window: the window's length is known within (99.72, 107.49] ms
    // of its opener, so it goes at the middle, 103.6 ms after this one.
    const next = tickets[k + 10] as number;
    expect(p.holdFor(next, now)).toBeGreaterThan(0);
    expect(now + p.slotWait(next, now)).toBeCloseTo(opener + (99.72 + 107.49) / 2, 6);
    expect(p.cuts).toBe(0);
  });

  it('an opener sent before the window ended raises its lower bound, without a cut: the next one goes a half-bracket later', () => {
    const { p, tickets, k, opener } = confirmedWindow();
    const first = opener + (99.72 + 107.49) / 2;
    expect(opener + 1 + p.slotWait(tickets[k + 10] as number, opener + 1)).toBeCloseTo(first, 6);
    // Suppose this window runs 105 ms (its bracket allows up to 107.49): the opener at the
    // bracket's middle, 314.4 ms, is rejected.
    p.onResult(first + 1, 'rejected', undefined, first, true);
    expect(p.cuts).toBe(0);
    const retry = tickets[k + 11] as number;
    const again = first + 1 + p.slotWait(retry, first + 1);
    // (first − opener, 107.49] halved: the next opener at the middle.
    expect(again).toBeCloseTo(opener + (first - opener + 107.49) / 2, 6);
    // What the pacer reports as its rate follows: ten per the time between two openers.
    expect(p.rate(first + 1)).toBeCloseTo(10_000 / ((first - opener + 107.49) / 2), 6);
    p.onResult(again + 1, 'ok', undefined, again, true);
    // Served: the window opened there, and the rest of its count goes at once.
    for (let j = k + 12; j < k + 21; j++) expect(p.holdFor(tickets[j] as number, again + 1), `ticket ${j - k}`).toBe(0);
    expect(p.holdFor(tickets[k + 21] as number, again + 1)).toBeGreaterThan(0);
  });

  it('a request let go into the window and rejected says it holds fewer than counted: pacing by rate resumes', () => {
    const { p, tickets, k, opener } = confirmedWindow();
    const now = opener + 1;
    for (let j = k + 1; j < k + 10; j++) expect(p.holdFor(tickets[j] as number, now)).toBe(0);
    // Another caller took part of it: the fifth is rejected.
    for (let j = 0; j < 4; j++) p.onResult(now + 1, 'ok', undefined, now, true);
    p.onResult(now + 1, 'rejected', undefined, now, true);
    // The tickets still waiting are spaced at a rate again, none of them at once.
    const waits = [k + 10, k + 11, k + 12].map((j) => p.slotWait(tickets[j] as number, now + 1));
    expect(waits[0]).toBeGreaterThan(0);
    expect(waits[1]! - waits[0]!).toBeGreaterThan(5);
    expect(waits[2]! - waits[1]!).toBeCloseTo(waits[1]! - waits[0]!, 6);
  });

  it('a booking while the window has room goes at once; once it is full, the next waits for the window to end', () => {
    // Only two callers still wait when the opener is answered (the others gave up: their slots
    // handed back, the latest first).
    const { p, tickets, k, opener } = confirmedWindow((p, tickets, k, at) => {
      for (let j = tickets.length - 1; j > k + 2; j--) expect(p.release(tickets[j] as number, at)).toBe(true);
    });
    const now = opener + 1;
    expect(p.holdFor(tickets[k + 1] as number, now)).toBe(0);
    expect(p.holdFor(tickets[k + 2] as number, now)).toBe(0);
    // Three of its ten used: seven new callers go at once, within the window.
    for (let j = 0; j < 7; j++) expect(p.reserve(now + 5 + j), `booking ${j + 1}`).toBe(0);
    // The eighth would be the eleventh: it waits for the next window's opener.
    const wait = p.reserve(now + 20);
    expect(wait).toBeGreaterThan(0);
    expect(now + 20 + p.slotWait(p.lastTicket, now + 20)).toBeCloseTo(opener + (99.72 + 107.49) / 2, 6);
  });
});

describe('finding a window’s count in time', () => {
  it('while a probe is out, a parked caller looks again when its answer should be back (regression: a count started 27 ms after the probe was served, and ran out of time)', () => {
    // The flight of 100 answered in 1 ms, 10 served; probes at 1.1 … 52.1 ms rejected so far.
    const p = new Pacer();
    const { tickets, probes } = probesAfterFlight(p, 100, 10, 8);
    // The probe at 52.1 ms is out (its answer due at 53.1); the next one goes at 103.3. A caller
    // far back that looks at 52.2 looks again right after 53.1 — before, a quarter of the way
    // to the next probe (12.8 ms later).
    expect(probes[8]).toBeCloseTo(52.1, 9);
    const wait = p.holdFor(tickets[40] as number, 52.2);
    expect(wait).toBeGreaterThan(0.8);
    expect(wait).toBeLessThan(1);
  });

  it('the count goes one per the probes’ fastest round trip, not the served probe’s slow one (regression: real herds whose served probe took 7 ms never counted)', () => {
    // A flight whose answers took 30 ms (a client sending 100 requests at once), 10 served;
    // probes answered in 1 ms once it was through, the served one in 7 ms (an event loop busy
    // elsewhere).
    const p = new Pacer();
    burst(p, 30, 100, 10);
    const tickets = book(p, 90, 30);
    const probes = tickets.map((t) => 30 + p.slotWait(t, 30));
    let k = 0;
    for (; (probes[k] as number) < 130; k++) p.onResult((probes[k] as number) + 1, 'rejected', undefined, probes[k], true);
    const now = (probes[k] as number) + 7;
    p.onResult(now, 'ok', undefined, probes[k], true);
    expect(p.searching).toBe(false);
    // Nine more at 7 ms each would not fit in the bracket: before, no count, and the next
    // request a slot of the bracket's guess later. At 1 ms each they do.
    expect(p.holdFor(tickets[k + 1] as number, now)).toBe(0);
    expect(p.slotWait(tickets[k + 2] as number, now)).toBeLessThan(1.1);
  });
});
