import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Simulation } from '../../src/sim/engine.js';
import { SlotServer } from '../../src/sim/slot-server.js';

function setup(capacity: number, slotMs: number) {
  const sim = new Simulation({ seed: 1 });
  const responses: { client: number; ok: boolean; at: number }[] = [];
  const server = new SlotServer(sim, { capacity, slotMs }, (client, ok, now) => responses.push({ client, ok, at: now }));
  const arrive = sim.on((client, now) => server.arrive(client, now));
  return { sim, responses, server, arrive };
}

describe('SlotServer', () => {
  it('serves the first `capacity` arrivals of a slot, rejects the rest, answers all at the slot end in arrival order', () => {
    const { sim, responses, arrive } = setup(2, 100);
    sim.at(10, arrive, 7);
    sim.at(0, arrive, 5);
    sim.at(99, arrive, 8);
    sim.at(50, arrive, 6);
    sim.run();
    expect(responses).toEqual([
      { client: 5, ok: true, at: 100 },
      { client: 7, ok: true, at: 100 },
      { client: 6, ok: false, at: 100 },
      { client: 8, ok: false, at: 100 },
    ]);
  });

  it('counts a request arriving exactly at a slot boundary in the next slot', () => {
    const { sim, responses, arrive } = setup(1, 100);
    sim.at(0, arrive, 1);
    sim.at(100, arrive, 2);
    sim.run();
    expect(responses).toEqual([
      { client: 1, ok: true, at: 100 },
      { client: 2, ok: true, at: 200 },
    ]);
  });

  it('puts an immediate retry sent from a response into the next slot', () => {
    const sim = new Simulation({ seed: 1 });
    const log: string[] = [];
    let server: SlotServer;
    const arrive = sim.on((client, now) => server.arrive(client, now));
    server = new SlotServer(sim, { capacity: 1, slotMs: 100 }, (client, ok, now) => {
      log.push(`${client}:${ok ? 'ok' : '429'}@${now}`);
      if (!ok) sim.after(0, arrive, client);
    });
    sim.at(0, arrive, 1);
    sim.at(0, arrive, 2);
    sim.run();
    expect(log).toEqual(['1:ok@100', '2:429@100', '2:ok@200']);
  });

  it('rejects a bad capacity or slot length', () => {
    const sim = new Simulation({ seed: 1 });
    expect(() => new SlotServer(sim, { capacity: 0, slotMs: 100 }, () => {})).toThrow(/capacity/);
    expect(() => new SlotServer(sim, { capacity: 1, slotMs: 2.5 }, () => {})).toThrow(/slotMs/);
    expect(() => new SlotServer(sim, { capacity: 1.5, slotMs: 0 }, () => {})).toThrow(/capacity[\s\S]*slotMs/);
  });

  it('answers every arrival exactly once, at the end of its slot, never serving more than capacity per slot', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 50 }),
        fc.array(fc.double({ min: 0, max: 1000, noNaN: true }), { maxLength: 80 }),
        (capacity, slotMs, times) => {
          const { sim, responses, arrive } = setup(capacity, slotMs);
          for (const [i, t] of times.entries()) sim.at(t, arrive, i);
          sim.run();
          expect(responses.map((r) => r.client).sort((a, b) => a - b)).toEqual(times.map((_, i) => i));
          const servedPerSlot = new Map<number, number>();
          for (const r of responses) {
            const t = times[r.client]!;
            expect(r.at).toBe((Math.floor(t / slotMs) + 1) * slotMs);
            if (r.ok) servedPerSlot.set(r.at, (servedPerSlot.get(r.at) ?? 0) + 1);
          }
          for (const n of servedPerSlot.values()) expect(n).toBeLessThanOrEqual(capacity);
        },
      ),
    );
  });
});
