/**
 * HTTP overhead on loopback: the same GET (`200 ok`, body read to the end) sent by bare
 * `fetch`, by `fetch` with what kindly must add (an AbortSignal per attempt, and the headers
 * kindly sends in that group, checked on the wire), by `fetchThrough`, by the full pipeline
 * and by ky — sequentially and 32 at
 * a time, in interleaved rounds (see rounds.ts). The server runs in its own process.
 *
 * Two groups, each in a fresh process (`--group=`):
 * - `plain`: bare, floor, call (`.call()` around the floor's request), cockatiel (its retry and
 *   cooperative timeout around the same request), kindly (retry + attempt timeout + budget), ky.
 * - `deadline`: bare, floor, kindly full (retry, budget, breaker, bulkhead, pacing, total
 *   timeout). A call with a deadline enters an AsyncLocalStorage scope, which on Node 20
 *   switches on promise hooks for the whole process and slows every promise — bare `fetch`
 *   included — so this group gets a process of its own and its floor pays the same toll.
 *
 * - `rejected`: the same three answered `503 busy` (a short text body, no wait hint), and
 *   kindly with `retry: false`, so the call ends on it: what each rejected answer costs the
 *   caller — the status classified, the body looked at for a wait hint, the error that stands
 *   for it, the response handed back. No target: the figure a herd pays per rejection. Beside
 *   them, `kindly-retried×4` (four attempts, no backoff: three answers retried, the last
 *   handed back) against `floor×4`, four of the floor's requests in a row.
 *
 * Run through `bench/index.ts` (`npm run bench`), which prints the ratios.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { handleAll, retry, TimeoutStrategy, timeout, wrap } from 'cockatiel';
import ky from 'ky';
import { fetchThrough } from '../dist/http.js';
import { downstream } from '../dist/index.js';
import { FULL_HTTP_PIPELINE, PLAIN_PIPELINE } from './pipelines.js';
import { interleavedRounds, type TimedCase } from './rounds.js';
import { median, type Ratio, type Row, ratioOf, round } from './stats.js';

export type HttpGroup = 'plain' | 'deadline' | 'rejected';

/** The targets: kindly ≤ 3 % over the floor, the full pipeline ≤ 5 %. */
export const HTTP_TARGETS = { kindly: 1.03, full: 1.05 } as const;

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [new URL('./loopback-server.mjs', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [line] = (await once(lines, 'line')) as [string];
  lines.close();
  return { url: `http://127.0.0.1:${Number(line)}/item`, child };
}

async function readOk(response: Response): Promise<void> {
  const text = await response.text();
  if (response.status !== 200 || text !== 'ok') throw new Error(`unexpected answer ${response.status} ${text}`);
}

async function readBusy(response: Response): Promise<void> {
  const text = await response.text();
  if (response.status !== 503 || text !== 'busy\n') throw new Error(`unexpected answer ${response.status} ${text}`);
}

/** One case: `request` sends one request; the case reads its body. */
interface HttpCase {
  name: string;
  request: () => Promise<Response>;
  /**
   * Instead of reading the body after `request`: the whole request with its body read inside
   * (`read`), for a wrapper whose signal is aborted as soon as its operation returns.
   */
  readInside?: (read: (response: Response) => Promise<void>) => Promise<void>;
}

/**
 * The floor: what kindly must do per attempt — its own AbortController, and exactly the
 * headers kindly sends. By default kindly sends no internal header outside an inbound
 * request's deadline scope, even with a `totalTimeoutMs` (see `propagateHeaders` in
 * docs/http.md), so neither group's floor sends one. `checkSameHeaders` verifies it on the
 * wire before anything is measured.
 */
function floorCase(url: string, headers: Record<string, string>): HttpCase {
  return {
    name: 'floor',
    request: () => fetch(url, { signal: new AbortController().signal, headers }),
  };
}

function casesFor(group: HttpGroup, url: string): HttpCase[] {
  const bare: HttpCase = { name: 'bare', request: () => fetch(url) };
  if (group === 'plain') {
    const api = downstream('http-plain', PLAIN_PIPELINE);
    const client = ky.create({ retry: { limit: 2 }, timeout: 10_000 });
    const peer = wrap(retry(handleAll, { maxAttempts: 2 }), timeout(10_000, TimeoutStrategy.Cooperative));
    return [
      bare,
      floorCase(url, {}),
      // The core pipeline around the same request as the floor: splits kindly's cost between
      // `.call()` and the HTTP layer (`fetchThrough`).
      { name: 'call', request: () => api.call((context) => fetch(url, { signal: context.signal, headers: {} })) },
      // A peer doing `call`'s job: cockatiel's retry and cooperative timeout (its signal handed
      // to the same request). What any wrapper pays between two real requests, beside kindly.
      // cockatiel aborts its signal once the operation returns, which fails a body read after
      // it: its case reads the body inside (the same work, in another order). Its `request`
      // only serves the check of the headers sent (the floor's own).
      {
        name: 'cockatiel',
        request: () => fetch(url, { signal: new AbortController().signal, headers: {} }),
        readInside: (read) => peer.execute(async ({ signal }) => read(await fetch(url, { signal, headers: {} }))),
      },
      { name: 'kindly', request: () => fetchThrough(api, url) },
      { name: 'ky', request: () => client.get(url) },
    ];
  }
  if (group === 'rejected') {
    const api = downstream('http-rejected', { ...PLAIN_PIPELINE, retry: false });
    // Four attempts, no backoff, no budget (it would refuse retries once its reserve is spent):
    // every answer but the last is retried, as in a herd; against the floor's four requests.
    const retried = downstream('http-retried', {
      ...PLAIN_PIPELINE,
      budget: false,
      retry: { maxAttempts: 4, backoff: { shape: 'constant', baseMs: 0, jitter: 'none' } },
    });
    const floor = floorCase(url, {});
    const floorTimes4 = async (): Promise<Response> => {
      for (let i = 0; i < 3; i++) await readBusy(await floor.request());
      return floor.request();
    };
    return [
      bare,
      floor,
      { name: 'kindly', request: () => fetchThrough(api, url) },
      { name: 'floor×4', request: floorTimes4 },
      { name: 'kindly-retried×4', request: () => fetchThrough(retried, url) },
    ];
  }
  const full = downstream('http-full', FULL_HTTP_PIPELINE);
  return [bare, floorCase(url, {}), { name: 'kindly-full', request: () => fetchThrough(full, url) }];
}

/** The floor and kindly must send the same header names, or the comparison is not fair. */
async function checkSameHeaders(cases: HttpCase[], read: (response: Response) => Promise<void>): Promise<void> {
  const seen = new Map<string, string>();
  for (const c of cases) {
    const response = await c.request();
    seen.set(c.name, response.headers.get('x-seen-headers') ?? '');
    await read(response);
  }
  const floor = seen.get('floor');
  for (const name of ['kindly', 'kindly-full']) {
    const sent = seen.get(name);
    if (sent !== undefined && sent !== floor) {
      throw new Error(`unfair floor: kindly sent headers [${sent}], the floor [${floor}]`);
    }
  }
}

export interface HttpOptions {
  group: HttpGroup;
  blocks: number;
  concurrency: number;
  /** Requests per case sent before anything is timed (see `WARM_UP`). */
  warmup: number;
}

/**
 * Requests per case before the rounds. V8 keeps compiling undici's code and kindly's for the
 * first few thousand requests of a process (`node --trace-opt`, one case alone: ~50 functions
 * optimised per 500 requests up to 1,500, ~25 in the next 500, ~12 per 500 from 3,000, a few
 * after), and that work, on background threads, is counted in the process's CPU time and
 * competes for the cores. The rounds' own warm-up block (240 requests per case) ended inside
 * it. Measured
 * (`--group=plain --warmup=0|2000`, three runs each, alternating; Node 20, 2026-12-02), kindly
 * over the floor, sequential: CPU +9.2–13.0 % → +1.4–7.4 % (medians +10.1 → +6.1 %), wall
 * +5.3–9.6 % → +1.0–7.4 % (medians +6.4 → +5.4 %); at 32 concurrent the runs moved by more
 * than that either way. A service runs warm; so does this bench.
 */
export const WARM_UP = 2_000;

/** Sequential: batches of 4 requests (~1 ms); concurrent: batches of 2 × concurrency requests. */
const SEQUENTIAL = { batches: 60, ops: 4 } as const;
const CONCURRENT = { batches: 16 } as const;

export async function runHttp(options: HttpOptions): Promise<{ rows: Row[]; ratios: Ratio[] }> {
  const { url, child } = await startServer();
  try {
    const rejected = options.group === 'rejected';
    const httpCases = casesFor(options.group, rejected ? url.replace(/\/item$/, '/busy') : url);
    const read = rejected ? readBusy : readOk;
    await checkSameHeaders(httpCases, read);
    const cases: TimedCase[] = httpCases.map(({ name, request, readInside }) => ({
      name,
      once: readInside === undefined ? async () => read(await request()) : () => readInside(read),
    }));
    for (let i = 0; i < options.warmup; i++) for (const c of cases) await c.once();
    const rows: Row[] = [];
    const ratios: Ratio[] = [];
    for (const [mode, batches, ops, concurrency] of [
      ['sequential', SEQUENTIAL.batches, SEQUENTIAL.ops, 1],
      [`${options.concurrency}-concurrent`, CONCURRENT.batches, 2 * options.concurrency, options.concurrency],
    ] as const) {
      const measured = await interleavedRounds(cases, { blocks: options.blocks, batches, ops, concurrency });
      for (const kind of ['wall', 'cpu'] as const) {
        const suite = `http-${options.group}:${mode}:${kind}`;
        const runs = (name: string) => measured.get(name)?.[kind] ?? [];
        for (const c of cases) {
          const r = runs(c.name);
          rows.push({ suite, name: c.name, nsPerCall: round(median(r)), runs: r.map((x) => round(x)) });
        }
        // Targets are on wall time, as a user sees it; CPU time is printed beside it.
        const target = (t: number) => (kind === 'wall' ? t : undefined);
        if (options.group === 'plain') {
          ratios.push(ratioOf(suite, 'kindly / floor', runs('kindly'), runs('floor'), target(HTTP_TARGETS.kindly)));
          ratios.push(ratioOf(suite, 'call / floor', runs('call'), runs('floor')));
          ratios.push(ratioOf(suite, 'kindly / call', runs('kindly'), runs('call')));
          ratios.push(ratioOf(suite, 'cockatiel / floor', runs('cockatiel'), runs('floor')));
          ratios.push(ratioOf(suite, 'call / cockatiel', runs('call'), runs('cockatiel')));
          ratios.push(ratioOf(suite, 'kindly / bare', runs('kindly'), runs('bare')));
          ratios.push(ratioOf(suite, 'floor / bare', runs('floor'), runs('bare')));
          ratios.push(ratioOf(suite, 'ky / bare', runs('ky'), runs('bare')));
          ratios.push(ratioOf(suite, 'ky / kindly', runs('ky'), runs('kindly')));
        } else if (rejected) {
          ratios.push(ratioOf(suite, 'kindly / floor', runs('kindly'), runs('floor')));
          ratios.push(ratioOf(suite, 'kindly / bare', runs('kindly'), runs('bare')));
          ratios.push(ratioOf(suite, 'kindly-retried×4 / floor×4', runs('kindly-retried×4'), runs('floor×4')));
        } else {
          ratios.push(ratioOf(suite, 'kindly-full / floor', runs('kindly-full'), runs('floor'), target(HTTP_TARGETS.full)));
          ratios.push(ratioOf(suite, 'kindly-full / bare', runs('kindly-full'), runs('bare')));
        }
      }
    }
    return { rows, ratios };
  } finally {
    child.stdin?.end();
  }
}

// As a child of bench/index.ts: `node --import tsx bench/http.ts --group=plain` prints JSON.
if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\//, '/'))) {
  const arg = (name: string, fallback: number) => {
    const raw = process.argv.find((a) => a.startsWith(`--${name}=`));
    return raw === undefined ? fallback : Number(raw.slice(name.length + 3));
  };
  const group = (process.argv.find((a) => a.startsWith('--group='))?.slice(8) ?? 'plain') as HttpGroup;
  const result = await runHttp({
    group,
    blocks: arg('blocks', 5),
    concurrency: arg('concurrency', 32),
    warmup: arg('warmup', WARM_UP),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
