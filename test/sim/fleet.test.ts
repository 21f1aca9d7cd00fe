import { describe, expect, it } from 'vitest';
import { Simulation } from '../../src/sim/engine.js';
import { fleetPacingStrategy, runFleetBudget } from '../../src/sim/fleet.js';
import { ADAPTIVE_HERD_STRATEGY } from '../../src/sim/herd-adaptive.js';
import {
  firstTryTimes,
  type HerdSetup,
  herdLowerBound,
  herdServerSpec,
  herdSpreadLowerBound,
  runHerd,
} from '../../src/sim/herd-run.js';
import { buildServer } from '../../src/sim/models/index.js';
import { FLEET_BUDGET_CREDIT } from '../../src/store/fleet-link.js';

/**
 * A fleet of four sharing its queue, as a long-lived service meets traffic: `warmUps` herds of
 * 50 callers at once, each `pauseMs` after the one before was served, then `setup`'s callers
 * arriving over `setup.arrivalMs`. Returns that last herd's requests and the time from its
 * first arrival until its last caller was served.
 */
function fleetAfterHerds(setup: HerdSetup, warmUps: number, pauseMs: number): { requests: number; ms: number } {
  const WARM = 50;
  const sim = new Simulation({ seed: setup.seed });
  const times = firstTryTimes(setup, setup.seed);
  let warmServed = 0;
  let startedAt = 0;
  let lastServed = 0;
  let requests = 0;
  const firstTry = sim.on((client: number, now: number) => clients.start(client, now));
  const startHerd = (at: number) => {
    startedAt = at;
    for (let i = 0; i < times.length; i++) sim.at(at + (times[i] as number), firstTry, warmUps * WARM + i);
  };
  const server = buildServer(herdServerSpec(setup), sim, (client, ok, now) => {
    if (!ok) {
      clients.rejected(client, now);
      return;
    }
    clients.served(client, now);
    if (client >= warmUps * WARM) {
      lastServed = now;
      return;
    }
    if (++warmServed % WARM !== 0) return;
    const wave = warmServed / WARM;
    if (wave === warmUps) startHerd(now + pauseMs);
    else for (let c = 0; c < WARM; c++) sim.at(now + pauseMs, firstTry, wave * WARM + c);
  });
  const clients = fleetPacingStrategy(4, true).create(
    sim,
    { ...setup, clients: warmUps * WARM + setup.clients },
    {
      send(client, _attempt, now) {
        if (client >= warmUps * WARM) requests++;
        server.arrive(client, now);
      },
      gaveUp(client) {
        throw new Error(`caller ${client} gave up`);
      },
    },
  );
  if (warmUps === 0) startHerd(0);
  else for (let c = 0; c < WARM; c++) sim.at(0, firstTry, c);
  sim.run();
  return { requests, ms: lastServed - startedAt };
}

/**
 * 400 callers over 2 s against a token bucket, a fixed window and a worker pool (one waiting
 * place), seeds 1–4, through `fleetAfterHerds`: ≤ 1.1× the bound's requests, ≤ 1.2× its time.
 */
function expectArrivalsWithinBound(warmUps: number, pauseMs: number): void {
  for (const model of ['token-bucket', 'fixed-window', 'concurrency'] as const) {
    for (let seed = 1; seed <= 4; seed++) {
      const setup: HerdSetup = {
        clients: 400,
        capacity: 10,
        slotMs: 100,
        seed,
        arrivalMs: 2_000,
        server: { model, latencyMs: 1, ...(model === 'concurrency' ? { queue: 1 } : {}) },
      };
      const bound = herdSpreadLowerBound(setup, 1);
      const run = fleetAfterHerds(setup, warmUps, pauseMs);
      const name = `${model}, seed ${seed}`;
      expect(run.requests / bound.totalRequests, name).toBeLessThanOrEqual(1.1);
      expect(run.ms / bound.allSucceededMs, name).toBeLessThanOrEqual(1.2);
    }
  }
}

