// One case of a built package in a plain loop, for a profiler or an A/B (no tsx, no other case
// in the process):
//
//   node --cpu-prof --cpu-prof-dir=.tmp/prof bench/call-loop.mjs dist full 4000000
//   node bench/call-loop.mjs DIR CASE --batches=500
//
// CASE:
// - core: `full` (budget + breaker + bulkhead, as `kindly:full`), `plain` (retry + timeout) or
//   `signal` (the operation reads `context.signal`); `floor-full` (the floor of any wrapper that
//   times its operation: own promise, a `then`, one clock read); `floor-signal` (the platform's AbortController
//   alone) and `own-signal` (`.call()` around an operation making its own AbortController);
// - HTTP layer without the network: `fetch` (`fetchThrough` with retry + attempt timeout) and
//   `fetch-full` (the HTTP bench's full pipeline: budget, breaker, bulkhead, pacing, total
//   timeout). The global `fetch` is replaced, before the package loads, by one that builds the
//   platform's `Request` from the URL and init (as the real fetch reads it) and answers at once;
//   `floor-fetch` calls it as the HTTP bench's floor does (its own AbortController);
// - on loopback (a keep-alive node:http server in a child process, body read to the end):
//   `http`, `http-full`, `http-floor`, `http-call` — the HTTP bench's `kindly`, `kindly-full`,
//   `floor` and `call` — and `http-call-bare`, `.call()` with no retry, attempt timeout or
//   budget around the floor's request; `http+total`, `http+breaker`, `http+bulkhead`,
//   `http+pacing`: `http` with one of the full pipeline's stages added (what each costs a
//   loopback request: `node bench/ab-process.mjs --cases=http-floor,http,http+total,…`).
// `--shape=bench` times each call as bench/core.ts does (inside an async function of its own).
// With `--batches=N` it warms up, then times N batches (2,000 calls; 200 for loopback) and
// prints the lower quartile of their CPU ns per call (the batches a burst of outside load hit
// are the slow ones).
import { spawn } from 'node:child_process';
import { once as onceEvent } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [dir = 'dist', which = 'full', countArg = '3000000'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const batchesArg = process.argv.find((a) => a.startsWith('--batches='));
const loopback = which.startsWith('http');
const instant = which.endsWith('fetch') || which === 'fetch-full';

let server;
let url = 'http://127.0.0.1:9/item';
if (loopback) {
  server = spawn(process.execPath, [new URL('./loopback-server.mjs', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: server.stdout });
  const [port] = await onceEvent(lines, 'line');
  lines.close();
  url = `http://127.0.0.1:${Number(port)}/item`;
} else if (instant) {
  globalThis.fetch = async (input, init) => {
    new Request(input, init);
    return new Response(null, { status: 200 });
  };
}

const { downstream } = await import(pathToFileURL(resolve(dir, 'index.js')).href);
const { fetchThrough } = await import(pathToFileURL(resolve(dir, 'http.js')).href);
const plainApi = () => downstream('loop', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 });
// The same pipeline as bench/pipelines.ts (plain Node cannot import that file).
const FULL_STAGES = { totalTimeoutMs: 30_000, budget: {}, breaker: {}, bulkhead: { maxConcurrent: 1_000 }, pacing: {} };
const fullHttpApi = () => downstream('loop-http-full', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000, ...FULL_STAGES });
/** `http+STAGE`: the plain pipeline and one stage of the full one (the budget is on in both). */
const STAGE_OPTIONS = {
  total: { totalTimeoutMs: FULL_STAGES.totalTimeoutMs },
  breaker: { breaker: FULL_STAGES.breaker },
  bulkhead: { bulkhead: FULL_STAGES.bulkhead },
  pacing: { pacing: FULL_STAGES.pacing },
};
const operation = async () => 42;
const answered = (response) => (response.status === 200 ? 42 : 0);
const readBody = async (response) => ((await response.text()) === 'ok' && response.status === 200 ? 42 : 0);
const answer = loopback ? readBody : answered;

