import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/policies/pacer.js';
import { book, burst, confirmedWindow, countNine, probedWindow, probesAfterFlight } from './support/pacer-flights.js';

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
  it('the first window counts a reprobe sent before its opener and not answered yet, and that reprobe rejected frees its place at once (regression: counted from the opener only, eleven went into a window of ten)', () => {
    const { p, tickets } = probedWindow();
    const now = countNine(p, tickets);
    // Reprobes rejected until the window reopens at 203.3 ms.
    let k = 19;
    let at = now + p.slotWait(tickets[k] as number, now);
    while (at <= 203.3) {
      expect(p.holdFor(tickets[k] as number, at)).toBe(0);
      p.onResult(at + 1, 'rejected', undefined, at, true);
      k++;
      at = at + 1 + p.slotWait(tickets[k] as number, at + 1);
    }
    // X leaves into the reopened window and its answer is slow; Y, the next reprobe, is answered
    // first, served: Y opens the window as far as the pacer knows, and X may be in it.
    const x = at;
    expect(p.holdFor(tickets[k] as number, x)).toBe(0);
    const y = x + p.slotWait(tickets[k + 1] as number, x);
    expect(y).toBeGreaterThan(x);
    expect(p.holdFor(tickets[k + 1] as number, y)).toBe(0);
    p.onResult(y + 1, 'ok', undefined, y, true);
    // Ten in the window: X, Y and eight more, not nine.
    const into = tickets.slice(k + 2, k + 12).filter((t) => p.holdFor(t, y + 1) === 0).length;
    expect(into).toBe(8);
    expect(p.cuts).toBe(0);
    // X comes back rejected (the window had not reopened at its send): its place is free, and
    // the next caller waiting takes it at once.
    p.onResult(y + 2, 'rejected', undefined, x, true);
    expect(p.cuts).toBe(0);
    expect(p.holdFor(tickets[k + 10] as number, y + 2)).toBe(0);
    expect(p.holdFor(tickets[k + 11] as number, y + 2)).toBeGreaterThan(0);
  });

  /**
   * The window's opener A leaves at the bracket's middle, B one gap later; B is answered first,
   * served (the window had ended by its send), and opens a window that counts A in it: A, B
   * and eight more go into it at once. Returns what the two tests below share.
   */
  function openerAnsweredLate() {
    const { p, tickets, k, opener } = confirmedWindow();
    const now = opener + 1;
    for (let j = k + 1; j < k + 10; j++) expect(p.holdFor(tickets[j] as number, now)).toBe(0);
    for (let j = k + 1; j < k + 10; j++) p.onResult(now + 1, 'ok', undefined, now, true);
    const a = tickets[k + 10] as number;
    const b = tickets[k + 11] as number;
    const aAt = now + p.slotWait(a, now);
    const bAt = now + p.slotWait(b, now);
    expect(aAt).toBeCloseTo(opener + (99.72 + 107.49) / 2, 6);
    p.onResult(bAt + 1, 'ok', undefined, bAt, true);
    for (let j = k + 12; j < k + 20; j++) expect(p.holdFor(tickets[j] as number, bAt + 1), `member ${j - k - 11}`).toBe(0);
    return { p, tickets, k, aAt, bAt, low: aAt - opener };
  }

  it('an earlier opener counted in the window and then rejected while the window surely holds: its place goes to the next waiting caller at once, and the opener after keeps its time', () => {
    const { p, tickets, k, aAt, bAt, low } = openerAnsweredLate();
    // A comes back rejected 5 ms into B's window: its place there is free, and the window is
    // longer than A's distance from the opener before.
    p.onResult(bAt + 5, 'rejected', undefined, aAt, true);
    expect(p.cuts).toBe(0);
    // The first caller still waiting takes the place now, inside B's window.
    const c = tickets[k + 20] as number;
    expect(p.holdFor(c, bAt + 5)).toBe(0);
    p.onResult(bAt + 6, 'ok', undefined, bAt + 5, true);
    // Served inside the window: it says nothing of its length, and the next opener goes at B +
    // the middle of (low, 107.49], as it would have without A.
    const d = tickets[k + 21] as number;
    expect(bAt + 6 + p.slotWait(d, bAt + 6)).toBeCloseTo(bAt + (low + 107.49) / 2, 6);
    expect(p.holdFor(tickets[k + 22] as number, bAt + 6)).toBeGreaterThan(0);
    expect(p.rate(bAt + 6)).toBeCloseTo(10_000 / ((low + 107.49) / 2), 6);
  });

  it('an earlier opener rejected once the window may have ended leaves a place free: the next opener served before the window’s top takes it, and does not narrow the window (regression: read as a reopening, nine went into a full window)', () => {
    const { p, tickets, k, aAt, bAt, low } = openerAnsweredLate();
    // A's rejection comes back late, past B + 99.72 ms (where B's window may have ended): too
    // late to fill its place, which stays free.
    p.onResult(bAt + 100, 'rejected', undefined, aAt, true);
    expect(p.cuts).toBe(0);
    // The next opener C, at B + the middle of (low, 107.49], is served before B + 107.49: by
    // the free place or by an early reopening. Taken as the place, C neither narrows the
    // window nor lets the tickets behind it go at once.
    const c = tickets[k + 20] as number;
    const cAt = bAt + 100 + p.slotWait(c, bAt + 100);
    expect(cAt).toBeCloseTo(bAt + (low + 107.49) / 2, 6);
    p.onResult(cAt + 1, 'ok', undefined, cAt, true);
    expect(p.slotWait(tickets[k + 21] as number, cAt + 1)).toBeGreaterThan(0);
    expect(p.rate(cAt + 1)).toBeCloseTo(10_000 / ((low + 107.49) / 2), 6);
  });

  it('a new herd after a pause: its first tries opened the window, so the next opener goes when that window should end; a request sent on the old schedule and rejected changes nothing (regression: read as an opener, the first tries’ success let nine go into their full window, and the herd took 1.42–1.72× the bound)', () => {
    // Every caller of this herd served: the ones still waiting hand their slots back.
    const { p, opener } = confirmedWindow((p, tickets, k, at) => {
      for (let j = tickets.length - 1; j > k; j--) expect(p.release(tickets[j] as number, at)).toBe(true);
    });
    // 400 ms later the next herd's 100 first tries leave together (the pacer never held them):
    // 10 served, 90 rejected.
    const t0 = opener + 400;
    for (let i = 0; i < 100; i++) p.onResult(t0 + 1, i < 10 ? 'ok' : 'rejected', undefined, t0, false);
    // A window opened for them at t0 and they took its places: a retry waits for the next
    // opener, due when that window should end (the bracket's middle after t0).
    expect(p.reserve(t0 + 1.5)).toBeGreaterThan(0);
    const retry = p.lastTicket;
    expect(t0 + 1.5 + p.slotWait(retry, t0 + 1.5)).toBeCloseTo(t0 + (99.72 + 107.49) / 2, 6);
    // A request the pacer let go on its old schedule, just after the first tries, rejected:
    // no cut, and the window's schedule stands.
    p.onResult(t0 + 2, 'rejected', undefined, t0 + 0.5, true);
    expect(p.cuts).toBe(0);
    expect(t0 + 2 + p.slotWait(retry, t0 + 2)).toBeCloseTo(t0 + (99.72 + 107.49) / 2, 6);
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

  it('a probe’s answer that is late: parked callers look again every round trip of the path until it is in (regression: simulated lognormal 5 ms, the count’s first request left 31 ms after the probe was served)', () => {
    const p = new Pacer();
    const { tickets, probes } = probesAfterFlight(p, 100, 10, 8);
    // The probe at 52.1 ms is out and its answer, due at 53.1, is late. A caller far back that
    // looks at 53.2 and again at 54.5 looks again 1 ms later (the path's round trip) — before,
    // a quarter of the way to the next probe at 103.3 ms, 12.5 ms later.
    expect(probes[8]).toBeCloseTo(52.1, 9);
    expect(p.holdFor(tickets[40] as number, 53.2)).toBeCloseTo(1, 9);
    expect(p.holdFor(tickets[40] as number, 54.5)).toBeCloseTo(1, 9);
    // Four smoothed round trips after its send it is taken as lost to this rule: the quarter
    // of the way again.
    expect(p.holdFor(tickets[40] as number, 60)).toBeCloseTo((103.3 - 60) / 4, 1);
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

  it('round trips too long to count one at a time: the count goes pipelined within the bracket, and is taken as complete when due (regression: no count, start-up from a floor, 1.46× the bound’s time)', () => {
    // A flight of 100 answered after 20 ms, 10 served; every probe answered after 20 ms, the
    // window reopening at 100 ms: probes sent before it rejected, the first one after served.
    const p = new Pacer();
    burst(p, 20, 100, 10);
    const tickets = book(p, 90, 20);
    let k = 0;
    let sent = 20 + p.slotWait(tickets[0] as number, 20);
    let low = Number.NaN;
    while (sent < 100) {
      p.onResult(sent + 20, 'rejected', undefined, sent, true);
      low = sent;
      k++;
      sent = sent + 20 + p.slotWait(tickets[k] as number, sent + 20);
    }
    const now = sent + 20;
    p.onResult(now, 'ok', undefined, sent, true);
    expect(p.searching).toBe(false);
    // Nine more at 20 ms each would take 180 ms: more than the bracket's low end allows (the
    // window holds its count for longer than `low` after the flight), so the nine others of
    // the count (11 served so far, the probe among them) go without waiting for answers, over
    // the first half of what is left of the bracket, the first at once.
    const spacing = (sent + low - now) / 20;
    expect(spacing).toBeGreaterThan(1);
    expect(p.holdFor(tickets[k + 1] as number, now)).toBe(0);
    for (let j = 2; j <= 9; j++)
      expect(p.slotWait(tickets[k + j] as number, now), `count request ${j}`).toBeCloseTo((j - 1) * spacing, 6);
    // The request after the count waits for the count, not for its slot on the spacing.
    expect(p.holdFor(tickets[k + 10] as number, now + 9 * spacing)).toBeGreaterThan(0);
    // Five answers come back served, four are slow. With none rejected, the count is taken as
    // complete when due — two of the fastest round trips after its last send, or the bracket's
    // low end if later — and the first reprobe for the window's reopening leaves then (or 2 ms
    // after that low end), not once the slow answers are in: they could come back after the
    // window reopened, and a first reprobe served brackets nothing.
    for (let j = 1; j <= 5; j++) p.onResult(now + (j - 1) * spacing + 20, 'ok', undefined, now + (j - 1) * spacing, true);
    let t = now + 4 * spacing + 20;
    for (let i = 0; i < 100; i++) {
      const wait = p.holdFor(tickets[k + 10] as number, t);
      if (wait === 0) break;
      t += wait;
    }
    expect(t).toBeCloseTo(Math.max(now + 8 * spacing + 2 * 20, sent + low + 2), 6);
    expect(t).toBeLessThan(sent + 100);
    expect(p.cuts).toBe(0);
  });
});
