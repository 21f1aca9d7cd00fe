import type { Classification } from '../classify/outcome.js';
import { BucketCounter } from './bucket-counter.js';
import { Simulation } from './engine.js';
import { arrivalRandom, buildServer, type LowerBound, type ServerSpec, serverLowerBound } from './models/index.js';
import { GIVE_UP } from './retry-state.js';

/** The thundering-herd experiment's setup. */
export interface HerdSetup {
  /** Clients, each sending one request at t = 0. */
  clients: number;
  /** Requests the server serves per slot. */
  capacity: number;
  /** Slot length, whole ms. */
  slotMs: number;
  seed: number;
  /**
   * The server model and its extra options; `capacity` per `slotMs` is its rate.
   * @default the slot server
   */
  server?: Omit<ServerSpec, 'capacity' | 'slotMs'>;
  /**
   * First tries arrive uniformly over [0, arrivalMs) instead of all at t = 0 — as a real herd's
   * do, reaching the server over a few ms. Drawn from their own random stream. @default 0
   */
  arrivalMs?: number;
}

/** The full server description of a herd setup. */
export function herdServerSpec(setup: Pick<HerdSetup, 'capacity' | 'slotMs' | 'server'>): ServerSpec {
  return { model: 'slot', ...setup.server, capacity: setup.capacity, slotMs: setup.slotMs };
}

/** What the server says to a client it could not serve: 429, no wait hint. */
export const REJECTED: Readonly<Classification> = Object.freeze({
  outcome: 'failed',
  retryable: true,
  throttled: true,
  status: 429,
});

/** How a strategy's clients reach the server; `runHerd` gives it to `HerdStrategy.create`. */
export interface HerdWire {
  /** Client `client`'s attempt `attempt` (1-based) leaves now and reaches the server. */
  send(client: number, attempt: number, now: number): void;
  /** Client `client` gave up now. */
  gaveUp(client: number, now: number): void;
}

/** The client side of one herd run: how the clients of one strategy behave. */
export interface HerdClients {
  /** Client `client` makes its request now (its attempts go out through the wire). */
  start(client: number, now: number): void;
  /** Its attempt was served (response delivered now). */
  served(client: number, now: number): void;
  /** Its attempt was rejected (response delivered now): it tries again through the wire, or gives up. */
  rejected(client: number, now: number): void;
}

/** Clients that only say how long to wait after each rejection (a plain retry policy). */
export interface DelayedClients {
  /** Client `client` sends an attempt now; returns its 1-based attempt number. */
  send(client: number, now: number): number;
  served(client: number, now: number): void;
  /** Its attempt was rejected (response delivered now): ms until it tries again, or `GIVE_UP`. */
  rejected(client: number, now: number): number;
}

/** `HerdClients` for clients that only name a delay: the wait and the resend are done here. */
export function delayedClients(sim: Simulation, wire: HerdWire, clients: DelayedClients): HerdClients {
  const send = (client: number, now: number) => wire.send(client, clients.send(client, now), now);
  const retry = sim.on(send);
  return {
    start: send,
    served: (client, now) => clients.served(client, now),
    rejected(client, now) {
      const delay = clients.rejected(client, now);
      if (delay === GIVE_UP) wire.gaveUp(client, now);
      else sim.after(delay, retry, client);
    },
  };
}

/** A named way for rejected clients to come back. */
export interface HerdStrategy {
  name: string;
  /** One line: the policy and its parameters. */
  description: string;
  /** Whether a run's outcome depends on the seed (jitter): deterministic ones run one seed. */
  random: boolean;
  /** Builds the clients' state for one run; they draw randomness from `sim.random` only. */
  create(sim: Simulation, setup: HerdSetup, wire: HerdWire): HerdClients;
}

export interface HerdRun {
  /** Every attempt that reached the server, first tries included. */
  totalRequests: number;
  /** The most retries (attempts after a client's first) arriving in one slot. */
  peakRetriesPerSlot: number;
  /** When the last client's success was delivered; `Infinity` if some client gave up. */
  allSucceededMs: number;
  succeeded: number;
  gaveUp: number;
  /** Attempts per slot, first tries included (only when `recordSeries`). */
  requestsPerSlot: number[] | undefined;
  /** Successes delivered per slot, (k × slot, (k + 1) × slot] (only when `recordSeries`). */
  servedPerSlot: number[] | undefined;
}

/**
 * One run of the herd: `clients` requests at t = 0 against the setup's server model (the slot
 * server by default); every rejected client asks its strategy when to come back. The wait
 * starts when the response arrives. Runs until every client has succeeded or given up.
 */
export function runHerd(
  setup: HerdSetup,
  strategy: HerdStrategy,
  options: { recordSeries?: boolean; onProgress?: (finishedClients: number) => void } = {},
): HerdRun {
  const sim = new Simulation({ seed: setup.seed });
  const perSlot = options.recordSeries ? new BucketCounter(setup.slotMs) : undefined;
  const servedPerSlot = options.recordSeries ? new BucketCounter(setup.slotMs) : undefined;
  const retriesPerSlot = new BucketCounter(setup.slotMs);
  const onProgress = options.onProgress;
  let total = 0;
  let succeeded = 0;
  let gaveUp = 0;
  let lastSuccess = 0;
  // A client finished: report every 2^16 of them.
  const finished = () => {
    if (onProgress !== undefined && ((succeeded + gaveUp) & 0xffff) === 0) onProgress(succeeded + gaveUp);
  };

  const server = buildServer(herdServerSpec(setup), sim, (client, ok, now) => {
    if (!ok) {
      clients.rejected(client, now);
      return;
    }
    succeeded++;
    lastSuccess = now;
    // An answer at a slot's very end belongs to that slot (the slot server answers there).
    servedPerSlot?.add(now > 0 ? now - 1e-6 : 0);
    clients.served(client, now);
    finished();
  });
  const clients = strategy.create(sim, setup, {
    send(client, attempt, now) {
      total++;
      perSlot?.add(now);
      if (attempt > 1) retriesPerSlot.add(now);
      server.arrive(client, now);
    },
    gaveUp() {
      gaveUp++;
      finished();
    },
  });
  const send = sim.on((client, now) => clients.start(client, now));

  const spread = setup.arrivalMs ?? 0;
  if (spread > 0) {
    const arrivals = arrivalRandom(setup.seed);
    for (let c = 0; c < setup.clients; c++) sim.at(arrivals.next() * spread, send, c);
  } else {
    for (let c = 0; c < setup.clients; c++) sim.at(0, send, c);
  }
  sim.run();
  onProgress?.(succeeded + gaveUp);

  return {
    totalRequests: total,
    peakRetriesPerSlot: retriesPerSlot.max(),
    allSucceededMs: gaveUp === 0 ? lastSuccess : Number.POSITIVE_INFINITY,
    succeeded,
    gaveUp,
    requestsPerSlot: perSlot?.toArray(),
    servedPerSlot: servedPerSlot?.toArray(),
  };
}

/**
 * The physical lower bound for the setup's server model: every client's first try, plus one
 * retry for each client the server cannot take at once; and the time it takes the server to
 * serve everyone once (slot server: as many slots as that takes).
 */
export function herdLowerBound(setup: Pick<HerdSetup, 'clients' | 'capacity' | 'slotMs' | 'server'>): LowerBound {
  return serverLowerBound(herdServerSpec(setup), setup.clients);
}
