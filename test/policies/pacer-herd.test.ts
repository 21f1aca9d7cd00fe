import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../../src/random/random.js';
import { Simulation } from '../../src/sim/engine.js';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import type { HerdClients } from '../../src/sim/herd-run.js';

/**
 * The standard herd (100 callers, 10 per 100 ms slot) with adaptive pacing: `clients` clients send at t = 0; the server
 * serves the first `capacity` arrivals of each `slotMs` slot and rejects the rest with 429 (no
 * hint); every answer is delivered at the end of its slot, in arrival order. The clients are
 * the simulator's adaptive strategy — calls of one simulated downstream with `pacing`, through
 * the runtime's own call orchestration (pacing stage included) — so this test measures the
 * pipeline users run, not a copy of it. The seed shuffles the clients' order at t = 0;
 * `shuffleAnswers` also shuffles the order in which a slot's answers are processed (still
 * served by arrival), as sockets read in a real event loop would.
 */
function herd(
  seed: number,
  options: { clients?: number; capacity?: number; slotMs?: number; shuffleAnswers?: boolean } = {},
): { totalRequests: number; allSucceededMs: number; peakRetriesPerSlot: number; succeeded: number } {
  const clients = options.clients ?? 100;
  const capacity = options.capacity ?? 10;
  const slotMs = options.slotMs ?? 100;
  const sim = new Simulation({ seed });
  const random = new SeededRandom(seed);
  const arrivals = new Map<number, Array<{ client: number }>>();
  const retriesPerSlot = new Map<number, number>();
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

  const endSlot = sim.on((slot, now) => {
    const answers = (arrivals.get(slot) ?? []).map((a, i) => ({ ...a, ok: i < capacity }));
    arrivals.delete(slot);
    for (const { client, ok } of options.shuffleAnswers ? shuffle(answers) : answers) {
      if (ok) {
        succeeded++;
        allSucceededMs = now;
        herdClients.served(client, now);
      } else {
        herdClients.rejected(client, now);
      }
    }
  });
  const herdClients: HerdClients = ADAPTIVE_HERD_STRATEGY.create(
    sim,
    { clients, capacity, slotMs, seed },
    {
      send(client, attempt, now) {
        totalRequests++;
        const slot = Math.floor(now / slotMs);
        if (attempt > 1) retriesPerSlot.set(slot, (retriesPerSlot.get(slot) ?? 0) + 1);
        let list = arrivals.get(slot);
        if (list === undefined) {
          list = [];
          arrivals.set(slot, list);
          sim.at((slot + 1) * slotMs, endSlot, slot);
        }
        list.push({ client });
      },
      gaveUp() {},
    },
  );
  const start = sim.on((client, now) => herdClients.start(client, now));
  for (const client of shuffle([...Array(clients).keys()])) sim.at(0, start, client);
  sim.run();
  return { totalRequests, allSucceededMs, peakRetriesPerSlot: Math.max(0, ...retriesPerSlot.values()), succeeded };
}

const SEEDS = Array.from({ length: 200 }, (_, i) => i + 1);

function summary(values: number[]): { min: number; median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { min: sorted[0]!, median: sorted[Math.floor((sorted.length - 1) / 2)]!, max: sorted[sorted.length - 1]! };
}

describe('Pacer on the standard herd', () => {
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
    // While the pacer is throttling, a rejected call yields before it books its slot (the
    // pacing stage), so a slot's answers all reach the pacer first whatever their order; only
    // a rejection processed before the pacer throttles books on a partial estimate. Measured
    // over 200 seeds: requests 190 / 190 / 248, all succeeded 1.0 / 1.0 / 1.1 s (min / median
    // / max). The hand-wired model this test held before booked at once, without the yield:
    // 190 / 215 / 248 and 1.0 / 1.4 / 3.9 s.
    const runs = SEEDS.map((seed) => herd(seed, { shuffleAnswers: true }));
    const total = summary(runs.map((r) => r.totalRequests));
    const done = summary(runs.map((r) => r.allSucceededMs));
    expect(runs.every((r) => r.succeeded === 100)).toBe(true);
    expect(total.median).toBeLessThanOrEqual(209);
    expect(total.max).toBeLessThanOrEqual(300);
    expect(done.median).toBeLessThanOrEqual(1_300);
    expect(done.max).toBeLessThanOrEqual(2_000);
  });
});
