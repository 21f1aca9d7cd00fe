import type { Classification } from '../classify/outcome.js';
import { BucketCounter } from './bucket-counter.js';
import { type EventKind, Simulation } from './engine.js';
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

/** How `runHerd` reports beside its result. */
export interface HerdRunOptions {
  /** Record attempts and successes per slot (`requestsPerSlot`, `servedPerSlot`). */
  recordSeries?: boolean;
  /** Told how many clients have finished, every 2^16 of them and at the end. */
  onProgress?: (finishedClients: number) => void;
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

/** What one herd run counts as it goes, and its result. */
class HerdTally {
  total = 0;
  succeeded = 0;
  gaveUp = 0;
  lastSuccess = 0;
  private readonly perSlot: BucketCounter | undefined;
  private readonly servedPerSlot: BucketCounter | undefined;
  private readonly retriesPerSlot: BucketCounter;
  private readonly onProgress: ((finishedClients: number) => void) | undefined;

  constructor(slotMs: number, options: HerdRunOptions) {
    this.perSlot = options.recordSeries ? new BucketCounter(slotMs) : undefined;
    this.servedPerSlot = options.recordSeries ? new BucketCounter(slotMs) : undefined;
    this.retriesPerSlot = new BucketCounter(slotMs);
    this.onProgress = options.onProgress;
  }

  /** Attempt `attempt` (1-based) reached the server now. */
  sent(attempt: number, now: number): void {
    this.total++;
    this.perSlot?.add(now);
    if (attempt > 1) this.retriesPerSlot.add(now);
  }

  /** A success was delivered now. */
  served(now: number): void {
    this.succeeded++;
    this.lastSuccess = now;
    // An answer at a slot's very end belongs to that slot (the slot server answers there).
    this.servedPerSlot?.add(now > 0 ? now - 1e-6 : 0);
  }

  /** A client finished: report every 2^16 of them. */
  finished(): void {
    if (this.onProgress !== undefined && ((this.succeeded + this.gaveUp) & 0xffff) === 0)
      this.onProgress(this.succeeded + this.gaveUp);
  }

  /** The run is over: the last progress report, and the result. */
  result(): HerdRun {
    this.onProgress?.(this.succeeded + this.gaveUp);
    return {
      totalRequests: this.total,
      peakRetriesPerSlot: this.retriesPerSlot.max(),
      allSucceededMs: this.gaveUp === 0 ? this.lastSuccess : Number.POSITIVE_INFINITY,
      succeeded: this.succeeded,
      gaveUp: this.gaveUp,
      requestsPerSlot: this.perSlot?.toArray(),
      servedPerSlot: this.servedPerSlot?.toArray(),
    };
  }
}

/** Every client's first try: all at t = 0, or spread over [0, arrivalMs) by their own random stream. */
function scheduleFirstTries(sim: Simulation, setup: HerdSetup, firstTry: EventKind): void {
  const times = firstTryTimes(setup, setup.seed);
  for (let c = 0; c < setup.clients; c++) sim.at(times[c] ?? 0, firstTry, c);
}

/**
 * When each client's first try leaves with seed `seed`, in client order: all at 0, or drawn
 * uniformly over `arrivalMs` from the arrivals' own random stream.
 */
export function firstTryTimes(setup: Pick<HerdSetup, 'clients' | 'arrivalMs'>, seed: number): number[] {
  const spread = setup.arrivalMs ?? 0;
  if (!(spread > 0)) return new Array<number>(setup.clients).fill(0);
  const arrivals = arrivalRandom(seed);
  return Array.from({ length: setup.clients }, () => arrivals.next() * spread);
}

/**
 * One run of the herd: `clients` requests at t = 0 against the setup's server model (the slot
 * server by default); every rejected client asks its strategy when to come back. The wait
 * starts when the response arrives. Runs until every client has succeeded or given up.
 */
export function runHerd(setup: HerdSetup, strategy: HerdStrategy, options: HerdRunOptions = {}): HerdRun {
  const sim = new Simulation({ seed: setup.seed });
  const tally = new HerdTally(setup.slotMs, options);
  const server = buildServer(herdServerSpec(setup), sim, (client, ok, now) => {
    if (!ok) {
      clients.rejected(client, now);
      return;
    }
    tally.served(now);
    clients.served(client, now);
    tally.finished();
  });
  const clients = strategy.create(sim, setup, {
    send(client, attempt, now) {
      tally.sent(attempt, now);
      server.arrive(client, now);
    },
    gaveUp() {
      tally.gaveUp++;
      tally.finished();
    },
  });
  const firstTry = sim.on((client, now) => clients.start(client, now));
  scheduleFirstTries(sim, setup, firstTry);
  sim.run();
  return tally.result();
}

/** Every client sends its first try and nothing more: a rejected one gives up at once. */
const FIRST_TRIES_ONLY: HerdStrategy = {
  name: 'first tries only',
  description: 'no retries',
  random: false,
  create: (_sim, _setup, wire) => ({
    start: (client, now) => wire.send(client, 1, now),
    served: () => {},
    rejected: (client, now) => wire.gaveUp(client, now),
  }),
};

/**
 * The lower bound when first tries are spread over `arrivalMs` (the same draws as the runs of
 * seeds `seed` … `seed + seeds − 1`), for each of those seeds:
 * - requests: every first try, plus one retry for each first try the server rejects when
 *   first tries are all it gets (retries only add to what it must turn away), the fewest over
 *   the seeds. Spread first tries can find room that a herd at t = 0 does not, so the bound
 *   for t = 0 is no bound here (a strategy beat it by 5 requests with first tries over 500 ms).
 *   With random latencies or service times the first tries' own run draws its own, so this is
 *   checked rather than proven there: no run beat it in 2,160 (five models, three
 *   distributions, four strategies, six seeds).
 * - time: the bound for t = 0 (arriving later cannot finish sooner), or the last first try's
 *   arrival when that is later, the earliest over the seeds. Like the bound for t = 0, it takes
 *   a random latency at its nominal value: a run whose draws come in short can finish a few ms
 *   earlier (16 of those 2,160, by at most 14.1 ms).
 * Without a spread it is `herdLowerBound`.
 */
export function herdSpreadLowerBound(setup: HerdSetup, seeds: number): LowerBound {
  const atOnce = herdLowerBound(setup);
  const spread = setup.arrivalMs ?? 0;
  if (!(spread > 0)) return atOnce;
  let totalRequests = Number.POSITIVE_INFINITY;
  let allSucceededMs = Number.POSITIVE_INFINITY;
  for (let i = 0; i < Math.max(1, seeds); i++) {
    const seed = setup.seed + i;
    const firstTries = runHerd({ ...setup, seed }, FIRST_TRIES_ONLY);
    totalRequests = Math.min(totalRequests, setup.clients + firstTries.gaveUp);
    const last = firstTryTimes(setup, seed).reduce((a, b) => Math.max(a, b), 0);
    allSucceededMs = Math.min(allSucceededMs, Math.max(atOnce.allSucceededMs, last));
  }
  return { totalRequests, allSucceededMs };
}

/**
 * The physical lower bound for the setup's server model: every client's first try, plus one
 * retry for each client the server cannot take at once; and the time it takes the server to
 * serve everyone once (slot server: as many slots as that takes).
 */
export function herdLowerBound(setup: Pick<HerdSetup, 'clients' | 'capacity' | 'slotMs' | 'server'>): LowerBound {
  return serverLowerBound(herdServerSpec(setup), setup.clients);
}
