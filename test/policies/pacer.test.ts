import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidOptionsError } from '../../src/options/validate.js';
import { PACER_DEFAULTS, Pacer, type PacerOptions, type PacerSignal } from '../../src/policies/pacer.js';
import { book, burst, countNine, probedWindow, probesAfterFlight } from './support/pacer-flights.js';

/** Books `k` slots at `now`; returns each one's wait until its slot (not the first check). */
function slots(pacer: Pacer, now: number, k: number): number[] {
  return Array.from({ length: k }, () => {
    pacer.reserve(now);
    return pacer.slotWait(pacer.lastTicket, now);
  });
}

/** Throttling at 100/s (the herd's slot server): the first probe served confirmed D₀. */
function cruising(options: PacerOptions = {}): Pacer {
  const p = new Pacer(options);
  burst(p, 100, 100, 10);
  slots(p, 100, 3); // probes at 110, 130, 170
  p.onResult(200, 'ok', undefined, 110);
  return p;
}

/**
 * A token bucket answering in 1 ms, 100 callers at t = 0, 10 served: probes at 1.1, 1.3, 1.7,
 * … 52.1 ms rejected, the one at 103.3 ms served — and the request sent right after it (one
 * per round trip while they are served) rejected: one token restored, start-up at 1 / 51.1 ms.
 */
function fromBracket(): Pacer {
  const p = new Pacer();
  burst(p, 1, 100, 10);
  const probes = slots(p, 1, 90).map((w) => 1 + w);
  for (const sent of probes.slice(0, 9)) p.onResult(sent + 1, 'rejected', undefined, sent, true);
  expect(probes[9]).toBeCloseTo(103.3, 9);
  p.onResult(104.3, 'ok', undefined, probes[9], true);
  expect(p.searching).toBe(false);
  p.onResult(105.3, 'rejected', undefined, 104.3, true);
  expect(p.cuts).toBe(0);
  return p;
}

/**
 * A fixed window of 10 per `windowMs` from t = 0, the flight of 100 read in a backlog 40–50 ms
 * after it left (one event loop working through it); the other 90 booked at 50 ms. The probes
 * (54.1, 62.3, 78.6, 111.3, 176.8 ms …) come back in 1 ms: rejected until the window ends,
 * the first one after it served. Returns the tickets, the served probe's send time and the
 * index of the first ticket after it.
 */
function probedAfterBacklog(p: Pacer, windowMs: number): { tickets: number[]; probe: number; next: number } {
  for (let i = 0; i < 100; i++) p.onResult(40 + i * 0.1, i < 10 ? 'ok' : 'rejected', undefined, 0, false);
  const tickets = book(p, 90, 50);
  const probes = tickets.map((t) => 50 + p.slotWait(t, 50));
  let k = 0;
  for (; (probes[k] as number) <= windowMs; k++) p.onResult((probes[k] as number) + 1, 'rejected', undefined, probes[k], true);
  const probe = probes[k] as number;
  p.onResult(probe + 1, 'ok', undefined, probe, true);
  return { tickets, probe, next: k + 1 };
}

/**
 * As `probedAfterBacklog` (a window of 100 ms), then the count, on a busy event loop: its
 * callers look only every 20 ms, and though its answers come back in 1 ms, the last is read
 * at 192.3 ms, past l (the window holds 10): it ran out of time after four. (Had every answer
 * taken 20 ms, the rest would not have fitted in l and gone pipelined: `pipeRest`.) Returns the
 * tickets, the probe's send time, the next ticket's index and the time of the last answer.
 */
function countRanOutOfTime(p: Pacer): { tickets: number[]; probe: number; k: number; now: number } {
  const { tickets, probe, next } = probedAfterBacklog(p, 100);
  let now = probe + 1;
  let k = next;
  for (; k < next + 4; k++) {
    expect(p.holdFor(tickets[k] as number, now)).toBe(0);
    p.onResult(k < next + 3 ? now + 1 : now + 20, 'ok', undefined, now, true);
    now += 20;
  }
  return { tickets, probe, k, now };
}

/**
 * A slow flight against a worker pool (10 workers × 100 ms, one queued: 89 rejected within
 * 60 ms, 10 served at 140 ms, the queued one at 240 ms) ends the search at 100/s, the pacer
 * alone: requests go as the pool's 11 places free up (`PoolWindow`).
 */
function slowFlightPool(): Pacer {
  const p = new Pacer();
  for (let i = 0; i < 89; i++) p.onResult(40 + i * 0.2, 'rejected', undefined, 0, false);
  for (let i = 0; i < 10; i++) p.onResult(140, 'ok', undefined, 0, false);
  expect(p.rate(140)).toBeCloseTo(100, 6);
  p.onResult(240, 'ok', undefined, 0, false);
  return p;
}

/**
 * Start-up in cruise from `at` (80 requests waiting): paced requests served every 10 ms for
 * 60 ms, one rejected (the first cut), then 100 ms more served. The rate right after the cut
 * and at the end.
 */
function rampCutThenServed(p: Pacer, at: number): { afterCut: number; end: number } {
  book(p, 80, at);
  const ok = (sent: number) => p.onResult(sent + 1, 'ok', undefined, sent, true);
  for (let sent = at + 10; sent <= at + 60; sent += 10) ok(sent);
  p.onResult(at + 71, 'rejected', undefined, at + 70, true);
  expect(p.cuts).toBe(1);
  const afterCut = p.rate(at + 71) as number;
  for (let sent = at + 80; sent <= at + 180; sent += 10) ok(sent);
  return { afterCut, end: p.rate(at + 181) as number };
}

/**
 * Start-up from a rate the first probe confirmed, grown to 283/s (`grown`, read at 279 ms);
 * then windows of 10 per 100 ms at 300, 400, 500, each served in a burst (1 ms apart: a flow
 * peak of 1,000/s) and followed by rejections.
 */
function windowsInBursts(options: PacerOptions = {}): { p: Pacer; grown: number } {
  const p = cruising(options);
  book(p, 80, 200);
  const ok = (sent: number) => p.onResult(sent + 1, 'ok', undefined, sent, true);
  const rejected = (sent: number) => p.onResult(sent + 1, 'rejected', undefined, sent, true);
  ok(226);
  ok(252);
  ok(278);
  const grown = p.rate(279) as number;
  for (const window of [300, 400, 500]) {
    for (let sent = window; sent < window + 10; sent++) ok(sent);
    rejected(window + 10);
    if (window < 500) for (const sent of [window + 30, window + 60, window + 95]) rejected(sent);
  }
  return { p, grown };
}

