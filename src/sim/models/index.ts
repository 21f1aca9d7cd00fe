import { SeededRandom } from '../../random/random.js';
import { type Latency, type LatencyDistribution, sampleLatency } from '../distributions.js';
import type { Simulation } from '../engine.js';
import { SlotServer } from '../slot-server.js';
import { ConcurrencyServer, concurrencyBound, workConservingFinish } from './concurrency.js';
import { FixedWindowServer, fixedWindowBound } from './fixed-window.js';
import { GcraServer, gcraBound } from './gcra.js';
import { LeakyBucketServer, leakyBucketBound } from './leaky-bucket.js';
import type { LowerBound, ServerResponse, SimServer } from './server.js';
import { TokenBucketServer, tokenBucketBound } from './token-bucket.js';

export type { LowerBound, ServerResponse, SimServer } from './server.js';

/** The server models a herd can run against. */
export const SERVER_MODELS = ['slot', 'token-bucket', 'leaky-bucket', 'fixed-window', 'gcra', 'concurrency'] as const;

export type ServerModel = (typeof SERVER_MODELS)[number];

/**
 * One server, described in the herd's common terms so that every model has the same capacity:
 * `capacity` requests per `slotMs`, `burst` of them at once from idle.
 *
 * | model          | mapped to                                                                 |
 * |----------------|---------------------------------------------------------------------------|
 * | `slot`         | first `capacity` arrivals per slot served, answers at the slot's end      |
 * | `token-bucket` | rate capacity / slotMs, bucket size `burst`                               |
 * | `leaky-bucket` | rate capacity / slotMs, nginx burst = `burst` − 1 (so `burst` pass at once)|
 * | `fixed-window` | `capacity` per window of `slotMs` (windows open at the first request)     |
 * | `gcra`         | rate capacity / slotMs, `burst` at once                                   |
 * | `concurrency`  | `capacity` workers, each request takes `slotMs`, `queue` may wait         |
 */
export interface ServerSpec {
  model: ServerModel;
  capacity: number;
  slotMs: number;
  /** Served at once from idle (bucket models). @default capacity */
  burst?: number;
  /** Answer latency, ms (not the slot model: its answers come at the slot's end). @default 1 */
  latencyMs?: number;
  /** @default 'constant' */
  distribution?: LatencyDistribution;
  /**
   * Rejection latency, ms, with the same distribution (not the slot model): a rate limiter in
   * front of a slow backend rejects at once and serves slowly. @default latencyMs
   */
  rejectLatencyMs?: number;
  /** Queue length of the concurrency model. @default 0 */
  queue?: number;
  /**
   * The concurrency model's service time (e.g. measured on a real server: `samples`).
   * @default `slotMs` with `distribution`
   */
  service?: Latency;

  /** Leaky bucket: nginx `nodelay` or not. @default 'nodelay' */
  mode?: 'nodelay' | 'delay';
}

/** The network's random stream: its own seed, so strategies are compared on the same draws. */
export function networkRandom(seed: number): SeededRandom {
  return new SeededRandom((seed ^ 0x6e657477) >>> 0); // "netw"
}

/** The arrivals' random stream (when first tries are spread): apart from network and jitter. */
export function arrivalRandom(seed: number): SeededRandom {
  return new SeededRandom((seed ^ 0x61727276) >>> 0); // "arrv"
}

/**
 * The stream reference service times are drawn from (`keptBusyReferenceMs`): apart from the
 * model's own, the arrivals' and the jitter's.
 */
export function referenceServiceRandom(seed: number): SeededRandom {
  return new SeededRandom((seed ^ 0x73657276) >>> 0); // "serv"
}

/** Whether the model draws randomness (a latency distribution other than constant). */
export function serverIsRandom(spec: ServerSpec): boolean {
  if (spec.model === 'slot') return false;
  if (spec.model === 'concurrency' && spec.service !== undefined && isRandom(spec.service)) return true;
  return (spec.distribution ?? 'constant') !== 'constant';
}

function isRandom(l: Latency): boolean {
  return l.samples !== undefined ? l.samples.length > 1 : (l.distribution ?? 'constant') !== 'constant';
}

function latency(spec: ServerSpec): Latency {
  return { ms: spec.latencyMs ?? 1, distribution: spec.distribution ?? 'constant' };
}

/** How long a rejection takes to come back: `rejectLatencyMs`, else the answer latency. */
function rejectLatency(spec: ServerSpec): Latency {
  return spec.rejectLatencyMs === undefined ? latency(spec) : { ...latency(spec), ms: spec.rejectLatencyMs };
}

