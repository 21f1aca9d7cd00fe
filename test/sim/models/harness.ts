import { SeededRandom } from '../../../src/random/random.js';
import { Simulation } from '../../../src/sim/engine.js';
import type { ServerResponse, SimServer } from '../../../src/sim/models/server.js';

export interface Answer {
  client: number;
  ok: boolean;
  at: number;
}

/** Sends client i at `times[i]` to the server built by `build`; returns every answer in order. */
export function drive(
  build: (sim: Simulation, random: SeededRandom, respond: ServerResponse) => SimServer,
  times: readonly number[],
): Answer[] {
  const sim = new Simulation({ seed: 1 });
  const answers: Answer[] = [];
  const server = build(sim, new SeededRandom(7), (client, ok, at) => answers.push({ client, ok, at }));
  const send = sim.on((client, now) => server.arrive(client, now));
  for (let i = 0; i < times.length; i++) sim.at(times[i]!, send, i);
  sim.run();
  return answers;
}

/** The clients served, in order of their answers. */
export const served = (answers: Answer[]) => answers.filter((a) => a.ok).map((a) => a.client);
