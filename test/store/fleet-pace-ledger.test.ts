import { describe, expect, it } from 'vitest';
import {
  bookSlot,
  emptyPace,
  FLEET_ANSWER_BUCKET_MS,
  FLEET_ANSWER_BUCKETS,
  FLEET_ARRIVALS_MS,
  FLEET_DELIVERY_GAIN,
  FLEET_DELIVERY_MIN_SPAN_MS,
  FLEET_FRESH_BUCKETS,
  FLEET_GROWTH_DOUBLING_MS,
  FLEET_IDLE_GAPS,
  FLEET_SPELL_END_MS,
  FLEET_SPELL_MIN_MS,
  FLEET_UNPACED_HOLD_GAPS,
  REFUTED_GUESS,
  slotOf,
  syncPace,
} from '../../src/store/fleet-ledger.js';
import { RATE_PROBE, RATE_SHARE, RATE_WHOLE, type RateKindCode } from '../../src/store/fleet-store.js';
import { FleetQueueView } from '../../src/store/fleet-ticket.js';

const book = (owner: string, rate: number, kind: RateKindCode = RATE_SHARE) => ({
  owner,
  rate,
  kind,
  contributionMs: 1_000,
  minRate: 0.001,
  ttlMs: 60_000,
});
const sync = (owner: string, rate: number, kind: RateKindCode = RATE_SHARE, hintMs = 0) => ({
  ...book(owner, rate, kind),
  active: true,
  quietMs: 1_000,
  hintMs,
});