let once;
if (which === 'full' || which === 'plain' || which === 'signal') {
  const api =
    which === 'full'
      ? downstream('loop-full', {
          retry: { maxAttempts: 3 },
          attemptTimeoutMs: 10_000,
          budget: {},
          breaker: {},
          bulkhead: { maxConcurrent: 1_000 },
        })
      : plainApi();
  once = which === 'signal' ? () => api.call((c) => (c.signal.aborted ? 0 : operation())) : () => api.call(operation);
} else if (which === 'floor-full') {
  // bench/cases.ts's `floor:full`: own promise, a `then` on the operation, one clock read.
  const perf = globalThis.performance;
  once = () => {
    const startedAt = perf.now();
    return new Promise((resolve, reject) => {
      operation().then(
        (value) => resolve(startedAt < 0 ? 0 : value),
        (error) => reject(error),
      );
    });
  };
} else if (which === 'floor-signal') {
  // The platform's price of one attempt signal, with no kindly around it (bench/cases.ts's
  // `floor:signal`).
  once = () => (new AbortController().signal.aborted ? 0 : operation());
} else if (which === 'own-signal') {
  // `.call()` whose operation makes its own AbortController: kindly's plain call plus the
  // platform's signal, without kindly's handling of the attempt's signal (`kindly:call+own-signal`).
  const api = plainApi();
  once = () => api.call(() => (new AbortController().signal.aborted ? 0 : operation()));
} else if (which === 'fetch' || which === 'http') {
  const api = plainApi();
  once = async () => answer(await fetchThrough(api, url));
} else if (which === 'http-call') {
  const api = plainApi();
  once = async () => answer(await api.call((c) => fetch(url, { signal: c.signal, headers: {} })));
} else if (which === 'http-call-bare') {
  // `.call()` with nothing of its own to do — no retry, no attempt timeout, no budget — around
  // the floor's request: the call's machinery alone, nothing that counts time (under valgrind
  // time runs ~100× slower, and what advances with it — the timer wheel's sweeps, the budget's
  // window — would be charged to the request).
  const api = downstream('loop-bare', { retry: false, attemptTimeoutMs: Number.POSITIVE_INFINITY, budget: false });
  once = async () => answer(await api.call((c) => fetch(url, { signal: c.signal, headers: {} })));
} else if (which.startsWith('http+')) {
  const stage = STAGE_OPTIONS[which.slice('http+'.length)];
  if (stage === undefined) throw new Error(`unknown stage in ${which}: one of ${Object.keys(STAGE_OPTIONS).join(', ')}`);
  const api = downstream(`loop-${which}`, { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000, ...stage });
  once = async () => answer(await fetchThrough(api, url));
} else if (which === 'fetch-full' || which === 'http-full') {
  const api = fullHttpApi();
  once = async () => answer(await fetchThrough(api, url));
} else if (which === 'floor-fetch' || which === 'http-floor') {
  once = async () => answer(await fetch(url, { signal: new AbortController().signal, headers: {} }));
} else {
  throw new Error(`unknown case ${which}`);
}
if ((await once()) !== 42) throw new Error(`case ${which} did not return the operation's value`);
// `--shape=bench`: each call inside an async function of its own, as bench/core.ts times it
// (`async () => void (await fn())`): one more promise hop per call, which changes what pays.
if (process.argv.includes('--shape=bench')) {
  const inner = once;
  once = async () => void (await inner());
}

const perBatch = loopback ? 200 : 2_000;
if (batchesArg === undefined) {
  for (let i = 0; i < Number(countArg); i++) await once();
} else {
  for (let i = 0; i < (loopback ? 2_000 : 100_000); i++) await once();
  const perCall = [];
  for (let b = 0; b < Number(batchesArg.slice('--batches='.length)); b++) {
    const start = process.cpuUsage();
    for (let i = 0; i < perBatch; i++) await once();
    const used = process.cpuUsage(start);
    perCall.push(((used.user + used.system) * 1_000) / perBatch);
  }
  perCall.sort((a, b) => a - b);
  console.log(perCall[perCall.length >> 2].toFixed(1));
}
server?.stdin.end();