describe('Pacer', () => {
  it('a followed queue that was re-spaced earlier moves the point local bookings come after (regression: a fall-back waited 7 s)', () => {
    // A fleet's queue, booked at a first guess of 13/s, ended 7 s out; then the fleet re-spaced
    // at 100/s and its end came in to 400 ms. A process whose store goes down now books locally.
    const kept = cruising();
    kept.followQueue(7_200);
    kept.followQueue(400);
    expect(slots(kept, 300, 1)[0]).toBeGreaterThanOrEqual(6_900);
    const moved = cruising();
    moved.followQueue(7_200);
    moved.followQueue(400, true);
    const wait = slots(moved, 300, 1)[0] as number;
    expect(wait).toBeGreaterThanOrEqual(100);
    expect(wait).toBeLessThan(200);
  });

  it('defaults are pinned', () => {
    expect(PACER_DEFAULTS).toEqual({
      decrease: 0.85,
      probeGain: 1.5,
      recoveryMs: 1_000,
      quietMs: 2_000,
      windowMs: 500,
      buckets: 10,
      maxSpacingMs: 1_000,
      paceFirstAttempts: false,
    });
    const p = new Pacer();
    expect([
      p.decrease,
      p.probeGain,
      p.recoveryMs,
      p.quietMs,
      p.windowMs,
      p.buckets,
      p.maxSpacingMs,
      p.paceFirstAttempts,
    ]).toEqual([0.85, 1.5, 1_000, 2_000, 500, 10, 1_000, false]);
  });

  it('rejects bad options, listing every problem with its value', () => {
    try {
      new Pacer({ decrease: 1, probeGain: 0.5, recoveryMs: 0, buckets: 0, paceFirstAttempts: 'yes', rate: 100 } as never);
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidOptionsError);
      const text = (error as InvalidOptionsError).problems.join('\n');
      for (const fragment of [
        '`rate`',
        '`decrease`',
        '`probeGain`',
        '0.5',
        '`recoveryMs`',
        '`buckets`',
        '`paceFirstAttempts`',
        '"yes"',
      ]) {
        expect(text).toContain(fragment);
      }
    }
  });

  it('costs nothing while the callee is healthy: no throttling, no wait, no booking', () => {
    const p = new Pacer();
    for (let t = 0; t < 10_000; t += 7) p.onResult(t, 'ok', undefined, t - 30);
    expect(p.throttling(10_000)).toBe(false);
    expect([p.reserve(10_000), p.reserve(10_000), p.reserve(10_000)]).toEqual([0, 0, 0]);
    expect(p.paced).toBe(0);
    expect(p.rate(10_000)).toBeGreaterThan(130); // it measured 1 per 7 ms meanwhile
  });

  it('a rejection starts a search: simultaneous callers become probes with doubling gaps from the flight’s rate', () => {
    const p = new Pacer();
    burst(p, 100, 100, 10); // the herd's first slot: 10 of 100 served in 100 ms, D₀ = 100/s
    expect(p.throttling(100)).toBe(true);
    expect(p.searching).toBe(true);
    expect(p.rate(100)).toBeCloseTo(100, 9);
    expect(slots(p, 100, 5)).toEqual([10, 30, 70, 150, 310]);
    expect(p.paced).toBe(5);
  });

  it('learns any scale: k callers at one instant get probes latency/served × (2^(i+1) − 1) apart, up to a quarter of the larger of maxSpacingMs and the time waited, at most 30 maxSpacingMs (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 5, max: 2_000 }),
        fc.integer({ min: 1, max: 30 }),
        (served, rejected, latency, k) => {
          const p = new Pacer();
          burst(p, latency, served + rejected, served);
          const got = slots(p, latency, k);
          // Gaps g₀, 2g₀, 4g₀, … up to a quarter of maxSpacingMs; that while less than
          // maxSpacingMs has passed; then a quarter of the time waited, at most 30 maxSpacingMs.
          const cap = p.maxSpacingMs / 4;
          let at = 0;
          let gap = latency / served;
          for (let i = 0; i < k; i++) {
            if (gap < cap) {
              at += gap;
              gap *= 2;
            } else at += at < 4 * cap ? cap : Math.min(at / 4, 30 * p.maxSpacingMs);
            if (Math.abs(got[i]! - at) > 1e-6 * (1 + at)) return false;
          }
          return true;
        },
      ),
    );
  });

  it('the first probe served ends the search at 1 / (last rejected probe’s offset), then measures (token bucket)', () => {
    // A token bucket (100/s, burst 10) answering in 1 ms: the flight reads 10 per ms.
    const p = new Pacer();
    burst(p, 1, 100, 10);
    const probes = slots(p, 1, 90).map((w) => 1 + w);
    expect(probes.slice(0, 7)).toEqual([1.1, 1.3, 1.7, 2.5, 4.1, 7.3, 13.7].map((t) => expect.closeTo(t, 9)));
    for (const sent of probes.slice(0, 6)) p.onResult(sent + 1, 'rejected', undefined, sent);
    expect(p.searching).toBe(true);
    p.onResult(14.7, 'ok', undefined, probes[6]);
    expect(p.searching).toBe(false);
    // Capacity came back between 6.3 and 12.7 ms after the flight: 1 / 6.3 ms (≤ 2× high).
    expect(p.rate(14.7)).toBeCloseTo(1_000 / 6.3, 6);
    expect(p.cuts).toBe(0);
  });

  it('a probe served after a later probe was rejected is bounded by that rejection, not taken as the flight’s rate holding (regression: a pool’s herd started at 1,000/s)', () => {
    // As above, but the first probe (1.1 ms) waited in the callee's queue: the next five were
    // rejected, answered in 1 ms, before it came back served at 60 ms.
    const p = new Pacer();
    burst(p, 1, 100, 10);
    const probes = slots(p, 1, 90).map((w) => 1 + w);
    for (const sent of probes.slice(1, 6)) p.onResult(sent + 1, 'rejected', undefined, sent, true);
    p.onResult(60, 'ok', undefined, probes[0], true);
    expect(p.searching).toBe(false);
    // The last rejected probe left 6.3 ms after the search began (at 1 ms): 1 / 6.3 ms, not
    // the first probe's 1 / 0.1 ms.
    expect(p.rate(60)).toBeCloseTo(1_000 / 6.3, 6);
  });

  it('a flight answered together and read one by one is probed from where its reading last raised D₀, not from the first read (regression: a real slot server’s herd started up at 24–37/s)', () => {
    // A slot server holds every answer to 110 ms. The flight left over 25 ms, and this client
    // reads its 100 answers one by one until 139.7 ms: the ten sent first were served, read
    // one in ten. Each rejected caller books a slot as its answer is read, and each served
    // answer read raises D₀ and re-spaces the probes from that moment.
    const p = new Pacer();
    const tickets: number[] = [];
    for (let i = 0; i < 100; i++) {
      const now = 110 + i * 0.3;
      const served = i % 10 === 9;
      p.onResult(now, served ? 'ok' : 'rejected', undefined, served ? (i - 9) / 40 : 2.5 + i * 0.225, false);
      if (!served) {
        p.reserve(now);
        tickets.push(p.lastTicket);
      }
    }
    const probe = 139.7 + p.slotWait(tickets[0] as number, 139.7);
    expect(probe).toBeCloseTo(151.89, 2);
    // Served at the next slot's end: D₀ held, ~66/s (1 / 15.2 ms, from the last re-spacing at
    // 136.7 ms). From the first read (110 ms) it was 1 / 41.9 ms: 24/s.
    p.onResult(210, 'ok', undefined, probe, true);
    expect(p.searching).toBe(false);
    expect(p.rate(210)).toBeGreaterThan(60);
    expect(p.rate(210)).toBeLessThan(100);
  });

  it('a probe that left late because this client looked late is measured to when it was due (regression: a cold process’s first herds started up at 24–36/s)', () => {
    // The flight of 100 read in a backlog 40–50 ms after it left, the 90 rejected callers
    // booked at 50 ms. The first probe's caller sleeps as told, but when it should look again
    // its event loop is busy (a cold process still reading): it looks `lateMs` after it was
    // told to, finds the probe due, sends it, and the probe is served.
    const firstProbe = (lateMs: number) => {
      const p = new Pacer();
      for (let i = 0; i < 100; i++) p.onResult(40 + i * 0.1, i < 10 ? 'ok' : 'rejected', undefined, 0, false);
      const ticket = book(p, 90, 50)[0] as number;
      let at = 50;
      let wait = p.holdFor(ticket, at);
      for (let checks = 0; wait > 0; checks++) {
        if (checks > 100) throw new Error('the probe never fell due');
        // Only the look that should find the probe due is late.
        at += wait + (wait >= p.slotWait(ticket, at) ? lateMs : 0);
        wait = p.holdFor(ticket, at);
      }
      p.onResult(at + 1, 'ok', undefined, at, true);
      expect(p.searching).toBe(false);
      return { rate: p.rate(at + 1) as number, sent: at };
    };
    const onTime = firstProbe(0);
    const late = firstProbe(20);
    expect(late.sent).toBeCloseTo(onTime.sent + 20, 9);
    // D₀ held (1 / 4.09 ms). The 20 ms were this client's, less the 4 a timer may be late by
    // on its own: 1 / 8.09 ms. Measured to the late send, it read 1 / 24.09 ms (41/s).
    expect(onTime.rate).toBeCloseTo(1_000 / 4.09, 0);
    expect(late.rate).toBeCloseTo(1_000 / 8.09, 0);
    // Late by less than a timer may be on its own: measured to the send, as before.
    expect(firstProbe(3).rate).toBeCloseTo(1_000 / 7.09, 0);
  });

  it('a slow flight ends the search at the callee’s serving rate, the requests’ way there and back taken out (express-queue regression)', () => {
    // 10 workers × 100 ms, one event loop shared with 100 callers: the requests reach the
    // callee ~20 ms after they were sent and the answers take ~20 ms back (rejections: 40 ms).
    // Before, the level was the flight's 10 per 140 ms (measured on express-queue: 78/s for
    // a 100/s server, and the herd crept up from there: 1.3–1.9 s instead of ~1.1 s).
    const p = new Pacer();
    for (let i = 0; i < 90; i++) p.onResult(40 + i * 0.2, 'rejected', undefined, 0, false);
    expect(p.searching).toBe(true);
    for (let i = 0; i < 10; i++) p.onResult(140, 'ok', undefined, 0, false);
    expect(p.searching).toBe(false);
    expect(p.rate(140)).toBeCloseTo(100, 6);
  });

  it('a slow flight ended by its straggler keeps the best rate the flight proved (express-queue regression)', () => {
    // Rejections after 20–70 ms and one at 121 ms (one event loop works through the burst), ten
    // served at 120–122 ms — not slower than twice the slowest rejection, nor a run — and the one
    // that waited in the callee's queue at 260 ms, which ends the search. The flight proved 10
    // per 102 ms of the callee's time at its tenth answer; the straggler alone reads 11 per 240.
    const p = new Pacer();
    for (let i = 0; i <= 50; i++) p.onResult(20 + i, 'rejected', undefined, 0, false);
    p.onResult(120, 'ok', undefined, 0, false);
    p.onResult(121, 'rejected', undefined, 0, false);
    for (let i = 0; i < 9; i++) p.onResult(122, 'ok', undefined, 0, false);
    expect(p.searching).toBe(true);
    p.onResult(260, 'ok', undefined, 0, false);
    expect(p.searching).toBe(false);
    expect(p.rate(260)).toBeCloseTo(10_000 / 102, 6);
  });

  it('three of the flight served in a row, each slower than every rejection, end the search (regression: real express-queue waited for the queued eleventh)', () => {
    // A real express-queue (10 × 100 ms, one waiting) on the event loop of 100 callers: the
    // burst's rejections came back after 40–80 ms, the ten served at 140 ms. Slower than twice
    // the slowest rejection only the eleventh, which waited in the queue, 100 ms later.
    // A probe sent once the burst is through is rejected in 2 ms: not the way there and back
    // the flight met (the flight would read 10 per 138 ms).
    const p = new Pacer();
    for (let i = 0; i <= 40; i++) p.onResult(40 + i, 'rejected', undefined, 0, false);
    p.onResult(92, 'rejected', undefined, 90, true);
    p.onResult(140, 'ok', undefined, 0, false);
    p.onResult(140, 'ok', undefined, 0, false);
    expect(p.searching).toBe(true);
    p.onResult(140, 'ok', undefined, 0, false);
    expect(p.searching).toBe(false);
    // The rest of the flight raises the level as it arrives: 10 per 100 ms of the callee's time.
    for (let i = 0; i < 7; i++) p.onResult(140, 'ok', undefined, 0, false);
    expect(p.rate(140)).toBeCloseTo(100, 6);
  });

  it('successes slower only because they left first do not make a slow flight (regression: a slot server answering everything at its end)', () => {
    // A callee that holds every answer to the end of its slot serves the first ten to arrive:
    // the flight left over 26 ms, and every answer comes back at 110 ms. The served ones are
    // slower than every rejection by the time the flight took to leave, not because the callee
    // spent time serving them; read as a slow flight they measured 297/s for 100/s.
    const p = new Pacer();
    for (let i = 0; i < 24; i++) p.onResult(110 + i * 0.01, 'rejected', undefined, 3 + i, false);
    for (let i = 0; i < 3; i++) p.onResult(110.3 + i * 0.2, 'ok', undefined, i * 0.2, false);
    expect(p.searching).toBe(true);
    for (let i = 0; i < 7; i++) p.onResult(111 + i * 0.1, 'ok', undefined, 0.6 + i * 0.2, false);
    expect(p.searching).toBe(true);
  });

  it('successes that merely vary with the rejections do not make a slow flight', () => {
    // Latencies that vary (the same spread for rejections and successes): a success slower
    // than every rejection so far, then a rejection, then two more such successes — no run.
    const p = new Pacer();
    for (let i = 0; i < 20; i++) p.onResult(2 + i * 0.2, 'rejected', undefined, 0, false);
    p.onResult(6.5, 'ok', undefined, 0, false);
    p.onResult(6.6, 'rejected', undefined, 0, false);
    p.onResult(7, 'ok', undefined, 0, false);
    p.onResult(7.5, 'ok', undefined, 0, false);
    expect(p.searching).toBe(true);
  });

  it('successes a hair slower than every rejection, read in the same backlog, do not make a slow flight (regression: a cold process’s first herd took express-rate-limit for a worker pool)', () => {
    // A fixed window that reopened while a cold process was still sending its flight: 90
    // rejections back over 80 ms, the slowest 168.5 ms; then three served, sent after the
    // window reopened, read 0.1–0.3 ms slower than that. No callee spent time serving them.
    const p = new Pacer();
    for (let i = 0; i < 90; i++) p.onResult(175.5 + i * (80 / 89), 'rejected', undefined, 7 + i * (80 / 89), false);
    expect(p.searching).toBe(true);
    p.onResult(256.6, 'ok', undefined, 88, false);
    p.onResult(256.9, 'ok', undefined, 88.2, false);
    p.onResult(257.8, 'ok', undefined, 89, false);
    expect(p.searching).toBe(true);
  });

  it('a pacer that only ever hears successes makes no throttling state (regression: a check on every answer made it)', () => {
    // The state a throttling pacer keeps is made on first use; every lane's pacer that never
    // meets a rejection should not carry it.
    const p = new Pacer();
    for (let i = 0; i < 5; i++) p.onResult(i + 1, 'ok', undefined, i);
    expect((p as unknown as { throttleState: unknown }).throttleState).toBeUndefined();
  });

  it('one first try sent after the search began and served in twice the slowest rejection is no slow flight; a second is (regression: a fixed window across lognormal latencies taken for a pool at 194/s)', () => {
    // The flight, sent at 0: ten served in 5–9 ms, then rejections back after 10–30 ms. First
    // tries keep arriving, sent 20–50 ms, each rejected in 20 ms.
    const p = new Pacer();
    for (let i = 0; i < 10; i++) p.onResult(5 + i * 0.4, 'ok', undefined, 0, false);
    for (let i = 0; i <= 20; i++) p.onResult(10 + i, 'rejected', undefined, 0, false);
    for (let i = 0; i <= 30; i++) p.onResult(40 + i, 'rejected', undefined, 20 + i, false);
    expect(p.searching).toBe(true);
    // A first try sent at 60 ms served in 110 ms, with no rejection for 100 ms: a tail of
    // latencies that spread as much as a callee busy serving.
    p.onResult(170, 'ok', undefined, 60, false);
    expect(p.searching).toBe(true);
    // A second: the callee spends time serving.
    p.onResult(175, 'ok', undefined, 62, false);
    expect(p.searching).toBe(false);
  });

  it('a run of slow successes read too soon after the last rejections is confirmed by a later answer (regression: a cold process’s first herd against express-queue started up from 6–9/s)', () => {
    // A cold process: rejections back from 152 to 280 ms (the slowest 200 ms), the ten served
    // in the same backlog right after them, 250–279 ms each — too soon after the last
    // rejection to tell a pool's service from the order a busy event loop read them in.
    const p = new Pacer();
    for (let i = 0; i < 90; i++) p.onResult(152 + i * (128 / 89), 'rejected', undefined, 52 + i * (28 / 89), false);
    for (let i = 0; i < 10; i++) p.onResult(281 + i, 'ok', undefined, 2 + i * 4, false);
    expect(p.searching).toBe(true);
    // A probe answered 120 ms later, with no rejection since: the run stands — a slow flight,
    // a pool. Before, the probe alone ended the search, and start-up crept up from ~7/s.
    p.onResult(400, 'ok', undefined, 300, true);
    expect(p.searching).toBe(false);
    expect(p.rate(400)).toBeGreaterThan(40);
    // The pool's window holds as many in flight as the flight served.
    const tickets = book(p, 30, 400);
    expect(tickets.filter((t) => t === 0 || p.holdFor(t, 500) === 0)).toHaveLength(10);
  });

  it('a flight whose first rejection came back the instant it left is still the flight: its successes make a slow flight (regression: a simulated pool’s herd paced from a probe’s guess, up to 344 requests)', () => {
    // Every request of the herd sent at t = 0, the first rejection answered at t = 0 too: the
    // search begins at the instant the flight left. 10 workers × 100 ms, one queued.
    const p = new Pacer();
    for (let i = 0; i < 89; i++) p.onResult(i * 0.2, 'rejected', undefined, 0, false);
    for (let i = 0; i < 10; i++) p.onResult(140, 'ok', undefined, 0, false);
    expect(p.searching).toBe(false);
    expect(p.rate(140)).toBeGreaterThan(70);
    // The pool's window holds as many in flight as the flight served, and follows its rest.
    p.onResult(240, 'ok', undefined, 0, false);
    const tickets = book(p, 30, 240);
    expect(tickets.filter((t) => t === 0 || p.holdFor(t, 350) === 0)).toHaveLength(11);
  });

  it('after a slow flight, a pacer alone lets requests go as places in the pool free up', () => {
    // 10 workers × 100 ms, one queued: the flight served 11, so 11 may be in flight. The queue
    // is spaced at 3× the flight's rate; once those slots are due, the places hold them back.
    const p = slowFlightPool();
    const tickets = book(p, 30, 240);
    const due = (now: number) => tickets.filter((t) => t === 0 || p.holdFor(t, now) === 0).length;
    expect(due(350)).toBe(11);
    expect(due(400)).toBe(11);
    // Each answer frees a place, and one more goes.
    p.onResult(401, 'ok', undefined, 300, true);
    p.onResult(402, 'ok', undefined, 300, true);
    expect(due(402)).toBe(13);
    // Waiting for a place is asked about again within a quarter of one place's time
    // (latency of the successes / 11 places), not at the next slot of a rate.
    expect(p.holdFor(tickets[13]!, 402)).toBeGreaterThan(0);
    expect(p.holdFor(tickets[13]!, 402)).toBeLessThan(150 / 11 / 4);
  });

  it('a slow flight read only after a served probe ended the search is a pool all the same: medians say so, not its slowest rejection (regression: one rejection from a lognormal tail, a simulated pool paced at a probe’s guess: 1.49× and 1.55× the bound’s time)', () => {
    /** 88 of the flight rejected in 40–57 ms, one more in 100 ms; a probe served; then the flight's 10 served, `servedMs` after they left. */
    const flightThenProbe = (servedMs: number) => {
      const p = new Pacer();
      for (let i = 0; i < 88; i++) p.onResult(40 + i * 0.2, 'rejected', undefined, 0, false);
      const tickets = book(p, 89, 50);
      const probe = 50 + p.slotWait(tickets[0]!, 50);
      p.onResult(100, 'rejected', undefined, 0, false);
      p.onResult(125, 'ok', undefined, probe, true);
      // The search ended on the probe, and paces by rate from its guess.
      expect(p.searching).toBe(false);
      expect(p.rate(125)).toBeCloseTo(25, 6);
      for (let i = 0; i < 10; i++) p.onResult(servedMs + i * 0.1, 'ok', undefined, 0, false);
      // With nothing answered for a second: how many of the waiting requests are due, and how
      // many go when all their callers ask at once.
      const due = tickets.slice(1).filter((t) => p.slotWait(t, 1_000) === 0).length;
      return { due, gone: tickets.slice(1).filter((t) => p.holdFor(t, 1_000) === 0).length };
    };
    // Served in 140 ms, rejected in ~49 (the median): a pool of ten places, held as they free up.
    expect(flightThenProbe(140).gone).toBe(10);
    // Served in 60 ms: latencies that spread, no pool; paced at 25/s — and callers that all ask
    // long after they were told go two at once, the rest one gap apart (`LateWakeQueue`).
    expect(flightThenProbe(60)).toEqual({ due: 22, gone: 2 });
  });

  it('a rejection in a pool’s window takes a place back instead of cutting the rate (regression: a simulated pool paced at 23/s of 100/s for 3 s)', () => {
    const p = slowFlightPool();
    const before = p.rate(240) as number;
    const tickets = book(p, 30, 240);
    const waiting = tickets.slice(11);
    const due = (now: number) => waiting.filter((t) => p.holdFor(t, now) === 0).length;
    expect(tickets.filter((t) => t === 0 || p.holdFor(t, 350) === 0)).toHaveLength(11);
    p.onResult(360, 'rejected', undefined, 300, true);
    expect(p.cuts).toBe(0);
    expect(p.rate(360)).toBeCloseTo(before, 6);
    // The rejected request's place is gone with it: 10 in flight now, and 10 allowed.
    expect(due(360)).toBe(0);
    p.onResult(380, 'ok', undefined, 300, true);
    expect(due(380)).toBe(1);
  });

  it('a pool whose own requests are served as fast as they are rejected, or far faster than its flight, was no pool: its rejections cut the rate again (regression: real express-rate-limit herds of 445–455 requests, bound 190; then 255–280 requests)', () => {
    // The flight read as a pool (a cold process: successes and rejections alike ~157 ms), but
    // the window's requests come back faster. A pool's would be served in its service time
    // (100 ms here) and rejected at once: that one stays a pool.
    const run = (okLatency: number, rejectLatency: number) => {
      const p = slowFlightPool();
      book(p, 60, 240);
      let sent = 300;
      for (let i = 0; i < 10; i++, sent += 2) p.onResult(sent + okLatency, 'ok', undefined, sent, true);
      sent += okLatency;
      const cuts: number[] = [];
      for (let i = 0; i < 10; i++, sent += 2) {
        p.onResult(sent + rejectLatency, 'rejected', undefined, sent, true);
        cuts.push(p.cuts);
      }
      return { cuts, rate: p.rate(sent) as number };
    };
    // Served in 1 ms, over 100 times faster than the flight: no pool from the fourth success
    // on, and the first rejection cuts. (Until the rejections said so too — eight of each
    // counted — the window sent one request per place freed, and a cut then released the
    // queue at the flight's rate: ~60 requests at once.)
    const fast = run(1, 1);
    expect(fast.cuts).toEqual(Array.from({ length: 10 }, () => 1));
    expect(fast.rate).toBeLessThan(100);
    // Served in 40 ms, not four times faster than the flight, but as fast as rejected: eight of
    // each counted before the latencies say anything; then the rejection cuts.
    const even = run(40, 40);
    expect(even.cuts.slice(0, 7)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(even.cuts[7]).toBe(1);
    expect(even.rate).toBeLessThan(100);
    const slow = run(100, 1);
    expect(slow.cuts).toEqual(Array.from({ length: 10 }, () => 0));
    expect(slow.rate).toBeCloseTo(100, 6);
  });

  it('a pool dropped re-spaces the requests its window held back: they do not all go at once (regression: real express-rate-limit, a cold process: 45–70 requests at once, 255–280 in the herd)', () => {
    const p = slowFlightPool();
    const tickets = book(p, 60, 240);
    // Callers look every 10 ms; the window lets the flight's places go, the rest wait for
    // places to free. Its successes come back in 1 ms, one every 50 ms: over a hundred times
    // faster than the flight's 140 ms, four of them say it is no pool.
    const sent = new Set<number>();
    for (let now = 241; now < 452; now += 10) {
      for (const t of tickets) if (!sent.has(t) && p.holdFor(t, now) === 0) sent.add(t);
      if (now % 50 === 1 && now >= 301) p.onResult(now, 'ok', undefined, now - 1, true);
    }
    expect(sent.size).toBeGreaterThan(5);
    expect(sent.size).toBeLessThan(20);
    const now = 452;
    const held = tickets.filter((t) => !sent.has(t));
    const waits = held.map((t) => p.slotWait(t, now));
    expect(waits.filter((w) => w === 0).length).toBeLessThanOrEqual(2);
    // Spaced at the rate the pool was taken for (its 11 places per 140 ms), start-up from there.
    expect((waits[3]! - waits[2]!) * (p.rate(now) as number)).toBeCloseTo(1000, 6);
    expect(p.rate(now) as number).toBeLessThan(100);
  });

  it('a caller that gives up while waiting for a place hands it to the next booking', () => {
    const p = slowFlightPool();
    const tickets = book(p, 30, 240);
    expect(p.holdFor(tickets[20]!, 350)).toBeGreaterThan(0);
    expect(p.release(tickets[20]!, 350)).toBe(true);
    p.reserve(350);
    expect(p.lastTicket).toBe(tickets[20]);
  });

  it('an answer that says nothing about load, or none at all for four service times, frees a place', () => {
    const p = slowFlightPool();
    const tickets = book(p, 30, 240);
    const waiting = tickets.slice(11);
    const due = (now: number) => waiting.filter((t) => p.holdFor(t, now) === 0).length;
    expect(tickets.filter((t) => t === 0 || p.holdFor(t, 350) === 0)).toHaveLength(11);
    expect(due(350)).toBe(0);
    // A 500 (or a reset): not load, but the request is done.
    p.onSettled(355, 300, true);
    expect(due(355)).toBe(1);
    // Nothing answered for 4 × the successes' latency (~600 ms here): a request the pacer let
    // go is taken as lost — its caller aborted, and its answer was never reported.
    expect(due(900)).toBe(1);
    expect(due(1_000)).toBe(2);
  });

  it('a success slower than the few rejections back, or read while rejections still arrive, is no slow flight (regression: exponential latencies ended searches at 1,000–13,000/s)', () => {
    // Latencies that spread widely, and a herd reaching the callee over 3 ms. Two rejections of
    // 0.1 ms back, then a success of 0.6 ms: six times the slowest so far, but two say nothing
    // of how slow rejections get.
    const p = new Pacer();
    p.onResult(0.1, 'rejected', undefined, 0, false);
    p.onResult(0.2, 'rejected', undefined, 0.1, false);
    p.onResult(0.6, 'ok', undefined, 0, false);
    expect(p.searching).toBe(true);
    // First tries that left after the search began keep coming back rejected (0.3 ms each): a
    // success of 2 ms — more than twice the slowest — read 0.1 ms after the latest of them.
    let at = 0.2;
    for (; at + 0.3 <= 1.9; at += 0.2) p.onResult(at + 0.3, 'rejected', undefined, at, false);
    p.onResult(2, 'ok', undefined, 0, false);
    expect(p.searching).toBe(true);
    for (; at <= 3; at += 0.2) p.onResult(at + 0.3, 'rejected', undefined, at, false);
    // Still too soon after the last rejection (3.3 ms) for a success of 5 ms: no rejection
    // back for half of what it took beyond the slowest (2.35 ms) — it may only have left first.
    p.onResult(5, 'ok', undefined, 0, false);
    expect(p.searching).toBe(true);
    // A success of 8 ms, 4.7 ms after the last rejection: served slowly.
    p.onResult(8, 'ok', undefined, 0, false);
    expect(p.searching).toBe(false);
  });

  it('the count runs on the probe’s own round trip, not on the smoothed one a backlog inflated (regression: real express-rate-limit herds never counted)', () => {
    // A fixed window of 10 per 100 ms: probes at 54.1, 62.3, 78.6 ms rejected, 111.3 served.
    // The smoothed round trip is still tens of ms from the flight; the probe's is 1 ms.
    const p = new Pacer();
    const { tickets, probe, next } = probedAfterBacklog(p, 100);
    expect(probe).toBeCloseTo(111.3, 1);
    expect(p.searching).toBe(false);
    // Nine more at one of its round trips each fit within l = 78.6 ms: the next request goes
    // at once, the one after it waits for that answer. Before, start-up from 1 / 28.6 ms.
    expect(p.holdFor(tickets[next] as number, probe + 1)).toBe(0);
    expect(p.holdFor(tickets[next + 1] as number, probe + 1)).toBeGreaterThan(0);
  });

  it('a count that ran out of time found a floor: after the window’s reopening, start-up grows from it (regression: herds with 10 ms latencies paced at 50–70/s for good)', () => {
    // The count ran out of time (`countRanOutOfTime`). The reprobes, answered in 1 ms, find
    // the reopening at 211.3.
    const p = new Pacer();
    let { tickets, probe, k, now } = countRanOutOfTime(p);
    expect(p.holdFor(tickets[k] as number, now)).toBeGreaterThan(0);
    let served = false;
    let last = now;
    while (!served) {
      const at = now + p.slotWait(tickets[k++] as number, now);
      served = at > probe + 100;
      p.onResult(at + 1, served ? 'ok' : 'rejected', undefined, at, true);
      last = at;
      now = at + 1;
    }
    // 5 per T (the middle of the last gap): a floor, and start-up goes on from it: a paced
    // success sent 25 ms after grows it ×√2. Cruising there, it would hardly move in 1 s.
    const floor = p.rate(now) as number;
    expect(floor).toBeLessThan(50);
    const sends = [0, 1].map(() => now + p.slotWait(tickets[k++] as number, now));
    for (const at of sends) p.onResult(at + 1, 'ok', undefined, at, true);
    expect((sends[1] as number) - last).toBeGreaterThan(25);
    expect(p.rate((sends[1] as number) + 1)).toBeCloseTo(floor * Math.SQRT2, 6);
  });

  it('a count whose answers come back slower than the probe’s goes pipelined for the rest, and finds the whole window (regression: four counted in l, then start-up from a floor; simulated fixed window, normal 10 ms: 1.25× the bound)', () => {
    // As `probedAfterBacklog`: a window of 10 per 100 ms, the probe served at 111.35 ms in 1 ms.
    // The count's answers then take 20 ms: one at a time, four fit in l (78.6 ms). Callers look
    // every 0.5 ms; the window serves its first 10 requests and rejects the rest.
    const p = new Pacer();
    const { tickets, probe, next } = probedAfterBacklog(p, 100);
    const served = [10, 1, 0, 0];
    const answers: { at: number; sent: number; ok: boolean }[] = [];
    let rejected = 0;
    let k = next;
    for (let now = probe + 1; now < 400; now += 0.5) {
      answers.sort((a, b) => a.at - b.at);
      while (answers.length > 0 && (answers[0] as { at: number }).at <= now) {
        const { at, sent, ok } = answers.shift() as { at: number; sent: number; ok: boolean };
        p.onResult(at, ok ? 'ok' : 'rejected', undefined, sent, true);
      }
      while (k < tickets.length && p.holdFor(tickets[k] as number, now) === 0) {
        const w = Math.floor(now / 100);
        const ok = (served[w] as number) < 10;
        if (ok) served[w] = (served[w] as number) + 1;
        else rejected++;
        answers.push({ at: now + 20, sent: now, ok });
        k++;
      }
    }
    // Every window from the probe's on is used in full (one at a time: 5, 4 and 7 of 10).
    expect(served).toEqual([10, 10, 10, 10]);
    expect(rejected).toBeLessThanOrEqual(4);
  });

  it('while reprobes look for a window’s reopening, a caller far back checks again within a gap (regression: callers slept through the reopening’s rate, and a simulated herd sent at 84/s of 130/s)', () => {
    // The count ran out of time after four served, and reprobes go a bracket's middle rate
    // apart. The last caller's slot is 1.5 s away; it used to sleep half of that.
    const p = new Pacer();
    const { tickets, now } = countRanOutOfTime(p);
    const gap = 1_000 / (p.rate(now) as number);
    const last = tickets[tickets.length - 1] as number;
    expect(p.slotWait(last, now)).toBeGreaterThan(50 * gap);
    expect(p.holdFor(last, now)).toBeLessThanOrEqual(Math.max(gap, 12.5) + 0.01);
  });

  it('what start-up from a count’s floor serves is no saturation reading: windows expire half-used below the callee’s rate (regression: simulated herds cruised at 82/s of 100/s)', () => {
    // The count ran out of time after four served; the reprobes find the window of 10 per
    // 100 ms reopened at 228 ms. Start-up grows from 47/s, overshoots at 264/s (three
    // rejected), and the next window's first success is a reopening. Taking 228 ms as the
    // previous one read 17 served over 214 ms — 79/s, cruised at for good.
    const p = new Pacer();
    let { tickets, probe, k, now } = countRanOutOfTime(p);
    let opened = Number.NaN;
    while (Number.isNaN(opened)) {
      const at = now + p.slotWait(tickets[k++] as number, now);
      const ok = at > probe + 100;
      if (ok) opened = at;
      p.onResult(at + 1, ok ? 'ok' : 'rejected', undefined, at, true);
      now = at + 1;
    }
    expect(opened).toBeCloseTo(228, 0);
    let count = 1;
    let rejected = 0;
    let reopened = false;
    while (!reopened) {
      const at = now + p.slotWait(tickets[k++] as number, now);
      if (at >= opened + 100) {
        opened = at;
        count = 0;
      }
      const ok = count < 10;
      if (ok) count++;
      else rejected++;
      reopened = ok && rejected > 0 && count === 1;
      p.onResult(at + 1, ok ? 'ok' : 'rejected', undefined, at, true);
      now = at + 1;
    }
    expect(rejected).toBe(3);
    expect(p.rate(now)).toBeGreaterThan(100);
  });

  it('a first reprobe served found the window reopened before it: S / T is a floor, and start-up grows from it (regression: real herds paced at 78–87/s)', () => {
    // A window of 10 per 112 ms from t = 0: probes at 54.1, 62.3, 78.6 and 111.3 ms rejected
    // (l = 111.3, already near T), 176.8 served; the count finds its 10. The first reprobe,
    // a gap after probe + l, comes after the reopening at 288.8 and is served.
    const p = new Pacer();
    const { tickets, probe, next } = probedAfterBacklog(p, 112);
    expect(probe).toBeCloseTo(176.8, 1);
    let k = next;
    let now = probe + 1;
    for (let c = 0; c < 9; c++, k++, now++) {
      expect(p.holdFor(tickets[k] as number, now)).toBe(0);
      p.onResult(now + 1, 'ok', undefined, now, true);
    }
    const reprobe = now + p.slotWait(tickets[k++] as number, now);
    expect(reprobe).toBeGreaterThan(probe + 112);
    p.onResult(reprobe + 1, 'ok', undefined, reprobe, true);
    const floor = p.rate(reprobe + 1) as number;
    expect(floor).toBeCloseTo(10_000 / (reprobe - probe), 6);
    // Paced successes: the first sent 25 ms after grows it ×√2 (cruising, it would stay).
    now = reprobe + 1;
    let sent = now;
    while (sent - now < 25) {
      sent = now + p.slotWait(tickets[k++] as number, now);
      p.onResult(sent + 1, 'ok', undefined, sent, true);
    }
    expect(p.rate(sent + 1)).toBeCloseTo(floor * Math.SQRT2, 6);
  });

  it('a blind cut of a bracketed first estimate halves it and keeps starting up (it may land below the callee’s rate)', () => {
    // As above: the search ends at 1 / 6.3 ms, at most 2× high, with nothing paced measured.
    const p = new Pacer();
    burst(p, 1, 100, 10);
    const probes = slots(p, 1, 90).map((w) => 1 + w);
    for (const sent of probes.slice(0, 6)) p.onResult(sent + 1, 'rejected', undefined, sent);
    p.onResult(14.7, 'ok', undefined, probes[6]);
    const found = p.rate(14.7) as number;
    // A paced request sent after the search ended is rejected: the blind cut halves.
    p.onResult(21, 'rejected', undefined, 20, true);
    expect(p.cuts).toBe(1);
    expect(p.rate(21)).toBeCloseTo(found / 2, 6);
    // Still starting up: the next paced success (25 ms after the search's end) grows it again,
    // where CUBIC would only creep back over recoveryMs.
    book(p, 20, 45);
    p.onResult(46, 'ok', undefined, 45, true);
    expect(p.rate(46)).toBeCloseTo((found / 2) * Math.SQRT2, 6);
  });

  it('a wait hint puts the first slot no earlier than now + hint', () => {
    const p = new Pacer();
    for (let t = 0; t < 500; t += 10) p.onResult(t + 20, 'ok', undefined, t); // 100/s delivered
    p.onResult(520, 'rejected', 3_000, 500);
    expect(p.throttling(520)).toBe(true);
    const [first, second] = slots(p, 520, 2);
    expect(first).toBeGreaterThanOrEqual(3_000);
    expect(first).toBeLessThan(3_020);
    expect(second).toBeGreaterThan(first!);
    // A success carrying a hint (remaining 0, reset in 1 s) is a hint too.
    const q = new Pacer();
    q.onResult(50, 'ok', 1_000, 0);
    expect(q.throttling(50)).toBe(true);
    expect(slots(q, 50, 1)[0]).toBeGreaterThanOrEqual(1_000);
  });

  it('timeouts count like rejections', () => {
    const p = new Pacer();
    p.onResult(100, 'timeout', undefined, 0);
    expect(p.throttling(100)).toBe(true);
  });

  it('stops throttling after quietMs without rejection, once the queue has drained', () => {
    const p = new Pacer();
    burst(p, 100, 20, 10);
    slots(p, 100, 3); // probes at 110, 130, 170
    expect(p.throttling(2_099)).toBe(true); // quiet for 1 999 ms
    expect(p.throttling(2_100)).toBe(false);
    expect(p.reserve(2_100)).toBe(0);
    const busy = new Pacer({ quietMs: 100 });
    burst(busy, 100, 20, 10);
    slots(busy, 100, 5); // the last probe at 100 + 310
    expect(busy.throttling(300)).toBe(true); // quiet, but a caller is still queued until 410
    expect(busy.throttling(410)).toBe(false);
  });

  it('cuts the rate when a paced request is still rejected, once per round', () => {
    const p = cruising();
    expect(p.searching).toBe(false);
    expect(p.rate(200)).toBeCloseTo(100, 6);
    p.onResult(205, 'rejected', undefined, 150); // a probe of the search: no cut
    expect(p.cuts).toBe(0);
    p.onResult(220, 'rejected', undefined, 210); // paced at 100/s and still rejected
    expect(p.cuts).toBe(1);
    expect(p.rate(220)).toBeCloseTo(85, 3); // β × min(rate, D̂) = 0.85 × 100
    // Sent within one service time (≈ 100 ms, the successes' latency) of the cut: they met
    // the load from before it, no second cut.
    p.onResult(240, 'rejected', undefined, 230);
    expect(p.cuts).toBe(1);
    // Nor does one before the callee served anything sent since the cut (a fixed window
    // rejects everything until it resets: one episode, one cut).
    p.onResult(340, 'rejected', undefined, 330);
    expect(p.cuts).toBe(1);
    p.onResult(390, 'ok', undefined, 340);
    p.onResult(400, 'rejected', undefined, 390);
    expect(p.cuts).toBe(2);
    // Rejected with nothing served for 16 gaps at the new rate: cuts again all the same.
    p.onResult(700, 'rejected', undefined, 690);
    expect(p.cuts).toBe(3);
  });

  it('a cut re-spaces the requests already waiting; a caller asks again when its wait ends', () => {
    const p = cruising();
    // Slots 200 (sent at once, no ticket), 210, 220 (due by the cut), then 230 … 270.
    const tickets = book(p, 8, 200).slice(3);
    const before = tickets.map((t) => p.slotWait(t, 200));
    p.onResult(220, 'rejected', undefined, 210);
    const after = tickets.map((t) => p.slotWait(t, 220) + 20);
    for (let i = 1; i < 5; i++) expect(after[i]! - after[i - 1]!).toBeCloseTo(1_000 / 85, 3);
    expect(after[4]).toBeGreaterThan(before[4]!);
    // The caller of the last ticket, woken at its old slot, is told to wait on.
    expect(p.holdFor(tickets[4]!, 200 + before[4]!)).toBeGreaterThan(0);
  });

  it('start-up grows at most once per half an estimator bucket, however fast the answers come (regression: 10× overshoot on loopback)', () => {
    const p = cruising(); // start-up at 100/s
    book(p, 50, 200); // callers waiting: start-up may grow
    const before = p.rate(200) as number;
    // Paced successes answered 1 ms after their send, one per ms, for 20 ms.
    for (let t = 201; t <= 220; t++) p.onResult(t, 'ok', undefined, t - 1, true);
    const after20 = p.rate(220) as number;
    expect(after20).toBeLessThanOrEqual(before * Math.SQRT2 + 1e-9);
    // …and keeps growing, once per 25 ms (windowMs 500 / 10 buckets / 2).
    for (let t = 221; t <= 300; t++) p.onResult(t, 'ok', undefined, t - 1, true);
    const after100 = p.rate(300) as number;
    expect(after100).toBeGreaterThan(after20);
    expect(after100).toBeLessThanOrEqual(before * Math.SQRT2 ** 4 + 1e-9);
  });

  it('in start-up a waiting caller checks again within a gap, so sends follow the growing rate (regression: sends lagged 8×)', () => {
    // Before: a caller further back slept 4 gaps between checks, and one whose wait was under
    // 2 gaps slept it all; start-up moved their slots earlier meanwhile, so they sent late — a
    // fixed window's start-up sent one request per first gap (51 ms) while the rate grew 8×.
    const p = fromBracket(); // start-up at 19.6/s: a gap of 51.1 ms
    const gap = 1_000 / (p.rate(104.3) as number);
    expect(gap).toBeCloseTo(51.1, 9);
    for (let i = 0; i < 20; i++) {
      const wait = p.reserve(104.3);
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(gap + 1e-9);
    }
  });

  it('start-up grows ×√2 per 25 ms the rate held, up to 4 steps at once (regression: a step per success took ~1 s to grow 10× from a low start)', () => {
    const p = fromBracket(); // 1 / 51.1 ms
    const start = p.rate(104.3) as number;
    book(p, 30, 104.3);
    // One paced success sent 100 ms after the search ended: the rate held for 4 steps.
    p.onResult(205.3, 'ok', undefined, 204.3, true);
    expect(p.rate(205.3)).toBeCloseTo(start * 4, 6);
    // The next success, sent 30 ms after that growth: one step more.
    p.onResult(236.3, 'ok', undefined, 235.3, true);
    expect(p.rate(236.3)).toBeCloseTo(start * 4 * Math.SQRT2, 6);
  });

  it('after a blind cut start-up is not held at probeGain × the halved guess (regression: a real herd paced at 18/s for 4.4 s)', () => {
    // As above: the blind cut halves the bracket's 159/s; the callee serves 100/s. Its ceiling
    // was probeGain × the halved level (119/s) and stayed there while start-up went on —
    // harmless here, but a real express-rate-limit herd whose blind cut landed at 12/s paced
    // at 18/s for seconds: nothing is ever rejected that slowly, so nothing raised it.
    const p = new Pacer();
    burst(p, 1, 100, 10);
    const probes = slots(p, 1, 90).map((w) => 1 + w);
    for (const sent of probes.slice(0, 6)) p.onResult(sent + 1, 'rejected', undefined, sent);
    p.onResult(14.7, 'ok', undefined, probes[6]);
    p.onResult(21, 'rejected', undefined, 20, true);
    const cutTo = p.rate(21) as number;
    book(p, 80, 21);
    // Paced requests keep being served, each sent at the rate allowed then (below 100/s).
    let sent = 21;
    for (let i = 0; i < 20; i++) {
      sent += 1_000 / Math.min(p.rate(sent) as number, 99);
      p.onResult(sent + 1, 'ok', undefined, sent, true);
    }
    expect(p.cuts).toBe(1);
    expect(p.rate(sent + 1)).toBeGreaterThan(PACER_DEFAULTS.probeGain * cutTo * 1.01);
  });

  it('after a ramp’s cut start-up is not held at probeGain × what the ramp delivered (regression: a simulated fixed window paced at 68/s of 100/s for a second)', () => {
    // Start-up from the bracket's 19.6/s, each paced request served 1 ms after it left, at the
    // rate allowed then, until the rate has grown past 150/s: then one is rejected. The cut
    // measured the ramp, which delivered far less than the rate that overshot.
    const p = fromBracket();
    book(p, 80, 105.3);
    const ok = (sent: number) => p.onResult(sent + 1, 'ok', undefined, sent, true);
    let sent = 105.3;
    while ((p.rate(sent) as number) < 150) {
      sent += 1_000 / (p.rate(sent) as number);
      ok(sent);
    }
    const overshot = p.rate(sent) as number;
    sent += 1_000 / overshot;
    p.onResult(sent + 1, 'rejected', undefined, sent, true);
    expect(p.cuts).toBe(1);
    const afterCut = p.rate(sent + 1) as number;
    expect(afterCut).toBeLessThan(overshot / 2);
    // Then every request is served (sent at the rate allowed, never faster than 99/s): start-up
    // goes on, its ceiling following what paced requests deliver, up to the rate that overshot.
    // Held at probeGain × what the ramp delivered, it stopped at 103/s here — and in a simulated
    // fixed-window herd (lognormal latencies) at 68/s, where nothing is ever rejected again.
    for (let i = 0; i < 60; i++) {
      sent += 1_000 / Math.min(p.rate(sent) as number, 99);
      ok(sent);
    }
    expect(p.cuts).toBe(1);
    const end = p.rate(sent + 1) as number;
    expect(end).toBeGreaterThan(0.9 * overshot);
    expect(end).toBeLessThanOrEqual(overshot);
  });

  it('the probe that ended the search is a reopening: the first one in cruise measures the rate (regression: two more windows at 2× on express-rate-limit)', () => {
    // A fixed window of 10 per 100 ms on a loaded server: the flight's answers come back after
    // 100 ms, the first probe (10 ms later) is served and opens a window, [110, 210).
    const p = new Pacer();
    burst(p, 100, 100, 10);
    book(p, 90, 100);
    p.onResult(111, 'ok', undefined, 110, true);
    expect(p.searching).toBe(false);
    const ok = (at: number) => p.onResult(at + 1, 'ok', undefined, at, true);
    const rejected = (at: number) => p.onResult(at + 1, 'rejected', undefined, at, true);
    // Start-up sends faster than the window serves: 9 more served by 160, then rejections.
    for (let at = 115; at <= 155; at += 5) ok(at);
    for (let at = 160; at < 210; at += 5) rejected(at);
    expect(p.cuts).toBe(1);
    // The window reopens at 210 (capacity back between 205 and 211): 10 served since the probe
    // at 110, over 98 ms. Before, the first reopening in cruise only started the measure, and
    // the pacer went on at the cut's level (β × the start-up rate that overshot) for a window.
    ok(211);
    expect(p.rate(212)).toBeCloseTo(10_000 / 98, 6);
  });

  it('a count cut short after fewer than four served: start-up goes on from what it served within l, not from 1 / l (regression: simulated fixed windows with 10–20 ms latencies)', () => {
    // A fixed window of 10 per 100 ms: probes at 1.1 … 52.1 ms rejected, the one at 103.3 ms
    // served (answered in 1 ms) — but the count's answers take 40 ms: one served at 144.3 ms,
    // the next past l (52.1 ms after the probe). With the probe, 3 served within l: no window's
    // N (fewer than four), but 3 per 52.1 ms served without a rejection — 2.9× the bracket's
    // 1 / 51.1 ms, from which start-up used to climb (simulated fixed windows, lognormal 20 ms
    // latencies, 24 seeds: everyone served after 1.34 s on average, against 1.26 s now).
    const { p, tickets } = probedWindow();
    const guess = p.rate(104.3) as number;
    expect(guess).toBeCloseTo(1_000 / 51.1, 6);
    expect(p.holdFor(tickets[10] as number, 104.3)).toBe(0);
    p.onResult(144.3, 'ok', undefined, 104.3, true);
    expect(p.holdFor(tickets[11] as number, 144.3)).toBe(0);
    p.onResult(184.3, 'ok', undefined, 144.3, true);
    expect(p.rate(184.3)).toBeCloseTo(3_000 / 52.1, 6);
  });

  it('after a bracketed probe, one request per round trip counts what the callee restored: a window’s N, then its reopening is probed for (regression: 3 of 10 used in the first window)', () => {
    // A fixed window of 10 per 100 ms answering in 1 ms (the simulator's herd): windows open at
    // 0 and, at the probe that found it open, at 103.3.
    const { p, tickets } = probedWindow();
    // Before, start-up went on from 1 / 51.1 ms: the next request 51 ms later. Now the next one
    // goes at once, and each served answer lets one more go.
    let now = 104.3;
    for (let k = 10; k < 19; k++) {
      expect(p.holdFor(tickets[k] as number, now), `chunk request ${k - 9}`).toBe(0);
      expect(p.holdFor(tickets[k + 1] as number, now)).toBeGreaterThan(0);
      p.onResult(now + 1, 'ok', undefined, now, true);
      now += 1;
    }
    expect(p.cuts).toBe(0);
    // Ten restored at once (what the flight found from idle): the window reopens T after the
    // probe, T in (52.1, 103.3] ms from the flight's first send. Probes for it from 155.4 plus
    // the probes' round trip (a gap later, a window that ended within it went unnoticed, and
    // start-up from a floor took its place), 1 / the bracket's middle rate apart (10 per
    // 77.7 ms: 7.77 ms).
    const gap = (103.3 + 52.1) / 20;
    let k = 19;
    let at = now + p.slotWait(tickets[k] as number, now);
    expect(at).toBeCloseTo(155.4 + 1, 6);
    let rejectedAt = Number.NaN;
    // The window reopens at 203.3 (100 ms after the probe that opened it).
    while (at <= 203.3) {
      p.onResult(at + 1, 'rejected', undefined, at, true);
      rejectedAt = at;
      k++;
      const next = at + 1 + p.slotWait(tickets[k] as number, at + 1);
      expect(next - at).toBeCloseTo(gap, 6);
      at = next;
    }
    p.onResult(at + 1, 'ok', undefined, at, true);
    expect(p.cuts).toBe(0);
    // Seven probes rejected (the bracket's width over the gap, and the first), and T measured
    // within half a gap: 10 per (the middle between the last rejected probe and the served one −
    // 103.3).
    expect(k - 19).toBe(7);
    expect(p.rate(at + 1)).toBeCloseTo(10_000 / ((rejectedAt + at) / 2 - 103.3), 6);
    expect(Math.abs((rejectedAt + at) / 2 - 203.3)).toBeLessThan(gap / 2);
  });

  it('no request goes at once to count what the callee restored when the count could not finish within the bracket (a token bucket: one rejected request more)', () => {
    // A token bucket of 100/s answering in 1 ms: probes at 1.1 … 7.3 ms rejected, 13.7 ms served.
    // Nine more at one per 1 ms round trip take longer than the 6.3 ms bracket: start-up from
    // 1 / 6.3 ms as before, its next request a slot later (simulated token, leaky bucket and GCRA
    // herds: 199 requests / 920 ms with the count, 198 / 912 ms without).
    const p = new Pacer();
    const { tickets, probes } = probesAfterFlight(p, 100, 10, 6);
    p.onResult(14.7, 'ok', undefined, probes[6], true);
    expect(p.searching).toBe(false);
    expect(p.slotWait(tickets[7] as number, 14.7)).toBeGreaterThan(5);
  });

  it('no count after a flight with fewer than four served (regression: four processes pacing alone against one leaky bucket, 1.43 → 3.18 s)', () => {
    // One process of four sharing a bucket: its flight of 25 got 3 served. What it then counts is
    // the others' leftovers, not a window's N.
    const p = new Pacer();
    const { tickets, probes } = probesAfterFlight(p, 25, 3, 9);
    p.onResult(probes[9]! + 1, 'ok', undefined, probes[9], true);
    expect(p.searching).toBe(false);
    expect(p.slotWait(tickets[10] as number, probes[9]! + 1)).toBeGreaterThan(10);
  });

  it('a window that does not reopen within the bracket after the probe was none: start-up goes on from the bracket (regression: a shared bucket read as a window, 5/s)', () => {
    const { p, tickets } = probedWindow();
    const guess = p.rate(104.3) as number;
    expect(guess).toBeCloseTo(1000 / 51.1, 6);
    let now = countNine(p, tickets);
    // Counted 10: probes for the reopening from 155.4 ms. Every one is rejected, also after
    // 103.3 + 103.3 ms, when a window opened at the probe would have reopened.
    let k = 19;
    let sent = now;
    while (sent <= 206.6) {
      sent = now + p.slotWait(tickets[k++] as number, now);
      now = sent + 1;
      p.onResult(now, 'rejected', undefined, sent, true);
    }
    expect(p.cuts).toBe(0);
    expect(p.rate(now)).toBeCloseTo(guess, 6);
    // Start-up again: the next request a slot (51.1 ms) on.
    expect(p.slotWait(tickets[k] as number, now)).toBeGreaterThan(40);
  });

  it('a fixed window: the first overshoot keeps start-up going, and the rate between two reopenings ends it (regression: cut to the ramp’s 0.55× the rate)', () => {
    // Windows of 10 per 100 ms at 300, 400, 500 …; answers 1 ms after each send.
    const p = fromBracket();
    book(p, 80, 104.3);
    const ok = (sent: number) => p.onResult(sent + 1, 'ok', undefined, sent, true);
    const rejected = (sent: number) => p.onResult(sent + 1, 'rejected', undefined, sent, true);
    // The ramp: two served in the windows at 100 and 200, then 10 of 10 in the one at 300.
    ok(154.4);
    ok(205.5);
    for (let sent = 300; sent < 350; sent += 5) ok(sent);
    rejected(350); // the window is used up: a cut, measured on the ramp
    expect(p.cuts).toBe(1);
    const afterCut = p.rate(351) as number;
    rejected(370);
    rejected(395);
    expect(p.cuts).toBe(1); // one episode, one cut
    // The boundary at 400: the first reopening. Still starting up: the rate grows again.
    ok(405);
    for (let sent = 415; sent < 500; sent += 10) ok(sent);
    expect(p.rate(491)).toBeGreaterThan(afterCut);
    rejected(497); // this window's 10 are used up too
    // The second reopening: 10 served between the boundaries, at 400 and 500 (each taken
    // half-way from the last rejected send), measure the window's rate — start-up ends there.
    ok(503);
    expect(p.rate(504)).toBeCloseTo(10_000 / (500 - 400), 6);
  });

  it('a success of the measured span answered after the reopening that ended it still counts: the level follows (regression: a token bucket’s herd cruised at 62/s of 100/s)', () => {
    // As above, but two of the second window's successes (sent at 435 and 445) come back only
    // after the reopening at 500 was read: latencies that spread return answers out of order.
    const run = (late: boolean) => {
      const p = fromBracket();
      book(p, 80, 104.3);
      const ok = (sent: number, at = sent + 1) => p.onResult(at, 'ok', undefined, sent, true);
      const rejected = (sent: number) => p.onResult(sent + 1, 'rejected', undefined, sent, true);
      ok(154.4);
      ok(205.5);
      for (let sent = 300; sent < 350; sent += 5) ok(sent);
      rejected(350);
      rejected(370);
      rejected(395);
      ok(405);
      for (let sent = 415; sent < 500; sent += 10) if (!late || (sent !== 435 && sent !== 445)) ok(sent);
      rejected(497);
      ok(503);
      return p;
    };
    const p = run(true);
    // Eight of the ten back: 8 per 100 ms.
    expect(p.rate(504)).toBeCloseTo(8_000 / (500 - 400), 6);
    p.onResult(505, 'ok', undefined, 435, true);
    p.onResult(506, 'ok', undefined, 445, true);
    // Now as if all ten had come back in time: sent at 10 per 100 ms from the reading on.
    const onTime = run(false);
    expect(onTime.rate(504)).toBeCloseTo(10_000 / (500 - 400), 6);
    for (const t of [507, 600, 1_000]) expect(p.rate(t)).toBeCloseTo(onTime.rate(t) as number, 6);
  });

  it('start-up from a first probe served keeps going after its first cut, measured on the ramp (regression: a slot server’s herd stood at 50/s of 100/s for a second)', () => {
    // Start-up from the 100/s the first probe confirmed, grown to 141/s; then one rejection.
    // What paced requests delivered so far was measured on the ramp, below the callee's rate.
    // Served again: start-up grows from there, as after a bracketed guess's first overshoot
    // (held at the cut's level instead, the rate would still be below it 100 ms later).
    const { afterCut, end } = rampCutThenServed(cruising(), 200);
    expect(end).toBeGreaterThan(1.3 * afterCut);
  });

  it('after a wait hint, start-up from a first probe served ends at its first cut (each overshoot costs the hint)', () => {
    const p = new Pacer();
    for (let i = 0; i < 100; i++) p.onResult(100, i < 10 ? 'ok' : 'rejected', i < 10 ? undefined : 50, 0);
    const waits = slots(p, 100, 3);
    p.onResult(200 + waits[0]!, 'ok', undefined, 150 + waits[0]!);
    expect(p.searching).toBe(false);
    const { afterCut, end } = rampCutThenServed(p, 300);
    expect(end).toBeLessThan(1.1 * afterCut);
  });

  it('a cut takes the rate measured between the last two reopenings while it is fresh (regression: one β step per window from an inflated peak)', () => {
    const { p, grown } = windowsInBursts();
    expect(grown).toBeCloseTo(100 * Math.SQRT2 ** 3, 6);
    // Reopenings at 400 and 500 (half-way from the rejections at 395 and 495): 10 served in
    // 100 ms, sent at as measured (not β below: it is the callee's rate, not the rate that
    // overshot). Before, the cut took β of the allowed rate (114.7/s → 97.5/s) — the flow's
    // peak was far above it — and stepped down by β once per window.
    expect(p.cuts).toBe(3);
    expect(p.rate(511)).toBeCloseTo(100, 6);
  });

  it('from a cut to the rate read over n successes it climbs to the top of that reading, n + 1 per span, then probes beyond (regression: a token bucket read at 83.5/s of 100/s over 4 successes, cruised there for a second)', () => {
    // The reading of the test above: 10 served between reopenings 100 ms apart, so 9–11 per 100 ms.
    const { p } = windowsInBursts({ quietMs: 10_000 });
    expect(p.rate(511)).toBeCloseTo(100, 6);
    // CUBIC's concave climb (β = 0.85, K = 1 s) reaches 110/s after 1 s × ∛((1 − 100/110) / 0.15).
    const top = 511 + 1_000 * Math.cbrt((1 - 100 / 110) / 0.15);
    expect(p.rate(611) as number).toBeGreaterThan(103); // a third of the way within 100 ms
    expect(p.rate(top)).toBeCloseTo(110, 6);
    expect(p.rate(top + 500) as number).toBeGreaterThan(110);
  });

  it('climbs back to the cut level within recoveryMs and probes beyond it, capped by probeGain × W', () => {
    const p = cruising({ quietMs: 10_000 });
    p.onResult(220, 'rejected', undefined, 210);
    expect(p.rate(220)).toBeCloseTo(85, 3);
    expect(p.rate(720)).toBeGreaterThan(85);
    expect(p.rate(1_220)).toBeCloseTo(100, 3); // back at W after K = 1 s
    expect(p.rate(2_220)).toBeGreaterThan(100);
    expect(p.rate(2_220)).toBeLessThanOrEqual(150 + 1e-9); // probeGain × max(D̂, W)
  });

  it('as CUBIC climbs back and probes beyond, requests go within 2 % of the rate allowed at the time (regression: up to 10 % behind it, then 10 % ahead at once)', () => {
    const p = cruising({ quietMs: 10_000 });
    p.onResult(220, 'rejected', undefined, 210);
    let worst = 0;
    for (let t = 230; t <= 2_200; t += 10) {
      const [a, b] = slots(p, t, 2) as [number, number];
      worst = Math.max(worst, Math.abs(((b - a) * (p.rate(t) as number)) / 1000 - 1));
    }
    expect(worst).toBeGreaterThan(0);
    expect(worst).toBeLessThanOrEqual(0.02 + 1e-9);
  });

  it('reserve never returns NaN, a negative or an unbounded wait; rate stays positive (property)', () => {
    const step = fc.record({
      dt: fc.integer({ min: 0, max: 700 }),
      signal: fc.constantFrom<PacerSignal | 'reserve'>('ok', 'rejected', 'timeout', 'reserve', 'reserve'),
      latency: fc.option(fc.integer({ min: 0, max: 3_000 }), { nil: undefined }),
      hint: fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const p = new Pacer();
        let now = 0;
        let reservations = 0;
        // The lowest rate an answer took the pacer to below its floor: a cut at the floor for
        // a callee that serves, or pacing by windows that hold few. Time and bookings alone
        // never take it lower.
        let under = Number.POSITIVE_INFINITY;
        // At least 1 / maxSpacingMs; while the search has waited long, a probe per 30 of it.
        const cruiseFloor = 1_000 / p.maxSpacingMs;
        const searchFloor = cruiseFloor / 30;
        for (const { dt, signal, latency, hint } of steps) {
          now += dt;
          // Time passing alone, answered or not: never under the floor or the last answer's rate.
          const idle = p.rate(now);
          if (p.throttling(now) && !p.searching && idle! < cruiseFloor - 1e-9 && idle! < under - 1e-9) return false;
          if (signal === 'reserve') {
            const wait = p.reserve(now);
            reservations++;
            // Probes never go more than 30 maxSpacingMs apart, and no hint exceeds 5 s.
            if (!(wait >= 0 && wait <= 5_000 + reservations * 30 * p.maxSpacingMs)) return false;
          } else {
            p.onResult(now, signal, hint, latency === undefined ? undefined : now - latency);
          }
          const rate = p.rate(now);
          if (rate !== undefined && !(rate > 0 && Number.isFinite(rate))) return false;
          if (!p.throttling(now)) continue;
          const floor = p.searching ? searchFloor : cruiseFloor;
          if (rate! >= floor - 1e-9) under = Number.POSITIVE_INFINITY;
          else if (signal !== 'reserve' && !p.searching) under = rate!;
          else if (rate! < under - 1e-9) return false;
        }
        return true;
      }),
    );
  });

  it('a callee that serves at the floor and still rejects is cut β below it, each cut again, down to one request per 30 maxSpacingMs (the property above once read that as a rate under the floor)', () => {
    const p = new Pacer();
    // Found by the property: a timeout and a success end the search, a rejection cuts to the
    // floor of 1/s, three successes, then a rejection still at the floor.
    p.onResult(0, 'timeout', undefined, -867);
    p.onResult(0, 'ok', undefined, 0);
    p.onResult(1, 'rejected', undefined, 1);
    expect(p.rate(1)).toBeCloseTo(1, 9);
    for (const at of [24, 658, 665]) p.onResult(at, 'ok');
    p.onResult(665, 'rejected');
    expect(p.searching).toBe(false);
    expect(p.rate(665)).toBeCloseTo(0.85, 9);
    let now = 665;
    const rates: number[] = [];
    for (let k = 0; k < 30; k++) {
      now += 10;
      p.onResult(now, 'ok', undefined, now - 5);
      now += 10;
      p.onResult(now, 'rejected', undefined, now - 5);
      rates.push(p.rate(now) as number);
    }
    expect(rates[0]).toBeCloseTo(0.85 * 0.85, 6);
    for (let k = 1; k < rates.length; k++) expect(rates[k]).toBeLessThanOrEqual((rates[k - 1] as number) + 1e-9);
    expect(Math.min(...rates)).toBeCloseTo(1 / 30, 9);
    expect(rates.at(-1)).toBeCloseTo(1 / 30, 9);
  });

  it('only successes: never throttles, never waits (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 500 })), { maxLength: 200 }),
        (steps) => {
          const p = new Pacer();
          let now = 0;
          for (const [dt, latency] of steps) {
            now += dt;
            p.onResult(now, 'ok', undefined, now - latency);
            if (p.reserve(now) !== 0 || p.throttling(now)) return false;
          }
          return true;
        },
      ),
    );
  });
});

