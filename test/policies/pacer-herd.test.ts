import { describe, expect, it } from 'vitest';
import { Pacer } from '../../src/policies/pacer.js';
import { SeededRandom } from '../../src/random/random.js';
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

/**
 * The herd of SPEC S11.1 with adaptive pacing, on a virtual clock: `clients` clients send at
 * t = 0; the server serves the first `capacity` arrivals of each `slotMs` slot and rejects
 * the rest with 429 (no hint); every answer is delivered at the end of its slot, in arrival
 * order; a rejected client sends again at `now + pacer.reserve(now)`. One pacer for all
 * clients (one process). The seed shuffles the clients' order at t = 0; `shuffleAnswers`
 * also shuffles the order in which a slot's answers are processed (still served by arrival),
 * as sockets read in a real event loop would.
 */
function herd(
  seed: number,
  options: { clients?: number; capacity?: number; slotMs?: number; shuffleAnswers?: boolean } = {},
): { totalRequests: number; allSucceededMs: number; peakRetriesPerSlot: number; succeeded: number } {
  const clients = options.clients ?? 100;
  const capacity = options.capacity ?? 10;
  const slotMs = options.slotMs ?? 100;
  const clock = new VirtualClock();
  const random = new SeededRandom(seed);
  const pacer = new Pacer();
  const arrivals = new Map<number, Array<{ client: number; sentAt: number }>>();
  const retriesPerSlot = new Map<number, number>();
  const attempts = new Array<number>(clients).fill(0);
  let totalRequests = 0;
  let succeeded = 0;
  let allSucceededMs = 0;

  const shuffle = <T>(xs: T[]): T[] => {
    for (let i = xs.length - 1; i > 0; i--) {
      const j = Math.floor(random.next() * (i + 1));
      [xs[i], xs[j]] = [xs[j]!, xs[i]!];
    }
    return xs;
  };

  const send = (client: number) => {
    const now = clock.monotonic();
    totalRequests++;
    const slot = Math.floor(now / slotMs);
    if (++attempts[client]! > 1) retriesPerSlot.set(slot, (retriesPerSlot.get(slot) ?? 0) + 1);
    let list = arrivals.get(slot);
    if (list === undefined) {
      list = [];
      arrivals.set(slot, list);
      clock.schedule((slot + 1) * slotMs - now, () => endSlot(slot));
    }
    list.push({ client, sentAt: now });
  };

  const endSlot = (slot: number) => {
    const now = clock.monotonic();
    const answers = (arrivals.get(slot) ?? []).map((a, i) => ({ ...a, ok: i < capacity }));
    arrivals.delete(slot);
    for (const { client, sentAt, ok } of options.shuffleAnswers ? shuffle(answers) : answers) {
      pacer.onResult(now, ok ? 'ok' : 'rejected', undefined, sentAt);
      if (ok) {
        succeeded++;
        allSucceededMs = now;
      } else {
        paced(clock, pacer, now, () => send(client));
      }
    }
  };

  for (const client of shuffle([...Array(clients).keys()])) clock.schedule(0, () => send(client));
  while (clock.runNext());
  return { totalRequests, allSucceededMs, peakRetriesPerSlot: Math.max(0, ...retriesPerSlot.values()), succeeded };
}

const SEEDS = Array.from({ length: 200 }, (_, i) => i + 1);

function summary(values: number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted[sorted.length - 1]! };
}

describe('Pacer on the herd of SPEC S11.1', () => {
  it('meets the bar over 200 seeds: median ≤ 209 requests (bound 190), all succeeded by 1.3 s', () => {
    const runs = SEEDS.map((seed) => herd(seed));
    const total = summary(runs.map((r) => r.totalRequests));
    const done = summary(runs.map((r) => r.allSucceededMs));
    expect(runs.every((r) => r.succeeded === 100)).toBe(true);
    expect(total.min).toBeGreaterThanOrEqual(190); // the physical lower bound: a broken harness would beat it
    expect(total.median).toBeLessThanOrEqual(209);
    expect(done.min).toBeGreaterThanOrEqual(1_000);
    expect(done.max).toBeLessThanOrEqual(1_300);
    // Measured: 200 requests / 1 100 ms for every seed, at most 15 retries in a slot. (Before
    // the search phase: 190 / 1 000 ms, the bound — by trusting the first flight's rate, which
    // a token bucket answering at once makes 100× too high; see docs/simulator.md.)
    expect(summary(runs.map((r) => r.peakRetriesPerSlot)).max).toBeLessThanOrEqual(15);
  });

  it('learns other herds the same way (no rate is written anywhere)', () => {
    for (const setup of [
      { clients: 1_000, capacity: 100, slotMs: 100 },
      { clients: 100, capacity: 7, slotMs: 50 },
      { clients: 37, capacity: 3, slotMs: 250 },
    ]) {
      const run = herd(7, setup);
      const lowerRequests = setup.clients + (setup.clients - setup.capacity);
      const lowerMs = Math.ceil(setup.clients / setup.capacity) * setup.slotMs;
      expect(run.succeeded).toBe(setup.clients);
      expect(run.totalRequests).toBeLessThanOrEqual(Math.ceil(1.1 * lowerRequests));
      expect(run.allSucceededMs).toBeLessThanOrEqual(1.3 * lowerMs);
    }
  });

  it('stays reasonable when a slot’s answers are processed in random order', () => {
    // Rejections processed before the slot's successes start the search on a partial
    // estimate; later answers of the same slot respace the probes. Measured over 200 seeds:
    // requests 197 / 197 / 200, all succeeded 1.1 s (min / median / max).
    const runs = SEEDS.map((seed) => herd(seed, { shuffleAnswers: true }));
    const total = summary(runs.map((r) => r.totalRequests));
    const done = summary(runs.map((r) => r.allSucceededMs));
    expect(runs.every((r) => r.succeeded === 100)).toBe(true);
    expect(total.median).toBeLessThanOrEqual(230);
    expect(total.max).toBeLessThanOrEqual(300);
    expect(done.median).toBeLessThanOrEqual(2_000);
    expect(done.max).toBeLessThanOrEqual(6_000);
  });
});
