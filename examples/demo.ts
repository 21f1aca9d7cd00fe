/**
 * `npm run demo`: the thundering-herd experiment measured for real.
 *
 * A real HTTP server on loopback serves at most 10 requests per 100 ms slot and answers 429
 * to the rest. 100 callers in this process each make one request at the same moment through
 * one kindly downstream per strategy, and retry until they succeed. We count what the server
 * saw: total requests, the most retries that arrived in one slot, and when the last caller
 * succeeded — beside the physical lower bound (190 requests, 1.0 s).
 */
// The demo runs from source (no build step before `npm run demo`); examples elsewhere import
// the built package as users do.
import { fetchThrough } from '../src/http/index.js';
import { type DownstreamOptions, downstream } from '../src/index.js';
import { startSlotLimitedServer } from './support/slot-limited-server.js';

const CLIENTS = 100;
const CAPACITY = 10;
const SLOT_MS = 100;
const LOWER_BOUND = { requests: CLIENTS + (CLIENTS - CAPACITY), ms: (CLIENTS / CAPACITY) * SLOT_MS };

/**
 * Retry until success, bounded in time (unbounded attempts must be bounded explicitly). The
 * schedule rows turn the retry budget off: with it, kindly would refuse most of the 450
 * retries that fixed and exponential schedules need (ratio 0.2 + a reserve of 10/s allow
 * about 120 here), which is the budget's job but would hide what the schedules do. The
 * adaptive row keeps every default, budget included: pacing needs few enough retries.
 */
const untilSuccess = { maxAttempts: Number.POSITIVE_INFINITY, maxElapsedMs: 60_000 };

const strategies: Array<{ name: string; options: DownstreamOptions }> = [
  {
    name: 'fixed 1 s',
    options: { budget: false, retry: { ...untilSuccess, backoff: { shape: 'constant', baseMs: 1_000, jitter: 'none' } } },
  },
  {
    name: 'exponential, no jitter',
    options: { budget: false, retry: { ...untilSuccess, backoff: { baseMs: 200, factor: 2, capMs: 5_000, jitter: 'none' } } },
  },
  {
    name: 'exponential + full jitter',
    options: { budget: false, retry: { ...untilSuccess, backoff: { baseMs: 200, factor: 2, capMs: 5_000, jitter: 'full' } } },
  },
  {
    // The pacer learns the server's capacity from what it serves and releases retries at
    // that rate; no rate is configured anywhere.
    name: 'kindly adaptive pacing',
    options: {
      retry: { ...untilSuccess, backoff: { baseMs: 200, factor: 2, capMs: 5_000, jitter: 'full' } },
      pacing: {},
    },
  },
  {
    // Every downstream() default (retry budget on, no pacing), as a user would start, with
    // enough attempts to get through: the budget refuses most of the retries.
    name: 'defaults (maxAttempts 50)',
    options: { retry: { maxAttempts: 50 } },
  },
  {
    // The same defaults plus pacing: paced retries are few enough for the budget's
    // allowance, so every caller is served within about the capacity's time.
    name: 'defaults + pacing (maxAttempts 50)',
    options: { retry: { maxAttempts: 50 }, pacing: {} },
  },
];

interface Row {
  strategy: string;
  totalRequests: number;
  peakRetriesPerSlot: number;
  allSucceededMs: number;
  /** Callers that gave up, by reason (a budget refusing retries is the budget doing its job). */
  gaveUp: Record<string, number>;
}

const server = await startSlotLimitedServer({ capacity: CAPACITY, slotMs: SLOT_MS });

async function measure(name: string, options: DownstreamOptions, retryAfterSeconds?: number): Promise<Row> {
  const api = downstream(`herd ${name}`, options);
  const gaveUp: Record<string, number> = {};
  api.on('give-up', (e) => {
    gaveUp[e.reason] = (gaveUp[e.reason] ?? 0) + 1;
  });
  // kindly's fetch numbers each attempt (`x-retry-attempt`, sent because the server is named
  // as taking part), which is how the server tells retries from first tries, and reads
  // Retry-After when the server sends it. A caller that gives up gets the last 429 back, as
  // fetch would; the table counts them.
  const callOnce = async () => {
    const response = await fetchThrough(api, server.url, { propagateHeaders: { hosts: ['127.0.0.1'] } });
    await response.arrayBuffer();
  };
  // Open the connections and warm the code path first (through a throwaway downstream, so
  // that no policy state carries over), so that the herd's first requests leave together.
  const warmUp = downstream('warm-up', { retry: false, budget: false });
  for (let round = 0; round < 2; round++) {
    await Promise.all(Array.from({ length: CLIENTS }, () => fetchThrough(warmUp, server.url).then((r) => r.arrayBuffer())));
  }
  await server.reset({ retryAfterSeconds });
  await Promise.all(Array.from({ length: CLIENTS }, callOnce));
  const stats = await server.stats();
  const row = {
    strategy: name,
    totalRequests: stats.totalRequests,
    peakRetriesPerSlot: Math.max(0, ...stats.retriesPerSlot),
    allSucceededMs: Math.round(stats.lastSuccessMs),
    gaveUp,
  };
  return row;
}

const rows: Row[] = [];
for (const s of strategies) {
  process.stderr.write(`running ${s.name}…\n`);
  rows.push(await measure(s.name, s.options));
}
// The same herd when the server says when to come back (Retry-After: 1 on every 429).
for (const s of strategies.slice(2, 4)) {
  const name = `${s.name} + Retry-After`;
  process.stderr.write(`running ${name}…\n`);
  rows.push(await measure(name, s.options, 1));
}

await server.close();

const pad = (s: string | number, n: number) => String(s).padStart(n);
console.log(
  `\nHerd: ${CLIENTS} clients at t=0, server serves ${CAPACITY} per ${SLOT_MS} ms slot, 429 to the rest (real HTTP on loopback)\n`,
);
console.log(`${'strategy'.padEnd(42)}${pad('requests', 10)}${pad('peak retries/slot', 19)}${pad('last success', 14)}  gave up`);
for (const r of rows) {
  console.log(
    `${r.strategy.padEnd(42)}${pad(r.totalRequests, 10)}${pad(r.peakRetriesPerSlot, 19)}${pad(`${(r.allSucceededMs / 1000).toFixed(2)} s`, 14)}  ${describeGaveUp(r.gaveUp)}`,
  );
}
console.log(
  `${'lower bound'.padEnd(42)}${pad(LOWER_BOUND.requests, 10)}${pad('—', 19)}${pad(`${(LOWER_BOUND.ms / 1000).toFixed(2)} s`, 14)}`,
);

function describeGaveUp(gaveUp: Record<string, number>): string {
  const parts = Object.entries(gaveUp).map(([reason, n]) => `${n} (${reason})`);
  return parts.length === 0 ? '0' : parts.join(', ');
}