describe('Pacer: giving a slot back', () => {
  it('gives the latest slot back, so the queue does not run ahead of real sends (review regression)', () => {
    const pacer = new Pacer();
    for (let i = 0; i < 10; i++) pacer.onResult(100, 'ok', undefined, 0);
    for (let i = 0; i < 20; i++) pacer.onResult(100, 'rejected', undefined, 0);
    const [first, second] = slots(pacer, 100, 2);
    expect(second).toBeGreaterThan(first!);
    expect(pacer.cancelLastReservation()).toBe(true);
    expect(pacer.cancelLastReservation()).toBe(false); // only the latest, once
    expect(slots(pacer, 100, 1)).toEqual([second]); // the same slot is booked again
  });

  it('a slot booked before a give-up does not stay booked: the next booking takes it (regression)', () => {
    const p = cruising();
    const tickets = book(p, 5, 200).slice(1);
    const gone = p.slotWait(tickets[1]!, 200);
    expect(p.release(tickets[1]!, 200)).toBe(true);
    expect(p.release(tickets[1]!, 200)).toBe(false); // once
    expect(slots(p, 200, 1)).toEqual([gone]);
  });
});

describe('Pacer in a fleet (rate kinds, adopting a rate found elsewhere)', () => {
  /** A pacer searching after a burst of rejections at 10 ms. */
  const searching = () => {
    const pacer = new Pacer();
    for (let i = 0; i < 20; i++) pacer.onResult(10, i < 5 ? 'ok' : 'rejected', undefined, 5);
    return pacer;
  };

  it('says what its rate estimates: probing while it searches, a guess at the whole rate from a probe, its share once a cut measured it', () => {
    const pacer = searching();
    expect(pacer.rateKind(10)).toBe('probe');
    // The first probe served ends the search: a guess at the callee's whole rate.
    const probe = 10 + 1000 / (pacer.rate(10) as number);
    pacer.onResult(probe + 5, 'ok', undefined, probe, true);
    expect(pacer.searching).toBe(false);
    expect(pacer.rateKind(probe + 5)).toBe('whole');
    // Paced requests served, then one rejected: the cut measures what this pacer gets.
    let t = probe + 10;
    for (let i = 0; i < 10; i++, t += 10) pacer.onResult(t + 5, 'ok', undefined, t, true);
    pacer.onResult(t + 5, 'rejected', undefined, t, true);
    expect(pacer.cuts).toBe(1);
    expect(pacer.rateKind(t + 5)).toBe('share');
    expect(pacer.delivered(t + 5)).toBeGreaterThan(0);
  });

  it('adopts a rate only while searching: the search ends there, and start-up goes on from it', () => {
    const pacer = searching();
    expect(pacer.adopt(0, 20)).toBe(false);
    expect(pacer.adopt(80, 20)).toBe(true);
    expect(pacer.searching).toBe(false);
    expect(pacer.rate(20)).toBeCloseTo(80, 9);
    expect(pacer.rateKind(20)).toBe('whole');
    // Cruising, a second adoption changes nothing.
    expect(pacer.adopt(500, 21)).toBe(false);
    expect(pacer.rate(21)).toBeCloseTo(80, 9);
    // Healthy (never throttled): nothing to adopt.
    expect(new Pacer().adopt(80, 0)).toBe(false);
  });
});