describe('the fleet pace ledger', () => {
  it('sums measured shares, takes the largest guess at the whole rate up to what the shares imply, and never adopts a probing rate', () => {
    const p = emptyPace();
    expect(syncPace(p, 0, sync('a', 0.03, RATE_SHARE)).estimate).toBeCloseTo(0.03, 12);
    expect(syncPace(p, 0, sync('b', 0.04, RATE_SHARE)).estimate).toBeCloseTo(0.07, 12);
    // Two processes that each guessed the whole rate know one rate, not two.
    expect(syncPace(p, 0, sync('c', 0.1, RATE_WHOLE)).estimate).toBeCloseTo(0.1, 12);
    expect(syncPace(p, 0, sync('d', 0.08, RATE_WHOLE)).estimate).toBeCloseTo(0.1, 12);
    // A guess counts only up to what the measured shares imply for the fleet: 0.07 from two
    // of four processes → 0.14.
    expect(syncPace(p, 0, sync('c', 0.3, RATE_WHOLE)).estimate).toBeCloseTo(0.14, 12);
    syncPace(p, 0, sync('c', 0.1, RATE_WHOLE));
    // A search's probing rate spaces the queue but is no estimate to adopt.
    const probing = bookSlot(p, 0, book('e', 0.5, RATE_PROBE));
    expect(probing.estimate).toBeCloseTo(0.1, 12);
    expect(probing.gap).toBeCloseTo(2, 9);
    // Contributions lapse after contributionMs.
    expect(syncPace(p, 2_000, sync('a', 0)).estimate).toBe(0);
  });

  it('a process’s first measured cut caps every guess at β below the rate the fleet ran at, while shares are measured', () => {
    const p = emptyPace();
    // Two processes start up at a guess: the queue is spaced at 0.2 per ms.
    syncPace(p, 0, sync('a', 0.2, RATE_WHOLE));
    expect(bookSlot(p, 0, book('b', 0.2, RATE_WHOLE)).gap).toBeCloseTo(5, 9);
    // 'a' was rejected following that queue and measured its share: the fleet ran too fast,
    // so 'b''s guess counts for β × 0.2 = 0.17 (two processes' worth of 'a''s share, 0.2,
    // would have let it stand).
    const cut = syncPace(p, 50, sync('a', 0.1, RATE_SHARE));
    expect(cut.estimate).toBeCloseTo(REFUTED_GUESS * 0.2, 12);
    // A guess that grows after the cut is capped just the same while 'a' keeps measuring …
    expect(syncPace(p, 900, sync('b', 0.8, RATE_WHOLE)).estimate).toBeCloseTo(REFUTED_GUESS * 0.2, 12);
    expect(syncPace(p, 1_000, sync('a', 0.1, RATE_SHARE)).estimate).toBeCloseTo(REFUTED_GUESS * 0.2, 12);
    // … and stands again once no share has been heard of for contributionMs.
    expect(syncPace(p, 2_100, sync('b', 0.8, RATE_WHOLE)).estimate).toBeCloseTo(0.8, 12);
    // A share that was a share before is no new refutation: the cap does not come back
    // ('c''s 0.04 implies 0.08 for two processes; 'b''s guess counts up to that).
    syncPace(p, 3_000, sync('c', 0.05, RATE_SHARE));
    expect(syncPace(p, 3_000, sync('c', 0.04, RATE_SHARE)).estimate).toBeCloseTo(0.08, 12);
  });

  it('while the fleet is rejected, it counts for at most what its processes together got through (regression: 1.1 × that kept real herds ~10 % over the callee’s rate)', () => {
    expect([FLEET_ANSWER_BUCKET_MS, FLEET_ANSWER_BUCKETS, FLEET_DELIVERY_MIN_SPAN_MS, FLEET_DELIVERY_GAIN]).toEqual([
      50, 6, 200, 1,
    ]);
    const p = emptyPace();
    const owners = ['a', 'b', 'c', 'd'];
    // Four measured shares of 40/s each, 160/s in all (each process's delivery peak reads
    // high), while the callee serves 100/s: one success every 10 ms, every fourth answer a
    // rejection, reported by the processes in turn from t = 1,000.
    let t = 1_000;
    let reply = syncPace(p, t, { ...sync('a', 0.04), served: 1, rejected: 1 });
    for (const o of owners.slice(1)) reply = syncPace(p, t, sync(o, 0.04));
    expect(reply.estimate).toBeCloseTo(0.16, 12);
    const report = (at: number, rejected: number) =>
      syncPace(p, at, { ...sync(owners[(at / 10) % 4] as string, 0.04), served: 1, rejected });
    for (t = 1_010; t < 1_200; t += 10) reply = report(t, (t / 10) % 4 === 0 ? 1 : 0);
    // Less than 200 ms of answers: no reading yet.
    expect(reply.estimate).toBeCloseTo(0.16, 12);
    // At 1,200: 21 served in 200 ms (the span starts at the first report) → 0.105 per ms.
    reply = report(1_200, 1);
    expect(reply.estimate).toBeCloseTo(21 / 200, 12);
    // The queue is spaced at that rate.
    expect(bookSlot(p, 1_200, book('a', 0.04)).gap).toBeCloseTo(200 / 21, 9);
    // At 1,300 the window is buckets 21–26 (1,050–1,300): 26 served in 250 ms.
    for (t = 1_210; t <= 1_300; t += 10) reply = report(t, (t / 10) % 4 === 0 ? 1 : 0);
    expect(reply.estimate).toBeCloseTo(26 / 250, 12);
    // No rejection for a whole window: the fleet is below the callee's rate, and its shares
    // stand (the room it grows by).
    for (t = 1_310; t <= 1_700; t += 10) reply = report(t, 0);
    expect(reply.estimate).toBeCloseTo(0.16, 12);
  });

  it('a rejection in the last two buckets holds the fleet’s rate from rising, whatever a start-up guess says (regression: one process’s start-up took the fleet to 755/s for 100/s)', () => {
    expect(FLEET_FRESH_BUCKETS).toBe(2);
    const p = emptyPace();
    // Process a guesses 100/s at the whole rate and books: the queue runs at 100/s.
    let reply = bookSlot(p, 1_000, book('a', 0.1, RATE_WHOLE));
    expect(reply.gap).toBeCloseTo(10, 9);
    // Its start-up doubles the guess while b reports a rejection: the queue stays at 100/s.
    reply = bookSlot(p, 1_010, { ...book('b', 0.1, RATE_WHOLE), rejected: 1 });
    reply = bookSlot(p, 1_020, book('a', 0.2, RATE_WHOLE));
    expect(reply.estimate).toBeCloseTo(0.1, 12);
    expect(reply.gap).toBeCloseTo(10, 9);
    // A lower word is taken at once.
    reply = bookSlot(p, 1_030, book('a', 0.08, RATE_WHOLE));
    reply = bookSlot(p, 1_040, book('b', 0.08, RATE_WHOLE));
    expect(reply.gap).toBeCloseTo(12.5, 9);
    // Two buckets later (the rejection was in bucket 20, now is bucket 22) the guess counts again.
    reply = bookSlot(p, 1_100, book('a', 0.2, RATE_WHOLE));
    expect(reply.estimate).toBeCloseTo(0.2, 12);
  });

  it('a fleet served in full while its tickets wait grows from what it got through, doubling every 400 ms, until a rejection', () => {
    expect(FLEET_GROWTH_DOUBLING_MS).toBe(400);
    const p = emptyPace();
    // Shares that add up to 30/s; the callee serves every request; three callers book every
    // 10 ms, so tickets wait (the queue holds the fleet back). One success every 10 ms.
    const step = (t: number) => {
      bookSlot(p, t, { ...book('a', 0.03), served: 1 });
      bookSlot(p, t, book('a', 0.03));
      return bookSlot(p, t, book('a', 0.03));
    };
    let reply = step(0);
    for (let t = 10; t < 200; t += 10) reply = step(t);
    expect(reply.estimate).toBeCloseTo(0.03, 12);
    // At 200 ms: 21 served over 200 ms with tickets waiting → growth starts at 0.105.
    reply = step(200);
    expect(reply.estimate).toBeCloseTo(21 / 200, 12);
    // 400 ms later (window 350–600: 26 served over 250 ms), twice that.
    for (let t = 210; t <= 600; t += 10) reply = step(t);
    expect(reply.estimate).toBeCloseTo(2 * (26 / 250), 12);
    // A rejection: the callee's rate is reached; the fleet counts for at most what it
    // got through, and growth starts again only once a whole window is served in full.
    reply = bookSlot(p, 610, { ...book('a', 0.3), served: 0, rejected: 1 });
    expect(reply.estimate).toBeCloseTo(26 / 260, 12);
    // With no ticket waiting, the fleet is not held back by its queue: no growth.
    const idle = emptyPace();
    let synced = syncPace(idle, 0, { ...sync('a', 0.03), served: 10 });
    for (let t = 100; t <= 600; t += 100) synced = syncPace(idle, t, { ...sync('a', 0.03), served: 10 });
    expect(synced.estimate).toBeCloseTo(0.03, 12);
  });

  it('over a spell of rejections the fleet counts for at most what it got through since it began (regression: four processes against 60 a minute sent 3.96× the bound’s requests)', () => {
    expect([FLEET_SPELL_MIN_MS, FLEET_SPELL_END_MS]).toEqual([1_000, 5_000]);
    const p = emptyPace();
    // A window served 10 and rejected 5 at 0; the processes' shares say 50/s.
    let reply = bookSlot(p, 0, { ...book('a', 0.05), served: 10, rejected: 5 });
    // Half a second on, no answer in the 300 ms window: the shares stand (the spell is young).
    reply = bookSlot(p, 500, book('a', 0.05));
    expect(reply.estimate).toBeCloseTo(0.05, 12);
    // Two seconds on, still nothing answered: 10 served over the spell's 2 s (5/s) is the
    // callee's rate to the fleet.
    reply = bookSlot(p, 2_000, book('a', 0.05));
    expect(reply.estimate).toBeCloseTo(10 / 2_000, 12);
    expect(reply.gap).toBeCloseTo(200, 9);
    // Nothing served for a long while ends no spell (a window's wait holds no rejection either);
    // the queue keeps its floor, minRate.
    reply = bookSlot(p, 20_000, book('a', 0.05));
    expect(reply.estimate).toBeCloseTo(10 / 20_000, 12);
    expect(reply.gap).toBeCloseTo(1_000, 9);
    // Served from 20 s on with no rejection: the spell lasts until 5 s after that first success…
    syncPace(p, 20_000, { ...sync('a', 0.05), served: 1 });
    expect(syncPace(p, 24_900, sync('a', 0.05)).estimate).toBeCloseTo(11 / 24_900, 12);
    // …and a rejection before then starts that count again.
    syncPace(p, 24_950, { ...sync('a', 0.05), rejected: 1 });
    syncPace(p, 26_000, { ...sync('a', 0.05), served: 1 });
    expect(syncPace(p, 30_900, sync('a', 0.05)).estimate).toBeCloseTo(12 / 30_900, 12);
    // Served for 5 s with no rejection: the spell is over and the shares stand again.
    expect(syncPace(p, 31_000, sync('a', 0.05)).estimate).toBeCloseTo(0.05, 12);
  });

  it('a fleet that only searches spaces its queue at the search’s probing rate, below minRate (regression: four processes searched a minute’s wait with 71 requests, a pacer alone with 23)', () => {
    const p = emptyPace();
    // A probe every 5 s: the queue follows it, though minRate is one per second.
    expect(bookSlot(p, 0, book('a', 0.000_2, RATE_PROBE)).gap).toBeCloseTo(5_000, 9);
    // Once a rate is measured, minRate is the floor again.
    expect(bookSlot(p, 0, book('b', 0.000_1, RATE_SHARE)).gap).toBeCloseTo(1_000, 9);
  });

  it('re-spaces every waiting ticket when the fleet’s rate moves, keeping those already due', () => {
    const p = emptyPace();
    const tickets = Array.from({ length: 5 }, () => bookSlot(p, 0, book('a', 0.01)).ticket);
    // Ticket 1 left at once (due: −∞ in the epoch that followed), the rest 100 ms apart.
    expect(tickets.map((k) => slotOf(p, k))).toEqual([Number.NEGATIVE_INFINITY, 100, 200, 300, 400]);
    // At 150 the fleet learns twice the rate: tickets 1 and 2 were due; 3 leaves one new gap
    // after the last due slot (100 + 50), the rest 50 ms apart.
    const reply = syncPace(p, 150, sync('a', 0.02));
    expect(tickets.map((k) => slotOf(reply, k))).toEqual([Number.NEGATIVE_INFINITY, Number.NEGATIVE_INFINITY, 150, 200, 250]);
    // Within the drift (10 %), nothing moves.
    syncPace(p, 160, sync('a', 0.021));
    expect(slotOf(p, tickets[4]!)).toBe(250);
    // A cut moves them out just as well (ticket 3 left at 150).
    syncPace(p, 160, sync('a', 0.01));
    expect(tickets.slice(2).map((k) => slotOf(p, k))).toEqual([Number.NEGATIVE_INFINITY, 250, 350]);
  });

  it("books no ticket whose slot comes after the caller's latest: the queue's end does not move", () => {
    const p = emptyPace();
    for (let i = 0; i < 4; i++) bookSlot(p, 0, book('a', 0.01));
    // Tickets 1–4 leave at −∞ (due), 100, 200, 300; the next would leave at 400.
    const refused = bookSlot(p, 0, { ...book('a', 0.01), latest: 399 });
    expect(refused.ticket).toBe(0);
    expect(p.ticket).toBe(5);
    // The epoch is still told (the caller learns where the queue stands).
    expect(slotOf(refused, 5)).toBe(400);
    const booked = bookSlot(p, 0, { ...book('a', 0.01), latest: 400 });
    expect(booked.ticket).toBe(5);
    expect(slotOf(p, p.ticket - 1)).toBe(400);
    // An empty queue's first slot is now: booked for a caller who can send now, not for one
    // whose time is already up.
    expect(bookSlot(emptyPace(), 50, { ...book('a', 0.01), latest: 50 }).ticket).toBe(1);
    expect(bookSlot(emptyPace(), 50, { ...book('a', 0.01), latest: 49 }).ticket).toBe(0);
  });

  it('a wait hint holds every waiting ticket, and an empty queue starts again from now', () => {
    const p = emptyPace();
    const first = bookSlot(p, 0, book('a', 0.01)).ticket;
    const second = bookSlot(p, 0, book('a', 0.01)).ticket;
    syncPace(p, 50, sync('a', 0.01, RATE_SHARE, 500));
    expect(slotOf(p, first)).toBe(Number.NEGATIVE_INFINITY);
    expect(slotOf(p, second)).toBe(550);
    // Long after the queue drained (and the hint passed), the next ticket leaves at once.
    const later = bookSlot(p, 5_000, book('a', 0.01));
    expect(slotOf(later, later.ticket)).toBe(5_000);
  });

  describe('first tries the processes send unpaced while the fleet paces', () => {
    /** A fleet paced at 100/s (one share, gap 10 ms) with tickets 1–5 booked at 0: slots 0, 10, …, 40. */
    function pacedFleet() {
      const p = emptyPace();
      for (let i = 0; i < 5; i++) bookSlot(p, 0, book('a', 0.1));
      expect([p.gap, slotOf(p, 2), slotOf(p, 5)]).toEqual([10, 10, 40]);
      return p;
    }

    it('push every waiting ticket a gap later per first try, the head never beyond three gaps from now (regression: four processes, 400 callers over 2 s, 1.18–1.21× the bound’s requests)', () => {
      expect(FLEET_UNPACED_HOLD_GAPS).toBe(3);
      const p = pacedFleet();
      // At 5 ms one first try: ticket 2 (due at 10) moves to 20, and every later one with it.
      let reply = syncPace(p, 5, { ...sync('a', 0.1), unpaced: 1 });
      expect([reply.baseTicket, reply.baseAt, reply.gap]).toEqual([2, 20, 10]);
      expect(slotOf(reply, 5)).toBe(50);
      // Ten more at 6 ms: the head goes no further than 6 + 3 gaps.
      reply = syncPace(p, 6, { ...sync('a', 0.1), unpaced: 10 });
      expect(reply.baseAt).toBe(36);
      // A head already three gaps out stays where it is; a booking reports its first tries too.
      const booked = bookSlot(p, 7, { ...book('a', 0.1), unpaced: 2 });
      expect(booked.baseAt).toBe(37);
      expect(slotOf(booked, booked.ticket)).toBe(37 + (booked.ticket - booked.baseTicket) * 10);
      // An empty queue's next slot moves the same way: the next booking waits behind them.
      const empty = emptyPace();
      bookSlot(empty, 0, book('a', 0.1));
      expect(slotOf(empty, empty.ticket)).toBe(10);
      syncPace(empty, 12, { ...sync('a', 0.1), unpaced: 1 });
      expect(bookSlot(empty, 12, book('a', 0.1)).baseAt).toBe(22);
    });

    it('push nothing while the fleet only searches, or under a wait hint', () => {
      const searching = emptyPace();
      bookSlot(searching, 0, book('a', 0.01, RATE_PROBE));
      bookSlot(searching, 0, book('a', 0.01, RATE_PROBE));
      const before = { baseTicket: searching.baseTicket, baseAt: searching.baseAt };
      const reply = syncPace(searching, 5, { ...sync('a', 0.01, RATE_PROBE), unpaced: 5 });
      expect(reply.estimate).toBe(0);
      expect({ baseTicket: reply.baseTicket, baseAt: reply.baseAt }).toEqual(before);
      const hinted = pacedFleet();
      syncPace(hinted, 1, { ...sync('a', 0.1, RATE_SHARE, 500) });
      const held = { baseTicket: hinted.baseTicket, baseAt: hinted.baseAt };
      expect(held.baseAt).toBe(501);
      syncPace(hinted, 5, { ...sync('a', 0.1), unpaced: 5 });
      expect({ baseTicket: hinted.baseTicket, baseAt: hinted.baseAt }).toEqual(held);
    });

    it('keep the head they pushed when the fleet re-spaces while they arrive, and not after', () => {
      expect(FLEET_ARRIVALS_MS).toBe(100);
      const p = pacedFleet();
      syncPace(p, 5, { ...sync('a', 0.1), unpaced: 3 });
      expect(p.baseAt).toBe(35);
      // The rate doubles (gap 5): re-spaced, the head would leave at once; first tries are still
      // arriving, so it stays at the pushed slot (within three new gaps of now).
      let reply = syncPace(p, 25, sync('a', 0.2));
      expect([reply.gap, reply.baseAt]).toEqual([5, 35]);
      // Past the arrivals window, a re-spacing starts one new gap after the last due ticket:
      // tickets 2–9 (slots 35–105) are due at 106, ticket 10 leaves at 105 + 5.
      const q = pacedFleet();
      syncPace(q, 5, { ...sync('a', 0.1), unpaced: 3 });
      for (let i = 0; i < 15; i++) bookSlot(q, 5, book('a', 0.1));
      reply = syncPace(q, 5 + FLEET_ARRIVALS_MS + 1, sync('a', 0.2));
      expect([reply.baseTicket, reply.baseAt, reply.gap]).toEqual([10, 110, 5]);
      // A report time ahead of now (another clock, a hostile peer) holds nothing either.
      const ahead = pacedFleet();
      ahead.unpacedAt = 1e15;
      expect(syncPace(ahead, 25, sync('a', 0.2)).baseAt).toBe(25);
    });

    it('hold a rejected fleet at what it got through, no less, while they arrive (regression: the backlog left at a fifth of the rate once they stopped, 1.41× the bound’s time)', () => {
      // 300 ms of reports every 10 ms, each one served and one rejected, a share of 20/s:
      // the callee serves 100/s to the fleet, first tries and retries together.
      const arriving = emptyPace();
      const alone = emptyPace();
      let withFirstTries = syncPace(arriving, 0, { ...sync('a', 0.02), served: 1, rejected: 1, unpaced: 2 });
      let withoutFirstTries = syncPace(alone, 0, { ...sync('a', 0.02), served: 1, rejected: 1 });
      for (let t = 10; t <= 300; t += 10) {
        withFirstTries = syncPace(arriving, t, { ...sync('a', 0.02), served: 1, rejected: 1, unpaced: 2 });
        withoutFirstTries = syncPace(alone, t, { ...sync('a', 0.02), served: 1, rejected: 1 });
      }
      // Window 50–300 ms: 26 served over 250 ms.
      expect(withFirstTries.estimate).toBeCloseTo((FLEET_DELIVERY_GAIN * 26) / 250, 12);
      expect(withoutFirstTries.estimate).toBeCloseTo(0.02, 12);
    });
  });

  it('a fleet that was served and then had nothing to send for a whole window ends its spell with its next answers (regression: herds 1.5 s apart read as the callee’s rate, 1.25–1.55× the bound’s time)', () => {
    expect(FLEET_IDLE_GAPS).toBe(4);
    // A herd at 50/s (gap 20: four gaps fit a 300 ms window): rejected at 0, served until 400.
    const p = emptyPace();
    for (let i = 0; i < 20; i++) bookSlot(p, 0, book('a', 0.05));
    syncPace(p, 0, { ...sync('a', 0.05), rejected: 5 });
    for (let t = 20; t <= 400; t += 20) syncPace(p, t, { ...sync('a', 0.05), served: 1 });
    // Four seconds of silence (the herd is over), then the next herd's first answers: a spell
    // still running would read 20 served over 4.4 s (4.5/s).
    let reply = syncPace(p, 4_400, { ...sync('a', 0.05), served: 1, rejected: 1 });
    expect(p.spellFrom).toBe(4_400);
    reply = syncPace(p, 5_400, { ...sync('a', 0.05), served: 20 });
    expect(reply.estimate).toBeCloseTo(21 / 1_000, 12);
    // At a pace slower than four gaps a window, the same silence is the callee's (a slow
    // limit's wait, a search's probes): the spell goes on.
    const slow = emptyPace();
    expect(bookSlot(slow, 0, book('a', 0.005)).gap).toBe(200);
    syncPace(slow, 0, { ...sync('a', 0.005), rejected: 5 });
    for (let t = 200; t <= 1_000; t += 200) syncPace(slow, t, { ...sync('a', 0.005), served: 1 });
    syncPace(slow, 2_000, { ...sync('a', 0.005), served: 1, rejected: 1 });
    expect([slow.gap, slow.spellFrom]).toEqual([200, 0]);
  });
});

