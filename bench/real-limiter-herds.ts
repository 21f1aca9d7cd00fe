/**
 * Herds against real rate limiters nobody here wrote, one after another: 100 callers in this
 * process through `downstream().fetch`, retrying until served, against `limiter`'s TokenBucket
 * (100/s, bucket 10), `express-rate-limit` (10 per 100 ms, a fixed window), `express-queue`
 * (10 at once, 100 ms each, one waiting), nginx `limit_req` (100 r/s, burst 9, nodelay) or
 * `redis-gcra` (100/s, burst 10, on a real redis-server). The strategy is kindly's adaptive
 * pacing (`pacing: {}`, the default) or one of the herd's retry policies. Prints each
 * herd's requests (counted by the server) and the time until the last caller was served —
 * the spread over several herds is the figure, since one herd on a loaded machine says little
 * — then the medians beside the simulator's model of that limiter (same strategy, 200 seeds;
 * express-queue's model draws its service times from the ones measured in these herds), and
 * where each real herd falls in the model's spread: its percentile rank. If the model were
 * exact, ranks would be uniform over 0–1 (mean 0.5); a median of 5 herds of a long-tailed
 * time (full jitter: the model's own seeds span 1.2–3.7 s) moves by ±15 % from run to run,
 * so the ranks say more than one median.
 *
 * Then the model once more, fed how long each herd's first tries took to reach the limiter
 * (logged there: kindly marks a first try `x-retry-attempt: 0`) as its `arrivalMs`: sent at
 * once, 100 requests from one process reach a limiter over ~10–120 ms, and a herd in lockstep
 * (`fixed`, `exponential`) keeps that spread in every round — the model deciding them at one
 * instant sent 550 requests where the real herds' medians were 350–460.
 *
 *     npx tsx bench/real-limiter-herds.ts token-bucket|fixed-window|concurrency|leaky-bucket|gcra [herds=8] [adaptive|fixed|exponential|full|equal|decorrelated|floor|fixed-rate] [--server-process] [--warmup=20] [--one-downstream] [--arrival-ms=0] [--return-delay-ms=0] [--rounds] [--work-ms=0]
 *
 * `--arrival-ms=N` spreads the callers' first tries uniformly over N ms (a seeded stream per
 * herd), as the simulator's `--arrival-ms` does, instead of sending all 100 at once: a herd
 * that builds up over a few windows, as callers arriving one by one make it.
 *
 * `--return-delay-ms=N` puts a TCP proxy in front of the limiter that holds every byte of its
 * answers for N ms (`test/support/delay-proxy.ts`): a way back as long as a callee across a
 * network has. The model gets the same latency back (`latencyMs`, constant).
 *
 * `fixed-rate` is no retry policy but a yardstick: plain `fetch`, every retry on one shared
 * schedule at the limiter's 100/s, known in advance — the best a client pacing at a fixed rate
 * does against that limiter on this machine (its first flight's CPU and the limiter's own
 * timing included), which adaptive pacing, learning the rate, is measured against.
 *
 * The limiters run in this process by default, as the integration test runs them (nginx and
 * redis-server are processes of their own anyway). `--server-process` starts the limiter in a
 * child process instead, as a real callee is: its timers and the herd's reads then do not
 * share one event loop.
 */
import { createFetch } from '../src/http/index.js';
import { SeededRandom } from '../src/random/random.js';
import { type DownstreamOptions, downstream } from '../src/runtime/downstream.js';
import { type HerdRun, herdLowerBound, runHerd } from '../src/sim/herd-run.js';
import { HERD_RETRY_OPTIONS } from '../src/sim/herd-strategies.js';
import type { ServerSpec } from '../src/sim/models/index.js';
import { HERD_STRATEGIES } from '../src/sim/scenarios/herd.js';
import { systemClock } from '../src/time/system-clock.js';
import { withReturnDelay } from '../test/support/delay-proxy.js';
import { startLimiterProcess } from '../test/support/limiter-process.js';
import {
  type Arrival,
  firstTriesSpanMs,
  herdCallerUrl,
  type LimitedServer,
  startConcurrencyServer,
  startFixedWindowServer,
  startGcraServer,
  startTokenBucketServer,
} from '../test/support/limiter-servers.js';
import { startNginx } from '../test/support/nginx.js';
import { fixedRateStrategy, SharedSchedule } from './fixed-rate-strategy.js';

/** A simulator server model, without the herd's capacity and slot. */
type Server = Omit<ServerSpec, 'capacity' | 'slotMs'>;

type Counts = ReturnType<LimitedServer['requests']>;

