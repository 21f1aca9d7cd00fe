import { describe, expect, it } from 'vitest';
import type { Classification } from '../../src/classify/outcome.js';
import { SeededRandom } from '../../src/random/random.js';
import { downstream } from '../../src/runtime/downstream.js';
import { Simulation } from '../../src/sim/engine.js';
import { REJECTED } from '../../src/sim/herd-run.js';
import { SimDownstream, type SimDownstreamOptions } from '../../src/sim/sim-downstream.js';
import { VirtualClock } from '../../src/time/virtual-clock.js';

/**
 * SimDownstream against the real downstream() on a VirtualClock, with pacing: a herd of
 * `clients` callers at t = 0 against a server that serves the first `capacity` arrivals of
 * each `slotMs` slot and rejects the rest (429, no hint), answering at the slot's end. The
 * server is one small model written against a scheduler, so both drivers meet the same
 * server; the calls go through the simulator's driver in one run and through downstream()
 * in the other. They must agree attempt by attempt: the pacing stage's yield before booking,
 * its waits and what it learns are the runtime's in both.
 */
type Schedule = (atMs: number, run: () => void) => void;

function slotServer(schedule: Schedule, now: () => number, capacity: number, slotMs: number) {
  const slots = new Map<number, ((ok: boolean) => void)[]>();
  const log: [number, number][] = [];
  return {
    log,
    arrive(client: number, reply: (ok: boolean) => void): void {
      const t = now();
      log.push([client, t]);
      const slot = Math.floor(t / slotMs);
      let list = slots.get(slot);
      if (list === undefined) {
        const answers: ((ok: boolean) => void)[] = [];
        list = answers;
        slots.set(slot, answers);
        schedule((slot + 1) * slotMs, () => {
          slots.delete(slot);
          for (const [i, answer] of answers.entries()) answer(i < capacity);
        });
      }
      list.push(reply);
    },
  };
}

const OPTIONS: SimDownstreamOptions = {
  retry: {
    maxAttempts: Number.POSITIVE_INFINITY,
    maxElapsedMs: 3_600_000,
    backoff: { shape: 'exponential', baseMs: 50, capMs: 2_000, jitter: 'full' },
  },
  attemptTimeoutMs: false,
  budget: false,
  pacing: true,
};

function viaSimulator(seed: number, clients: number, capacity: number, slotMs: number) {
  const sim = new Simulation({ seed });
  const closures: (() => void)[] = [];
  const runClosure = sim.on((i) => closures[i]!());
  const server = slotServer(
    (at, run) => {
      closures.push(run);
      sim.at(at, runClosure, closures.length - 1);
    },
    () => sim.now,
    capacity,
    slotMs,
  );
  const ends: [number, boolean, number][] = [];
  const api: SimDownstream = new SimDownstream(
    sim,
    'server',
    OPTIONS,
    {
      send: (client) => server.arrive(client, (ok) => api.answer(client, sim.now, ok ? undefined : REJECTED)),
    },
    (end) => ends.push([end.call, end.ok, end.attempts]),
  );
  const start = sim.on((client, now) => api.start(client, now));
  for (let c = 0; c < clients; c++) sim.at(0, start, c);
  sim.run();
  return { sends: server.log, ends, lastMs: sim.now };
}

async function viaDownstream(seed: number, clients: number, capacity: number, slotMs: number) {
  const clock = new VirtualClock({ startMs: 0 });
  const server = slotServer(
    (at, run) => clock.schedule(0, run, at),
    () => clock.monotonic(),
    capacity,
    slotMs,
  );
  const rejected = new Error('429');
  const api = downstream('server', {
    ...OPTIONS,
    clock,
    random: new SeededRandom(seed),
    classify: (error): Classification | undefined => (error === rejected ? REJECTED : undefined),
  });
  const ends: [number, boolean, number][] = [];
  for (let c = 0; c < clients; c++) {
    const client = c;
    let attempts = 0;
    clock.schedule(
      0,
      () => {
        api
          .call(() => {
            attempts++;
            return new Promise<void>((resolve, reject) => server.arrive(client, (ok) => (ok ? resolve() : reject(rejected))));
          })
          .then(
            () => ends.push([client, true, attempts]),
            () => ends.push([client, false, attempts]),
          );
      },
      0,
    );
  }
  await clock.runAll(1_000_000);
  return { sends: server.log, ends, lastMs: clock.monotonic() };
}

describe('SimDownstream agrees with downstream() on a VirtualClock (pacing)', () => {
  for (const [seed, clients, capacity, slotMs] of [
    [1, 100, 10, 100],
    [2, 60, 7, 50],
  ] as const) {
    it(`seed ${seed}: ${clients} callers, ${capacity} per ${slotMs} ms — the same sends at the same times, the same ends`, async () => {
      const sim = viaSimulator(seed, clients, capacity, slotMs);
      const real = await viaDownstream(seed, clients, capacity, slotMs);
      expect(real.sends.length).toBe(sim.sends.length);
      expect(real.sends).toEqual(sim.sends);
      expect(real.ends).toEqual(sim.ends);
      // Not trivial: the herd was throttled and paced, and everyone got through.
      expect(sim.sends.length).toBeGreaterThan(clients * 1.5);
      expect(sim.ends.every(([, ok]) => ok)).toBe(true);
    });
  }
});
