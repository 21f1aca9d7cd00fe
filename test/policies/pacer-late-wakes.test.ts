import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/policies/pacer.js';
import { burst } from './support/pacer-flights.js';

/** Throttling at 100/s (the herd's slot server): the first probe served confirmed D₀; then booked at 200 ms until 20 wait. */
function cruisingWithQueue(): { p: Pacer; tickets: number[]; toldAt: number[] } {
  const p = new Pacer();
  burst(p, 100, 100, 10);
  for (let i = 0; i < 3; i++) p.reserve(100); // probes at 110, 130, 170
  p.onResult(200, 'ok', undefined, 110);
  const tickets: number[] = [];
  const toldAt: number[] = [];
  while (tickets.length < 20) {
    const wait = p.reserve(200);
    if (wait === 0) continue; // due at once: sent now
    tickets.push(p.lastTicket);
    toldAt.push(200 + wait);
  }
  return { p, tickets, toldAt };
}

/** Each caller asks at the time it was told, until it may send; returns when each one sent. */
function onTime(p: Pacer, tickets: number[], toldAt: number[]): number[] {
  const sentAt = new Array<number>(tickets.length);
  const asks = tickets.map((ticket, i) => ({ ticket, i, at: toldAt[i] as number }));
  while (asks.length > 0) {
    asks.sort((a, b) => a.at - b.at || a.ticket - b.ticket);
    const ask = asks.shift()!;
    const wait = p.holdFor(ask.ticket, ask.at);
    if (wait === 0) sentAt[ask.i] = ask.at;
    else asks.push({ ...ask, at: ask.at + wait });
  }
  return sentAt;
}

describe('pacing by rate when callers wake late together', () => {
  it('callers whose timers all fire at once after a stall go one gap apart, at most two together (regression: 15 requests in 1 ms into a real fixed window of 10)', () => {
    const { p, tickets } = cruisingWithQueue();
    const stalledTo = 400; // the process was busy from 200 to 400 ms: every caller's time passed
    const told = tickets.map((t) => p.holdFor(t, stalledTo));
    expect(told.filter((w) => w === 0)).toHaveLength(2);
    const held = told.filter((w) => w > 0);
    // The rest queue in the order they asked, one gap (10 ms at 100/s) apart, each told its place.
    for (let i = 1; i < held.length; i++) expect((held[i] as number) - (held[i - 1] as number)).toBeCloseTo(10, 6);
    tickets.forEach((t, i) => {
      expect(p.slotWait(t, stalledTo)).toBeCloseTo(told[i] as number, 9);
    });
    // Asking again at its place, each one goes.
    const sentAt = onTime(
      p,
      tickets,
      tickets.map((_, i) => stalledTo + (told[i] as number)),
    );
    const sorted = [...sentAt].sort((a, b) => a - b);
    for (let i = 2; i < sorted.length; i++)
      expect((sorted[i] as number) - (sorted[i - 2] as number)).toBeGreaterThanOrEqual(10 - 1e-9);
  });

  it('callers that wake when told go on their slots, as the schedule has them', () => {
    const { p, tickets, toldAt } = cruisingWithQueue();
    const slots = tickets.map((t) => 200 + p.slotWait(t, 200));
    expect(onTime(p, tickets, toldAt)).toEqual(slots);
  });

  it('while late callers drain, a fresh booking queues behind them rather than going ahead at once', () => {
    const { p, tickets } = cruisingWithQueue();
    const told = tickets.map((t) => p.holdFor(t, 400));
    expect(told.filter((w) => w > 0)).toHaveLength(18);
    expect(p.reserve(400)).toBeGreaterThan(0);
    expect(p.slotWait(p.lastTicket, 400)).toBeCloseTo(Math.max(...told) + 10, 6);
  });

  it('a cut while late callers drain re-spaces them at its own gap, in the same order', () => {
    const { p, tickets } = cruisingWithQueue();
    for (const t of tickets) p.holdFor(t, 400);
    // One of the two that went when the stall ended is rejected: a cut.
    p.onResult(401, 'rejected', undefined, 400, true);
    const places = tickets.map((t) => p.slotWait(t, 401)).filter((w) => w > 0);
    expect(places.length).toBeGreaterThan(10);
    const gaps = places.slice(1).map((w, i) => w - (places[i] as number));
    for (const g of gaps) expect(g).toBeCloseTo(gaps[0] as number, 6);
    expect(gaps[0]).toBeGreaterThan(10);
  });
});
