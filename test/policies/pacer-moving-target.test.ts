import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/policies/pacer.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

/**
 * The pacer's protocol: book a slot, and when the wait ends ask again (slots move as the
 * pacer learns) until it says 0; then `go`.
 */
function paced(clock: VirtualClock, pacer: Pacer, now: number, go: () => void): void {
  const wait = pacer.reserve(now);
  const ticket = pacer.lastTicket;
  const check = () => {
    const more = pacer.holdFor(ticket, clock.monotonic());
    if (more > 0) clock.schedule(more, check);
    else go();
  };
  if (wait > 0) clock.schedule(wait, check);
  else clock.schedule(0, go);
}

/** Capacity (requests/s) from each phase's start time (ms) on. */
type Phases = ReadonlyArray<readonly [startMs: number, perSecond: number]>;

interface Server {
  /** A request arrives now; `answer(ok)` must be called once, later, on the clock. */
  arrive(now: number, answer: (ok: boolean) => void): void;
}

const capacityAt = (phases: Phases, t: number) => {
  let c = phases[0]![1];
  for (const [start, perSecond] of phases) if (t >= start) c = perSecond;
  return c;
};

/**
 * A rate limiter with a small burst allowance (GCRA: emission interval T = 1/capacity,
 * tolerance 2 × T), answering every request after `latencyMs`.
 */
function gcraServer(clock: VirtualClock, phases: Phases, latencyMs: number): Server {
  let tat = 0;
  return {
    arrive(now, answer) {
      const interval = 1_000 / capacityAt(phases, now);
      const ok = now >= tat - 2 * interval;
      if (ok) tat = Math.max(now, tat) + interval;
      clock.schedule(latencyMs, () => answer(ok));
    },
  };
}

/** The herd's server: the first capacity × 100 ms arrivals of each 100 ms slot, answered at its end. */
function slotServer(clock: VirtualClock, phases: Phases): Server {
  const served = new Map<number, number>();
  return {
    arrive(now, answer) {
      const slot = Math.floor(now / 100);
      const n = served.get(slot) ?? 0;
      served.set(slot, n + 1);
      const ok = n < (capacityAt(phases, slot * 100) * 100) / 1_000;
      clock.schedule((slot + 1) * 100 - now, () => answer(ok));
    },
  };
}

/**
 * `workers` callers in a closed loop against `server` for `endMs`: each sends, waits for the
 * answer, and sends again (a new request or the retry) after `pacer.reserve(now)` — every
 * send is paced, as with `paceFirstAttempts`. Returns the send times.
 */
function closedLoop(server: (clock: VirtualClock) => Server, workers: number, endMs: number) {
  const clock = new VirtualClock();
  const target = server(clock);
  const pacer = new Pacer();
  const sends: number[] = [];
  let rejected = 0;
  const send = () => {
    const sentAt = clock.monotonic();
    sends.push(sentAt);
    target.arrive(sentAt, (ok) => {
      const now = clock.monotonic();
      pacer.onResult(now, ok ? 'ok' : 'rejected', undefined, sentAt);
      if (!ok) rejected++;
      if (now < endMs) paced(clock, pacer, now, send);
    });
  };
  for (let w = 0; w < workers; w++) clock.schedule(0, send);
  while (clock.runNext());
  return { sends, rejectedShare: rejected / sends.length };
}

/**
 * For each phase: how long after it starts the send rate, counted over every 1 s window that
 * starts from then on within the phase (stepping by 100 ms), stays within ±20 % of capacity.
 */
function settleTimes(sends: number[], phases: Phases, endMs: number): number[] {
  return phases.map(([start, perSecond], i) => {
    const end = i + 1 < phases.length ? phases[i + 1]![0] : endMs;
    let settled = Number.POSITIVE_INFINITY;
    for (let from = end - 1_000; from >= start; from -= 100) {
      const n = sends.filter((t) => t >= from && t < from + 1_000).length;
      if (Math.abs(n - perSecond) > 0.2 * perSecond) break;
      settled = from - start;
    }
    return settled;
  });
}

const PHASES: Phases = [
  [0, 200],
  [10_000, 100], // halves
  [20_000, 200], // doubles
];

describe('Pacer against a moving target', () => {
  // Measured settle times (start / halving / doubling): rate limiter 0 / 0 / 1.2 s, slot
  // server 0.1 / 0 / 1.4 s, slot server at 10× the capacity 0 / 0 / 1.3 s. The time after the
  // doubling depends on when the last cut before it fell (CUBIC climbs from that cut's plateau):
  // moving the doubling by 0.25 s steps from 19.5 to 21 s gives the rate limiter 0.45–2.1 s
  // (mean 1.2 s; 0.55–2.2 s, mean 1.4 s, before the rate measured between reopenings).
  it('a rate limiter whose capacity halves, then doubles: the send rate settles within ±20 % in seconds', () => {
    const { sends, rejectedShare } = closedLoop((clock) => gcraServer(clock, PHASES, 30), 40, 30_000);
    const [start, halved, doubled] = settleTimes(sends, PHASES, 30_000);
    console.log(
      `[figure] pacer, rate limiter: settles in ${start} ms at start, ${halved} ms after halving, ${doubled} ms after doubling; ${(rejectedShare * 100).toFixed(1)}% rejected`,
    );
    // Start: the cut that ends start-up lands on what the ramp delivered (160/s of 200/s);
    // the rate measured between the next two reopenings replaces it (regression: 1.5 s).
    expect(start).toBeLessThanOrEqual(500);
    expect(halved).toBeLessThanOrEqual(2_000);
    expect(doubled).toBeLessThanOrEqual(3_000);
    expect(rejectedShare).toBeLessThan(0.1);
  });

  it('the same with the herd’s slot server', () => {
    const { sends, rejectedShare } = closedLoop((clock) => slotServer(clock, PHASES), 40, 30_000);
    const [start, halved, doubled] = settleTimes(sends, PHASES, 30_000);
    console.log(
      `[figure] pacer, slot server: settles in ${start} ms at start, ${halved} ms after halving, ${doubled} ms after doubling; ${(rejectedShare * 100).toFixed(1)}% rejected`,
    );
    expect(start).toBeLessThanOrEqual(1_000);
    expect(halved).toBeLessThanOrEqual(2_000);
    expect(doubled).toBeLessThanOrEqual(3_000);
    expect(rejectedShare).toBeLessThan(0.1);
  });

  it('the same at ten times the capacity (nothing in the pacer knows the scale)', () => {
    const phases: Phases = PHASES.map(([t, c]) => [t, c * 10] as const);
    const { sends, rejectedShare } = closedLoop((clock) => slotServer(clock, phases), 400, 30_000);
    const [start, halved, doubled] = settleTimes(sends, phases, 30_000);
    console.log(
      `[figure] pacer, slot server ×10: settles in ${start} ms at start, ${halved} ms after halving, ${doubled} ms after doubling; ${(rejectedShare * 100).toFixed(1)}% rejected`,
    );
    expect(start).toBeLessThanOrEqual(1_000);
    expect(halved).toBeLessThanOrEqual(2_000);
    expect(doubled).toBeLessThanOrEqual(4_000);
    expect(rejectedShare).toBeLessThan(0.1);
  });
});
