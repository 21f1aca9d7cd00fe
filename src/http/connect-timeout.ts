/** A function with fetch's signature. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

interface UndiciAgent {
  close(): Promise<void>;
}

interface Undici {
  Agent: new (options: { connect: { timeout: number } }) => UndiciAgent;
  fetch: (input: string | URL, init?: RequestInit & { dispatcher?: object }) => Promise<Response>;
}

/**
 * How many undici agents (each a connection pool of its own) the connect-timeout fetch keeps
 * at most, one per connect-timeout step in use. Using another step beyond these closes the
 * least recently used agent, once the requests it still carries are over.
 * @default 8
 */
export const CONNECT_TIMEOUT_AGENTS = 8;

/**
 * The steps a connect timeout is rounded up to, per decade (×1, ×10, ×100 ms, …): round
 * values people pick (100, 250, 500, 1 000, 2 000, 5 000 ms) stay as they are, and any
 * other is lengthened by a third at most.
 */
const STEPS_PER_DECADE = [10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100] as const;

/**
 * The connect timeout actually used for `ms`: `ms` rounded up to the next step (see
 * {@link connectTimeoutFetch}). Never shorter than asked: a connection given a little longer
 * to connect is harmless, one cut short fails a request that would have succeeded.
 */
export function connectTimeoutStep(ms: number): number {
  let decade = 1;
  while (decade * 10 <= ms) decade *= 10;
  for (const step of STEPS_PER_DECADE) {
    // `step * decade` is exact in integers; one division keeps 1.2 as 1.2 (not 1.2000000000000002).
    const candidate = (step * decade) / 10;
    if (candidate >= ms) return candidate;
  }
  return decade * 10;
}

/** An agent and the requests still started through it (from `fetch` until its response or failure). */
interface Lease {
  readonly agent: UndiciAgent;
  inFlight: number;
  /** Let go of: closed once `inFlight` is back to 0. */
  evicted: boolean;
}

/** By step, least recently used first (a Map iterates in insertion order; a use re-inserts). */
const agents = new Map<number, Lease>();
/** The most recently used lease (the last in `agents`). */
let newest: Lease | undefined;
/** By step: bounded by the steps themselves (ten per decade). */
const fetches = new Map<number, Promise<FetchFunction>>();
let loading: Promise<Undici> | undefined;

/**
 * A fetch whose TCP/TLS connect phase times out after `ms` (at least 1), on Node only: it is
 * undici's `fetch` (undici 7, an optional peer dependency) with an `Agent` whose
 * `connect.timeout` is `ms` rounded up to a step ({@link connectTimeoutStep}: 1, 1.2, 1.5, 2,
 * 2.5, 3, 4, 5, 6, 8 × 10ⁿ ms). A connect timeout rejects with `UND_ERR_CONNECT_TIMEOUT`,
 * which kindly classifies `failed` (the request never left) and retryable.
 *
 * One agent (and so one connection pool) per step, so that timeouts computed per call (say,
 * from the time left) share connections instead of opening a pool each; at most
 * {@link CONNECT_TIMEOUT_AGENTS} are kept, the least recently used closed beyond that — after
 * the requests it carries are over, never cutting one short. The agent is looked up at each
 * request, not when the fetch is made: a retry after its agent was closed gets a new one.
 * undici is loaded with a dynamic import of a computed specifier so that browser bundlers
 * never try to include it; browsers have no connect timeout to set.
 */
export function connectTimeoutFetch(ms: number): Promise<FetchFunction> {
  if (!(ms >= 1 && Number.isFinite(ms))) {
    return Promise.reject(new RangeError(`connectTimeoutFetch expects a finite number of ms ≥ 1, got ${String(ms)}`));
  }
  const step = connectTimeoutStep(ms);
  let cached = fetches.get(step);
  if (cached === undefined) {
    cached = loadUndici().then((undici) => fetchWithStep(undici, step));
    fetches.set(step, cached);
    cached.catch(() => fetches.delete(step));
  }
  return cached;
}

function loadUndici(): Promise<Undici> {
  if (loading === undefined) {
    loading = importUndici();
    loading.catch(() => {
      loading = undefined; // installed later, a next call may find it
    });
  }
  return loading;
}

async function importUndici(): Promise<Undici> {
  const specifier = ['und', 'ici'].join('');
  try {
    return (await import(/* @vite-ignore */ specifier)) as Undici;
  } catch (error) {
    throw new Error('The `connectTimeoutMs` option needs the optional dependency undici@7 (npm i undici@7), on Node only', {
      cause: error,
    });
  }
}

function fetchWithStep(undici: Undici, step: number): FetchFunction {
  return (input, init) => {
    if (typeof input !== 'string' && !(input instanceof URL)) {
      throw new TypeError('connectTimeoutFetch expects a URL; kindly passes Request inputs as URL + init');
    }
    const lease = leaseAgent(undici, step);
    lease.inFlight++;
    let answer: Promise<Response>;
    try {
      answer = undici.fetch(input, { ...init, dispatcher: lease.agent });
    } catch (error) {
      giveBack(lease);
      throw error;
    }
    // Until the response arrives the request may not have reached the agent yet (undici
    // dispatches a few ticks after `fetch`), and a closed agent refuses it; from then on it
    // is the agent's, and `close()` waits for it (body included).
    answer.then(
      () => giveBack(lease),
      () => giveBack(lease),
    );
    return answer;
  };
}

/** The agent for `step`, made the most recently used; the least recently used beyond the bound is let go. */
function leaseAgent(undici: Undici, step: number): Lease {
  let lease = agents.get(step);
  if (lease !== undefined) {
    // Requests mostly go through the step used last: re-inserted only when another was.
    if (lease !== newest) {
      agents.delete(step);
      agents.set(step, lease);
      newest = lease;
    }
    return lease;
  }
  lease = { agent: new undici.Agent({ connect: { timeout: step } }), inFlight: 0, evicted: false };
  agents.set(step, lease);
  newest = lease;
  for (const [oldest, old] of agents) {
    if (agents.size <= CONNECT_TIMEOUT_AGENTS) break;
    agents.delete(oldest);
    old.evicted = true;
    if (old.inFlight === 0) close(old);
  }
  return lease;
}

function giveBack(lease: Lease): void {
  lease.inFlight--;
  if (lease.evicted && lease.inFlight === 0) close(lease);
}

/** Closes an agent let go of: its idle connections now, busy ones when their responses end. */
function close(lease: Lease): void {
  lease.agent.close().catch(() => undefined);
}