/** A limiter in this process (`LimitedServer`) or in a child process (`startLimiterProcess`). */
interface Limiter {
  url: string;
  requests(): Counts | Promise<Counts>;
  serviceTimes?(): number[] | Promise<number[]>;
  arrivals?(): Arrival[] | Promise<Arrival[]>;
  resetCounts(): void | Promise<void>;
  close(): Promise<void>;
}

/** The value of `--NAME=…`, if given. */
function flag(name: string): string | undefined {
  return process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

/** `--NAME=N`: a number of ms, 0 or more; `fallback` when absent. */
function msFlag(name: string, fallback = 0): number {
  const ms = Number(flag(name) ?? fallback);
  if (!(ms >= 0)) throw new Error(`--${name} must be a number of ms, 0 or more`);
  return ms;
}

const BUCKET = { ratePerSecond: 100, burst: 10 };
/**
 * `--work-ms=N` (token-bucket only): the limiter's server spends N ms of CPU on each request
 * before the bucket decides it, one request at a time — a server with real work per request,
 * which takes a burst over 100 × N ms more.
 */
const workMs = msFlag('work-ms');
const WORKING_BUCKET = { ...BUCKET, workMs };
const WINDOW = { limit: 10, windowMs: 100 };
const QUEUE = { concurrency: 10, queue: 1, serviceMs: 100 };

/**
 * Each limiter; its name is the simulator model that stands for it. `processOptions`: what
 * `--server-process` starts it with in a child process (absent: a process of its own already).
 */
const LIMITERS: Record<string, { label: string; start: () => Promise<Limiter>; model: Server; processOptions?: object }> = {
  'token-bucket': {
    label: "limiter's TokenBucket",
    start: () => startTokenBucketServer(WORKING_BUCKET),
    model: { model: 'token-bucket' },
    processOptions: WORKING_BUCKET,
  },
  'fixed-window': {
    label: 'express-rate-limit',
    start: () => startFixedWindowServer(WINDOW),
    model: { model: 'fixed-window' },
    processOptions: WINDOW,
  },
  concurrency: {
    label: 'express-queue',
    start: () => startConcurrencyServer(QUEUE),
    model: { model: 'concurrency', queue: 1 },
    processOptions: QUEUE,
  },
  'leaky-bucket': {
    label: 'nginx limit_req',
    async start() {
      const nginx = await startNginx({ ratePerSecond: 100, burst: 9, nodelay: true });
      return {
        url: nginx.url,
        requests: () => nginx.requests(),
        arrivals: () => nginx.arrivals(),
        resetCounts: () => nginx.resetLog(),
        close: () => nginx.stop(),
      };
    },
    model: { model: 'leaky-bucket' },
  },
  gcra: {
    label: 'redis-gcra',
    start: () => startGcraServer(BUCKET),
    model: { model: 'gcra' },
    processOptions: BUCKET,
  },
};

const UNTIL_SERVED = { maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 60_000 } as const;

const STRATEGIES: Record<string, DownstreamOptions> = {
  adaptive: {
    budget: false,
    attemptTimeoutMs: 10_000,
    retry: { ...UNTIL_SERVED, backoff: { shape: 'constant', baseMs: 0, jitter: 'none' } },
    pacing: {},
  },
  // The herd's plain retry policies, every one of its rows: the two without jitter as much as
  // the jittered ones, since lockstep is exactly what a real server's timing might break up.
  ...Object.fromEntries(
    Object.entries(HERD_RETRY_OPTIONS).map(([name, retry]) => [name, { budget: false, attemptTimeoutMs: 10_000, retry }]),
  ),
};

/** The limiters' rate, per second: what the `fixed-rate` strategy is told in advance. */
const KNOWN_RATE = 100;

/** Callers in every herd, each with one request. */
const CALLERS = 100;

/**
 * One herd of 100 with plain `fetch`, every retry on one shared schedule at the limiter's rate,
 * known in advance (`fixedRateStrategy`): what pacing at the right rate achieves against this
 * limiter on this machine — the yardstick for adaptive pacing, which has to learn the rate.
 */
async function fixedRateHerd(url: string, firstTries: number[]): Promise<number> {
  const slots = new SharedSchedule(KNOWN_RATE);
  const start = systemClock.monotonic();
  let last = 0;
  await Promise.all(
    firstTries.map(async (at, caller) => {
      if (at > 0) await systemClock.sleep(at);
      for (;;) {
        const response = await fetch(herdCallerUrl(url, caller));
        await response.arrayBuffer();
        if (response.ok) break;
        const now = systemClock.monotonic();
        await systemClock.sleep(slots.next(now) - now);
      }
      last = Math.max(last, systemClock.monotonic() - start);
    }),
  );
  return last;
}

/** With `--one-downstream`, every herd goes through this one (made at the first herd). */
let shared: ReturnType<typeof downstream> | undefined;

/** The callers' first tries, ms after the herd's start: all at once, or spread over `--arrival-ms`. */
function arrivals(herdIndex: number): number[] {
  if (arrivalMs === 0) return new Array<number>(CALLERS).fill(0);
  const random = new SeededRandom(1 + herdIndex);
  return Array.from({ length: CALLERS }, () => random.next() * arrivalMs);
}

/** One herd of 100: ms until the last caller was served. */
async function herd(url: string, options: DownstreamOptions | 'fixed-rate', herdIndex: number): Promise<number> {
  if (options === 'fixed-rate') return fixedRateHerd(url, arrivals(herdIndex));
  const api = oneDownstream ? (shared ??= downstream('herd', options)) : downstream('herd', options);
  // Each attempt carries kindly's `x-retry-attempt` (it is not sent to a host outside a
  // deadline scope by default), so the limiter's log tells first tries from retries; each
  // caller names itself in the query, so `--rounds` can follow callers from round to round.
  const fetchMarked = createFetch(api, { propagateHeaders: true });
  const start = systemClock.monotonic();
  let last = 0;
  await Promise.all(
    arrivals(herdIndex).map(async (at, caller) => {
      if (at > 0) await systemClock.sleep(at);
      const response = await fetchMarked(herdCallerUrl(url, caller));
      await response.arrayBuffer();
      last = Math.max(last, systemClock.monotonic() - start);
    }),
  );
  return last;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

const serverProcess = process.argv.includes('--server-process');
/**
 * `--one-downstream`: every herd through one downstream, as a long-lived service meets them —
 * the next herd arrives 300 ms after the last, while its pacer still paces (by default each
 * herd gets a fresh downstream, as the simulator's herd does).
 */
const oneDownstream = process.argv.includes('--one-downstream');
/**
 * `--rounds`: after each timed herd, its requests as the limiter met them, in rounds: by attempt
 * number where kindly marked them (every first try, every second try, …: a lockstep herd's
 * waves), else runs of arrivals with no gap of `ROUND_GAP_MS` between them (a plain `fetch`).
 * For each round: when it began, over how long its requests arrived, how many were served; with
 * marks, also whether its callers came in the order they had in the round before (the
 * correlation of their positions, 1 when the order is kept).
 */
const showRounds = process.argv.includes('--rounds');
const ROUND_GAP_MS = 50;

interface Round {
  from: number;
  to: number;
  served: number;
  total: number;
  /** Callers in arrival order (marked rounds only). */
  callers: number[];
}

function roundsOf(arrivals: Arrival[]): Round[] {
  const marked = arrivals.length > 0 && arrivals.every((a) => a.previousAttempts !== undefined);
  const rounds: Round[] = [];
  for (const a of arrivals) {
    let round: Round;
    if (marked) round = rounds[a.previousAttempts!] ??= { from: a.atMs, to: a.atMs, served: 0, total: 0, callers: [] };
    else {
      const last = rounds.at(-1);
      if (last === undefined || a.atMs - last.to > ROUND_GAP_MS)
        rounds.push({ from: a.atMs, to: a.atMs, served: 0, total: 0, callers: [] });
      round = rounds.at(-1)!;
    }
    round.to = a.atMs;
    round.total++;
    if (a.served) round.served++;
    if (marked && a.caller !== undefined) round.callers.push(a.caller);
  }
  return rounds.filter((r) => r !== undefined);
}

/** Pearson correlation of the positions (0–1) of the callers two rounds share; NaN with fewer than 3. */
function orderKept(before: number[], after: number[]): number {
  const position = (order: number[]) => new Map(order.map((c, i) => [c, i / Math.max(1, order.length - 1)]));
  const was = position(before);
  const is = position(after);
  const shared = after.filter((c) => was.has(c));
  if (shared.length < 3) return Number.NaN;
  const xs = shared.map((c) => was.get(c)!);
  const ys = shared.map((c) => is.get(c)!);
  const mx = mean(xs);
  const my = mean(ys);
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxy / Math.sqrt(sxx * syy);
}

function printRounds(herd: number, arrivals: Arrival[]): void {
  const rounds = roundsOf(arrivals);
  const first = Math.min(...rounds.map((r) => r.from));
  const kept = (r: Round, i: number) => {
    const previous = rounds[i - 1];
    if (previous === undefined || r.callers.length === 0) return '';
    const rho = orderKept(previous.callers, r.callers);
    return Number.isNaN(rho) ? '' : ` ρ ${rho.toFixed(2)}`;
  };
  console.log(
    `  herd ${herd} rounds (start ms +over ms served/arrived${rounds[0]?.callers.length ? ', ρ: order kept' : ''}): ` +
      rounds
        .map((r, i) => `${(r.from - first).toFixed(0)} +${(r.to - r.from).toFixed(1)} ${r.served}/${r.total}${kept(r, i)}`)
        .join(' · '),
  );
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const positional = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const name = positional[0] ?? 'token-bucket';
const herds = Number(positional[1] ?? 8);
const strategy = positional[2] ?? 'adaptive';
/** `--arrival-ms=N`: the first tries spread over N ms. */
const arrivalMs = msFlag('arrival-ms');
/** `--return-delay-ms=N`: every answer held N ms on its way back (`delayProxy`). */
const returnDelayMs = msFlag('return-delay-ms');
/** Herds run before the timed ones (`--warmup=N`). */
const warmupHerds = Number(flag('warmup') ?? 20);
if (!Number.isInteger(warmupHerds) || warmupHerds < 1) throw new Error('--warmup must be a whole number of herds, at least 1');
const limiter = LIMITERS[name];
if (limiter === undefined) throw new Error(`Unknown limiter '${name}': one of ${Object.keys(LIMITERS).join(', ')}`);
const options = strategy === 'fixed-rate' ? 'fixed-rate' : STRATEGIES[strategy];
if (options === undefined)
  throw new Error(`Unknown strategy '${strategy}': one of ${[...Object.keys(STRATEGIES), 'fixed-rate'].join(', ')}`);
const processOptions = serverProcess ? limiter.processOptions : undefined;
const limited: Limiter =
  processOptions !== undefined
    ? await startLimiterProcess(name as 'token-bucket' | 'fixed-window' | 'concurrency' | 'gcra', processOptions)
    : await limiter.start();
const server: Limiter = returnDelayMs > 0 ? await withReturnDelay(limited, returnDelayMs) : limited;
// Herds before the timed ones open the pooled connections and let V8 compile the client's
// code, as a service's would be. One herd was not enough: against express-queue (Node 20, 30
// herds in one process) the first ten ran 1.04–1.24 s, most near 1.2 s, and the rest
// 1.04–1.11 s, most near 1.06 s (V8 keeps optimising undici's code and kindly's for the first
// few thousand requests; see WARM_UP in bench/http.ts). Their times are printed, not counted.
const warmupTimes: number[] = [];
const warmupRequests: number[] = [];
for (let i = 0; i < warmupHerds; i++) {
  if (i > 0) await systemClock.sleep(300);
  await server.resetCounts();
  warmupTimes.push(await herd(server.url, options, i));
  warmupRequests.push((await server.requests()).total);
}
const requests: number[] = [];
const times: number[] = [];
const serviceTimes: number[] = [];
/** Per timed herd: over how many ms its first tries reached the limiter (`firstTriesSpanMs`). */
const spans: number[] = [];
for (let i = 0; i < herds; i++) {
  // Lets the limiter fill or reset completely before the next herd.
  await systemClock.sleep(300);
  await server.resetCounts();
  times.push(await herd(server.url, options, warmupHerds + i));
  requests.push((await server.requests()).total);
  serviceTimes.push(...((await server.serviceTimes?.()) ?? []));
  const herdArrivals = (await server.arrivals?.()) ?? [];
  if (herdArrivals.length > 0) spans.push(firstTriesSpanMs(herdArrivals, CALLERS));
  if (showRounds) printRounds(times.length, herdArrivals);
}
await server.close();
const limiterModel: Server = returnDelayMs > 0 ? { ...limiter.model, latencyMs: returnDelayMs } : limiter.model;
const model: Server =
  serviceTimes.length === 0
    ? limiterModel
    : { ...limiterModel, service: { ms: serviceTimes.reduce((a, b) => a + b, 0) / serviceTimes.length, samples: serviceTimes } };
const setup = { clients: CALLERS, capacity: 10, slotMs: 100, seed: 1, arrivalMs, server: model };
const strategyRow =
  strategy === 'fixed-rate' ? fixedRateStrategy(KNOWN_RATE) : HERD_STRATEGIES.find((st) => st.name === strategy)!;
const SEEDS = 200;
const simulated = Array.from({ length: strategyRow.random || model.service !== undefined || arrivalMs > 0 ? SEEDS : 1 }, (_, i) =>
  runHerd({ ...setup, seed: 1 + i }, strategyRow),
);
const row = {
  totalRequests: { median: median(simulated.map((m) => m.totalRequests)) },
  allSucceededMs: { median: median(simulated.map((m) => m.allSucceededMs)) },
};
const bound = herdLowerBound(setup);
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
/** Where `x` falls among the model's seeds: the fraction below it (ties count half). */
const rank = (xs: number[], x: number) => (xs.filter((v) => v < x).length + xs.filter((v) => v === x).length / 2) / xs.length;
const requestRanks = requests.map((r) =>
  rank(
    simulated.map((m) => m.totalRequests),
    r,
  ),
);
const timeRanks = times.map((t) =>
  rank(
    simulated.map((m) => m.allSucceededMs),
    t,
  ),
);
console.log(
  `${name} (${limiter.label}${processOptions !== undefined ? ', in its own process' : ''}${oneDownstream ? ', every herd through one downstream' : ''}${arrivalMs > 0 ? `, first tries over ${arrivalMs} ms` : ''}${returnDelayMs > 0 ? `, answers ${returnDelayMs} ms on the way back` : ''}${workMs > 0 && name === 'token-bucket' ? `, ${workMs} ms of work per request` : ''}), ${strategy} (lower bound ${bound.totalRequests} requests / ${s(bound.allSucceededMs)}):`,
);
console.log(
  `  (${warmupHerds} warm-up herds first, not counted: ${warmupTimes.map((t, i) => `${s(t)} (${warmupRequests[i]})`).join(', ')})`,
);
if (model.service !== undefined)
  console.log(`  (model fed ${serviceTimes.length} measured service times, mean ${model.service.ms.toFixed(1)} ms)`);
// A deterministic model (adaptive on a constant-latency model) runs one seed: no spread to rank in.
const ranked = simulated.length > 1;
for (let i = 0; i < herds; i++)
  console.log(
    `  ${requests[i]} requests / ${s(times[i]!)}` +
      (ranked ? `  (rank in the model: ${requestRanks[i]!.toFixed(2)} · ${timeRanks[i]!.toFixed(2)})` : ''),
  );
if (ranked)
  console.log(
    `  mean rank ${mean(requestRanks).toFixed(2)} requests · ${mean(timeRanks).toFixed(2)} time (0.5 if the model were exact)`,
  );
const realRequests = median(requests);
const realTime = median(times);
const pct = (real: number, model: number) => `${real >= model ? '+' : ''}${((real / model - 1) * 100).toFixed(1)} %`;
console.log(
  `  median ${realRequests} requests / ${s(realTime)}; model median ${row.totalRequests.median} / ${s(row.allSucceededMs.median)} (real ${pct(realRequests, row.totalRequests.median)} requests, ${pct(realTime, row.allSucceededMs.median)} time)`,
);
// The model decides a burst the instant it arrives; the real herd's first tries reach the
// limiter over tens of ms, and a herd in lockstep keeps that spread in every round after (its
// rejections come back as spread, so its retries do). So the model runs again with each herd's
// own measured spread as `arrivalMs` — an input measured at the limiter, like express-queue's
// service times, not fitted to the outcome — and each real herd is ranked among the runs of
// its own spread.
if (spans.length === herds) {
  const SEEDS_PER_HERD = 25;
  const fedRuns = spans.map((span, i) =>
    Array.from({ length: SEEDS_PER_HERD }, (_, k) =>
      runHerd({ ...setup, arrivalMs: span, seed: 1 + i * SEEDS_PER_HERD + k }, strategyRow),
    ),
  );
  const fed = fedRuns.flat();
  const fedRequests = median(fed.map((m) => m.totalRequests));
  const fedTime = median(fed.map((m) => m.allSucceededMs));
  /** The mean of each real herd's rank among the runs of its own span. */
  const meanRank = (reals: number[], figure: (run: HerdRun) => number) =>
    mean(reals.map((x, i) => rank(fedRuns[i]!.map(figure), x)));
  const fedRequestRank = meanRank(requests, (m) => m.totalRequests);
  const fedTimeRank = meanRank(times, (m) => m.allSucceededMs);
  const sorted = [...spans].sort((a, b) => a - b);
  console.log(
    `  first tries reached the limiter over ${sorted[0]!.toFixed(1)}–${sorted.at(-1)!.toFixed(1)} ms (median ${median(spans).toFixed(1)}); ` +
      `the model fed each herd's: median ${fedRequests} / ${s(fedTime)} (real ${pct(realRequests, fedRequests)} requests, ${pct(realTime, fedTime)} time), ` +
      `mean rank ${fedRequestRank.toFixed(2)} · ${fedTimeRank.toFixed(2)}`,
  );
}