describe('FleetQueueView (a process’s view of the fleet’s queue)', () => {
  it('keeps the epoch of the reply the store answered last, and splits long waits so a moved slot is seen', () => {
    const view = new FleetQueueView((storeMs) => storeMs - 1_000, { followQueue: () => undefined });
    view.learn(2_000, { baseTicket: 10, baseAt: 2_000, gap: 100 });
    const ticket = view.ticket(15);
    expect(ticket.slotWait(1_000)).toBe(500);
    expect(ticket.holdFor(1_000)).toBe(40);
    // An older answer arriving late does not undo a newer one.
    view.learn(2_100, { baseTicket: 12, baseAt: 2_100, gap: 50 });
    view.learn(2_050, { baseTicket: 10, baseAt: 2_000, gap: 100 });
    expect(ticket.slotWait(1_000)).toBe(250);
    expect(ticket.slotWait(1_250)).toBe(0);
    expect(ticket.holdFor(1_248)).toBe(2);
  });

  it("leads the pacer to where this process's tickets end, earlier or later with every reply (regression: a fall-back waited 7 s)", () => {
    const ends: Array<[number, boolean | undefined]> = [];
    const view = new FleetQueueView((storeMs) => storeMs - 1_000, { followQueue: (nextMs, moved) => ends.push([nextMs, moved]) });
    // No ticket booked yet: nothing to follow.
    view.learn(1_000, { baseTicket: 1, baseAt: 1_000, gap: 75 });
    expect(ends).toEqual([]);
    // A first guess of 13/s: this process's ticket 93 leaves 7 s out; the pacer follows to the slot after it.
    view.learn(1_000, { baseTicket: 1, baseAt: 1_000, gap: 75 }, 93);
    expect(ends.at(-1)).toEqual([1_000 - 1_000 + 93 * 75, true]);
    // The fleet re-spaced at 100/s: a sync's reply brings the end in (no booking in it).
    view.learn(1_400, { baseTicket: 60, baseAt: 1_400, gap: 10 });
    expect(ends.at(-1)).toEqual([400 + 34 * 10, true]);
    // A booking answered before that sync, arriving late: its ticket counts, its epoch does not.
    view.learn(1_300, { baseTicket: 1, baseAt: 1_000, gap: 75 }, 95);
    expect(ends.at(-1)).toEqual([400 + 36 * 10, true]);
    // An earlier ticket arriving late does not pull the end back.
    view.learn(1_350, { baseTicket: 1, baseAt: 1_000, gap: 75 }, 90);
    expect(ends.at(-1)).toEqual([400 + 36 * 10, true]);
  });
});