/** The concurrency model's service time: `service`, else the slot length with the latency's shape. */
function serviceOf(spec: ServerSpec): Latency {
  return spec.service ?? { ...latency(spec), ms: spec.slotMs };
}

function rate(spec: ServerSpec): number {
  return (spec.capacity * 1000) / spec.slotMs;
}

/** Builds the model; answers reach `respond`. */
export function buildServer(spec: ServerSpec, sim: Simulation, respond: ServerResponse): SimServer {
  const random = networkRandom(sim.seed);
  const burst = spec.burst ?? spec.capacity;
  const l = latency(spec);
  const rl = rejectLatency(spec);
  switch (spec.model) {
    case 'slot':
      return new SlotServer(sim, { capacity: spec.capacity, slotMs: spec.slotMs }, respond);
    case 'token-bucket':
      return new TokenBucketServer(sim, random, { ratePerSecond: rate(spec), burst, latency: l, rejectLatency: rl }, respond);
    case 'leaky-bucket':
      return new LeakyBucketServer(
        sim,
        random,
        { ratePerSecond: rate(spec), burst: burst - 1, mode: spec.mode ?? 'nodelay', latency: l, rejectLatency: rl },
        respond,
      );
    case 'fixed-window':
      return new FixedWindowServer(
        sim,
        random,
        { limit: spec.capacity, windowMs: spec.slotMs, latency: l, rejectLatency: rl },
        respond,
      );
    case 'gcra':
      return new GcraServer(sim, random, { ratePerSecond: rate(spec), burst, latency: l, rejectLatency: rl }, respond);
    case 'concurrency':
      return new ConcurrencyServer(
        sim,
        random,
        { concurrency: spec.capacity, queue: spec.queue ?? 0, service: serviceOf(spec), rejectLatency: rl, latency: l },
        respond,
      );
  }
}

/** The best any strategy can do against the model with `clients` requests at t = 0. */
export function serverLowerBound(spec: ServerSpec, clients: number): LowerBound {
  const burst = spec.burst ?? spec.capacity;
  const l = latency(spec);
  switch (spec.model) {
    case 'slot':
      return {
        totalRequests: clients + Math.max(0, clients - spec.capacity),
        allSucceededMs: Math.ceil(clients / spec.capacity) * spec.slotMs,
      };
    case 'token-bucket':
      return tokenBucketBound(clients, { ratePerSecond: rate(spec), burst, latency: l });
    case 'leaky-bucket':
      return leakyBucketBound(clients, { ratePerSecond: rate(spec), burst: burst - 1, mode: spec.mode ?? 'nodelay', latency: l });
    case 'fixed-window':
      return fixedWindowBound(clients, { limit: spec.capacity, windowMs: spec.slotMs, latency: l });
    case 'gcra':
      return gcraBound(clients, { ratePerSecond: rate(spec), burst, latency: l });
    case 'concurrency':
      return concurrencyBound(clients, {
        concurrency: spec.capacity,
        queue: spec.queue ?? 0,
        service: serviceOf(spec),
        latency: l,
      });
  }
}

/**
 * For a concurrency model whose service times spread, where `serverLowerBound` (every service
 * at its mean) is out of reach: what a pool kept busy whenever it has work takes on services
 * drawn like the model's — `workConservingFinish` on `clients` draws, the first tries arriving
 * at `arrivals(seed)`, plus the answers' latency — averaged over `seeds` seeds from `seed`. An
 * expectation, not a bound for each seed: the model draws its services and latencies from one
 * stream, so each run meets services of its own. `undefined` for any other model, or for
 * service times that do not spread.
 */
export function keptBusyReferenceMs(
  spec: ServerSpec,
  clients: number,
  arrivals: (seed: number) => readonly number[],
  seed: number,
  seeds: number,
): number | undefined {
  if (spec.model !== 'concurrency') return undefined;
  const service = serviceOf(spec);
  if (!isRandom(service)) return undefined;
  let sum = 0;
  const n = Math.max(1, seeds);
  for (let i = 0; i < n; i++) {
    const random = referenceServiceRandom(seed + i);
    const draws = Array.from({ length: clients }, () => sampleLatency(service, random));
    sum += workConservingFinish(draws, arrivals(seed + i), spec.capacity) + latency(spec).ms;
  }
  return sum / n;
}