describe('fleets in the simulator (same policies, shared through the fleet ledger)', () => {
  it('a shared budget earns from the fleet’s traffic; per-process budgets each fall back on their reserve', () => {
    // 9 s of load: every retry (≤ 150 ms of backoff later) falls in the budget's first 10 s
    // window, so the single-window bound applies to the whole run. At 20 requests/s a process
    // earns 4 retries/s, under the 10/s reserve floor; the fleet's 200/s earn 40/s, above it.
    const setup = { processes: 10, ratePerSecond: 20, durationMs: 9_000, seed: 1 };
    const local = runFleetBudget({ ...setup, shared: false });
    const shared = runFleetBudget({ ...setup, shared: true });
    console.log(
      `outage, 10 processes × 20/s: amplification ${local.amplification.toFixed(3)} per process, ${shared.amplification.toFixed(3)} shared`,
    );
    // Per process: 1 + max(0.2 × 20, 10) / 20 = 1.5. Shared: 1 + max(0.2 × 200, 10) / 200 = 1.2,
    // plus at most P × credit per window.
    expect(local.amplification).toBeGreaterThan(1.4);
    const windowRequests = 10 * 20 * 9;
    expect(shared.amplification).toBeLessThanOrEqual(1.2 + (10 * FLEET_BUDGET_CREDIT) / windowRequests + 1e-9);
    expect(shared.amplification).toBeGreaterThan(1.15);
    expect(shared.refused).toBeGreaterThan(0);
  });

  it('a store 20 ms away: claims wait for its answer and the bound still holds (store latency modelled)', () => {
    const setup = { processes: 10, ratePerSecond: 100, durationMs: 9_000, seed: 2, shared: true };
    const near = runFleetBudget({ ...setup, storeRttMs: 0.2 });
    const far = runFleetBudget({ ...setup, storeRttMs: 20 });
    console.log(
      `outage, store 0.2 ms vs 20 ms away: amplification ${near.amplification.toFixed(3)} vs ${far.amplification.toFixed(3)}`,
    );
    const bound = 1.2 + (100 + 10 * FLEET_BUDGET_CREDIT) / (10 * 100 * 9) + 1e-9;
    expect(near.amplification).toBeLessThanOrEqual(bound);
    expect(far.amplification).toBeLessThanOrEqual(bound);
    // Staler answers cost retries, never budget: deposits arrive later, so the fleet grows into its allowance later.
    expect(far.amplification).toBeLessThanOrEqual(near.amplification);
  });

  it('a herd split over 4 processes: shared pacing is faster than a pacer each; both measured against one process (seed 1)', () => {
    const herd = {
      clients: 100,
      capacity: 10,
      slotMs: 100,
      seed: 1,
      server: { model: 'leaky-bucket' as const, burst: 10, latencyMs: 5 },
    };
    const one = runHerd(herd, ADAPTIVE_HERD_STRATEGY);
    const local = runHerd(herd, fleetPacingStrategy(4, false));
    const shared = runHerd(herd, fleetPacingStrategy(4, true));
    console.log(
      `herd: one process ${one.totalRequests} requests / ${one.allSucceededMs.toFixed(0)} ms; 4 processes, a pacer each ${local.totalRequests} / ${local.allSucceededMs.toFixed(0)} ms; shared ${shared.totalRequests} / ${shared.allSucceededMs.toFixed(0)} ms`,
    );
    const lower = herdLowerBound(herd);
    expect(one.gaveUp + local.gaveUp + shared.gaveUp).toBe(0);
    expect(shared.allSucceededMs).toBeLessThan(local.allSucceededMs);
    // Measured: one process 197 / 966 ms, a pacer each 238 / 1,430 ms, shared 208 / 908 ms
    // (lower bound 190 / 905 ms): ≤ 1.1× the bound's requests and ≤ 1.2× its time. Before a
    // cut anywhere capped every process's start-up guess, shared needed 211 / 968 ms: each
    // guess was tested only by its own process's requests, a quarter of them. (Before the
    // fleet's queue re-spaced its waiting tickets: 234 / 1,251 ms — a herd booked at the
    // first guess was locked into it.)
    expect(shared.totalRequests).toBeLessThanOrEqual(1.1 * lower.totalRequests);
    expect(shared.allSucceededMs).toBeLessThanOrEqual(1.2 * lower.allSucceededMs);
  });

  it('shared pacing does not collapse when each process cuts on answers to slots booked before its cut (regression: fleet herd took 1.55 s)', () => {
    // With slots fixed at booking and cuts not gated, every process cut again on each
    // rejection of a request booked at the old rate, and the fleet's rate fell from 2,000/s
    // to 22/s. The fleet's queue now re-spaces its waiting tickets when the rate moves.
    const herd = {
      clients: 100,
      capacity: 10,
      slotMs: 100,
      seed: 3,
      server: { model: 'leaky-bucket' as const, burst: 10, latencyMs: 5 },
    };
    const lower = herdLowerBound(herd);
    const shared = runHerd(herd, fleetPacingStrategy(4, true, 0.5));
    expect(shared.gaveUp).toBe(0);
    // Measured 924 ms (1.02× the bound; 1,251 ms before the queue moved); the collapse this
    // guards against took 1.55 s (1.7×).
    expect(shared.allSucceededMs).toBeLessThanOrEqual(1.2 * lower.allSucceededMs);
  });

  it('a fleet of four sharing its queue against limits of 10 per 10 s and 60 a minute: ≤ 2.1× the bound’s requests (regressions: 31–104× when it ran away, then 2.8–4×)', () => {
    // With nothing served, a process cut every 16 gaps — past CUBIC's K — from the rate it had
    // climbed to, so each cut raised its level: 5/s to 100/s while everything was rejected.
    // Then 2.8–4×: the fleet's 300 ms delivery window held no answer between reopenings, so
    // each process's share set the rate, and the queue's floor held its search at a probe a
    // second. Still above a pacer alone: a fleet does not count windows as one pacer does.
    for (const model of ['fixed-window', 'token-bucket'] as const) {
      for (const [capacity, slotMs, clients] of [
        [10, 10_000, 100],
        [60, 60_000, 200],
      ] as const) {
        const setup = { clients, capacity, slotMs, seed: 1, server: { model, latencyMs: 1 } };
        const run = runHerd(setup, fleetPacingStrategy(4, true));
        const name = `${model}, ${capacity} per ${slotMs} ms`;
        expect(run.gaveUp, name).toBe(0);
        expect(run.totalRequests / herdLowerBound(setup).totalRequests, name).toBeLessThanOrEqual(2.1);
      }
    }
  });

  it('four processes sharing, callers arriving at twice the callee’s rate for 2 s: ≤ 1.1× the bound’s requests and ≤ 1.2× its time (regression: 1.18–1.21× the requests, the fleet’s retries sent into a callee the arrivals filled)', () => {
    expectArrivalsWithinBound(0, 0);
  });

  it('the same callers after three herds 1.5 s apart: ≤ 1.1× the requests and ≤ 1.2× the time (regression: 1.25–1.55× the time, the pauses between herds read as the callee’s rate)', () => {
    expectArrivalsWithinBound(3, 1_500);
  });
});