describe('Pacer: requests it never held (first tries) while it paces', () => {
  /** Cruising at 100/s (a slot every 10 ms) with four tickets booked at 200: waits 0, 10, 20, 30. */
  function bookedFour(): { p: Pacer; tickets: number[] } {
    const p = cruising();
    const tickets = Array.from({ length: 4 }, () => {
      p.reserve(200);
      return p.lastTicket;
    });
    expect(tickets.map((t) => p.slotWait(t, 200))).toEqual([0, 10, 20, 30]);
    return { p, tickets };
  }

  it('a first try takes the slot due next: every waiting ticket moves one gap later (regression: retries went on top of arrivals)', () => {
    const { p, tickets } = bookedFour();
    p.unpacedSent(201);
    // The first ticket was due at 200 (sent): untouched. The waiting ones: 220, 230, 240.
    expect(tickets.map((t) => p.slotWait(t, 201))).toEqual([0, 19, 29, 39]);
    // A booking after them comes one gap after the last.
    p.reserve(201);
    expect(p.slotWait(p.lastTicket, 201)).toBe(49);
  });

  it('first tries push the queue at most three gaps ahead of now: one the callee rejected took none of its capacity', () => {
    const { p, tickets } = bookedFour();
    for (let i = 0; i < 50; i++) p.unpacedSent(201);
    expect(tickets.map((t) => p.slotWait(t, 201))).toEqual([0, 30, 40, 50]);
    // Once they stop, the queue leaves from there at the rate: nothing owed for the fifty.
    expect(p.rate(201)).toBeCloseTo(100, 6);
  });

  it('an idle queue: the first try takes the slot now, and the next booking waits one gap', () => {
    const p = cruising();
    p.reserve(300);
    expect(p.lastTicket).toBe(0); // due at once: nothing waits
    // 50 ms later nothing waits (the next slot, 310, has passed): the first try takes 350.
    p.unpacedSent(350);
    p.reserve(350);
    expect(p.slotWait(p.lastTicket, 350)).toBe(10);
  });

  it('a searching pacer’s probes keep their schedule, and a healthy one books nothing', () => {
    const searching = (): Pacer => {
      const p = new Pacer();
      burst(p, 100, 100, 10);
      return p;
    };
    const alone = searching();
    const withFirstTries = searching();
    withFirstTries.unpacedSent(100);
    expect(slots(withFirstTries, 100, 3)).toEqual(slots(alone, 100, 3));
    const healthy = new Pacer();
    healthy.unpacedSent(0);
    expect(healthy.throttling(0)).toBe(false);
    expect(healthy.reserve(0)).toBe(0);
  });

  it('first tries served at the callee’s rate while others are rejected lift a level cut below it (regression: a search squeezed between arrivals read 21/s of 100/s, and the backlog left at it)', () => {
    const p = cruising();
    // Two paced requests rejected: a cut, to 85/s.
    slots(p, 200, 2);
    p.onResult(211, 'rejected', undefined, 210, true);
    p.onResult(212, 'rejected', undefined, 211, true);
    expect(p.cuts).toBe(1);
    const cut = p.rate(212) as number;
    expect(cut).toBeLessThan(90);
    // First tries every 5 ms, every other one served: the callee serves 100/s and is full.
    for (let t = 215; t < 300; t += 5) {
      p.unpacedSent(t);
      p.onResult(t + 1, (t / 5) % 2 === 1 ? 'ok' : 'rejected', undefined, t, false);
    }
    expect(p.rate(301)).toBeGreaterThanOrEqual(99);
    expect(p.rate(301)).toBeLessThan(105);
  });
});
