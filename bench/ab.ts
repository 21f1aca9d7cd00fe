/**
 * Before/after, side by side in one process: the core kindly cases, and `fetch` (kindly's HTTP
 * layer with a fetch that answers at once, as `kindly:fetch`), run against two builds
 * (`--before=DIR` and `--after=DIR`, each a tsup `dist/`), in finely interleaved batches,
 * `--runs=N` blocks; prints after/before per case (median of the per-block ratios).
 *
 *   git worktree add /tmp/kindly-before <commit> && ln -s $PWD/node_modules /tmp/kindly-before/
 *   (cd /tmp/kindly-before && npx tsup --silent)
 *   npx tsx --expose-gc bench/ab.ts --before=/tmp/kindly-before/dist --after=dist
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { interleavedRounds, type Measured, type TimedCase } from './rounds.js';
import { median, ratioOf, round } from './stats.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const before = arg('before');
const after = arg('after') ?? 'dist';
if (before === undefined) throw new Error('usage: bench/ab.ts --before=DIR [--after=DIR] [--runs=N]');
const runs = Number(arg('runs') ?? 5);

type Api = { call: (op: (c: { signal: AbortSignal }) => Promise<number>) => Promise<number> };
type Make = (name: string, options?: object) => Api;
type CreateFetch = (api: Api, options: { fetch: typeof instantFetch }) => (url: string) => Promise<Response>;
const load = async (dir: string) => ({
  ...((await import(pathToFileURL(resolve(dir, 'index.js')).href)) as { downstream: Make }),
  ...((await import(pathToFileURL(resolve(dir, 'http.js')).href)) as { createFetch: CreateFetch }),
});

/** kindly's HTTP layer without the network (as `kindly:fetch` in cases.ts): the platform's Request built, answered at once. */
const instantFetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
  new Request(input, init);
  return new Response(null, { status: 200 });
};

const operation = async () => 42;
const FULL = { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000, budget: {}, breaker: {}, bulkhead: { maxConcurrent: 1_000 } };
/** A build from before durations were named `…Ms` knows `attemptTimeout` instead. */
const withOldNames = ({ attemptTimeoutMs, ...rest }: { attemptTimeoutMs: number }) => ({
  ...rest,
  attemptTimeout: attemptTimeoutMs,
});
const build = (make: Make, name: string, options: { attemptTimeoutMs: number }) => {
  try {
    return make(name, options);
  } catch {
    return make(name, withOldNames(options));
  }
};
const cases = ({ downstream: make, createFetch }: Awaited<ReturnType<typeof load>>) => {
  const plain = build(make, 'ab', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 } as { attemptTimeoutMs: number });
  const full = build(make, 'ab-full', FULL);
  const send = createFetch(
    build(make, 'ab-fetch', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 } as { attemptTimeoutMs: number }),
    {
      fetch: instantFetch,
    },
  );
  return {
    'retry+timeout': () => plain.call(operation),
    signal: () => plain.call((c) => (c.signal.aborted ? Promise.resolve(0) : operation())),
    full: () => full.call(operation),
    fetch: async () => ((await send('http://127.0.0.1:9/item')).status === 200 ? 42 : 0),
  };
};
const sides = { before: cases(await load(before)), after: cases(await load(after)) };
const names = Object.keys(sides.before) as Array<keyof typeof sides.before>;
// Finely interleaved: batches of `ops` calls alternate between the builds (a few ms each),
// so load from elsewhere on the machine lands on both alike; medians drop the batches it hit.
const timed: TimedCase[] = [];
for (const name of names)
  for (const side of ['before', 'after'] as const) {
    const fn = sides[side][name];
    timed.push({ name: `${side}:${name}`, once: async () => void (await fn()) });
  }
const measured = new Map<string, Measured>();
for (const name of names) {
  const pair = timed.filter((t) => t.name.endsWith(`:${name}`));
  for (const [k, v] of await interleavedRounds(pair, { blocks: runs, batches: 40, ops: 2_000, concurrency: 1 }))
    measured.set(k, v);
}
console.log(`node ${process.version}; ${runs} blocks of 40 interleaved batches of 2,000 calls; ns per call, median of blocks`);
for (const kind of ['cpu', 'wall'] as const) {
  for (const name of names) {
    const b = measured.get(`before:${name}`)?.[kind] ?? [];
    const a = measured.get(`after:${name}`)?.[kind] ?? [];
    const ratio = ratioOf('ab', name, a, b);
    console.log(
      `${kind.padEnd(4)} ${name.padEnd(14)} before ${round(median(b)).toString().padStart(8)}  after ${round(median(a)).toString().padStart(8)}  after/before ${ratio.ratio.toFixed(3)}  (${ratio.runs.map((x) => x.toFixed(3)).join(' ')})`,
    );
  }
}

// Bytes allocated per call: deterministic where timings are not (needs --expose-gc). Heap
// growth over a loop short enough that no scavenge runs during it; median of 9 loops.
const gc = (globalThis as { gc?: () => void }).gc;
if (gc !== undefined) {
  // A fetch allocates ~11 KB: 100 of them stay under the young generation's first size.
  const bytesPerCall = async (fn: () => Promise<number>, calls: number) => {
    const samples: number[] = [];
    for (let s = 0; s < 9; s++) {
      gc();
      const h0 = process.memoryUsage().heapUsed;
      for (let i = 0; i < calls; i++) await fn();
      samples.push((process.memoryUsage().heapUsed - h0) / calls);
    }
    return median(samples);
  };
  console.log('bytes allocated per call (median of 9 loops of 1,000 calls, 100 for fetch)');
  for (const name of names) {
    const calls = name === 'fetch' ? 100 : 1_000;
    const b = await bytesPerCall(sides.before[name], calls);
    const a = await bytesPerCall(sides.after[name], calls);
    console.log(
      `${name.padEnd(14)} before ${Math.round(b).toString().padStart(6)}  after ${Math.round(a).toString().padStart(6)}`,
    );
  }
} else console.log('(run with --expose-gc for bytes allocated per call)');
