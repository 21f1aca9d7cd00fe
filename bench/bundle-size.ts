/**
 * What kindly weighs in a browser bundle, beside its peers: each case is the few lines a
 * front-end engineer writes (an entry file), bundled for the browser as an app's bundler would
 * (esbuild, ES module, minified, tree-shaken), then gzipped (level 9). kindly's cases import
 * the built package (`dist/`, run `npm run build` first); the peers import theirs from
 * node_modules. Libraries a case wraps (axios) stay outside the bundle: the app has them anyway.
 *
 * `npx tsx bench/bundle-size.ts [--json]`, or `npm run bench -- --only=bundle`.
 *
 * It also splits kindly's fetch bundle by source file (the same entry bundled from `src/`, whose
 * minified bytes esbuild attributes to each input), grouped by what the code is for.
 */
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { type Ratio, type Row, round } from './stats.js';

const REPO = new URL('..', import.meta.url).pathname;
const DIST = new URL('../dist/', import.meta.url).pathname;
const SRC = new URL('../src/', import.meta.url).pathname;

interface BundleCase {
  name: string;
  /** The entry's source; `@dist/` and `@src/` stand for the package's built and source folders. */
  entry: string;
  /** Packages the app brings anyway, left out of the bundle. */
  external?: string[];
}

const KINDLY_CASES: BundleCase[] = [
  {
    name: 'kindly: retry + timeout',
    entry: `import { downstream } from '@dist/index.js';
export const api = downstream('api', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 });`,
  },
  {
    name: 'kindly: fetch',
    entry: `import { downstream } from '@dist/index.js';
import { createFetch } from '@dist/http.js';
export const send = createFetch(downstream('api', { retry: { maxAttempts: 3 } }));`,
  },
  {
    name: 'kindly: axios adapter',
    entry: `import { downstream } from '@dist/index.js';
import { axiosInterceptors } from '@dist/adapters.js';
export const interceptors = axiosInterceptors(downstream('api', { retry: { maxAttempts: 3 } }));`,
    external: ['axios'],
  },
];

/**
 * The same apps with kindly-calls/lite's `downstream()`, which leaves adaptive pacing and the
 * latency policies out of the bundle.
 */
const LITE_CASES: BundleCase[] = KINDLY_CASES.map((c) => ({
  ...c,
  name: c.name.replace('kindly:', 'kindly/lite:'),
  entry: c.entry.replace("from '@dist/index.js'", "from '@dist/lite.js'"),
}));

const PEER_CASES: BundleCase[] = [
  {
    name: 'ky',
    entry: `import ky from 'ky';
export const client = ky.create({ retry: { limit: 2 }, timeout: 10_000 });`,
  },
  {
    name: 'cockatiel: retry + timeout + breaker',
    entry: `import { ConsecutiveBreaker, circuitBreaker, handleAll, retry, TimeoutStrategy, timeout, wrap } from 'cockatiel';
export const policy = wrap(
  retry(handleAll, { maxAttempts: 2 }),
  circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }),
  timeout(10_000, TimeoutStrategy.Cooperative),
);`,
  },
  {
    name: 'p-retry',
    entry: `import pRetry from 'p-retry';
export const call = (op) => pRetry(op, { retries: 2 });`,
  },
];

export const BUNDLE_CASES: BundleCase[] = [...KINDLY_CASES, ...LITE_CASES, ...PEER_CASES];

/** kindly case / peer case: how many times heavier kindly's bundle is (gzipped). */
export const BUNDLE_RATIOS: [string, string][] = [
  ['kindly: fetch', 'ky'],
  ['kindly: retry + timeout', 'cockatiel: retry + timeout + breaker'],
  ['kindly: retry + timeout', 'p-retry'],
  ['kindly/lite: fetch', 'ky'],
  ['kindly/lite: retry + timeout', 'cockatiel: retry + timeout + breaker'],
  ['kindly/lite: retry + timeout', 'kindly: retry + timeout'],
  ['kindly/lite: fetch', 'kindly: fetch'],
];

interface Bundled {
  bytes: number;
  gzipped: number;
  metafile: Metafile;
}

async function bundle(entry: string, external: string[] = []): Promise<Bundled> {
  const result = await build({
    stdin: {
      contents: entry.replaceAll('@dist/', DIST).replaceAll('@src/', SRC),
      resolveDir: REPO,
      sourcefile: 'app.js',
      loader: 'ts',
    },
    bundle: true,
    minify: true,
    format: 'esm',
    // A browser bundle: a Node built-in reached from the entry fails the build.
    platform: 'browser',
    target: 'es2022',
    external,
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0]?.contents ?? new Uint8Array();
  return { bytes: code.byteLength, gzipped: gzipSync(code, { level: 9 }).byteLength, metafile: result.metafile };
}

/** What a source file is for, by its path under `src/`; the first match wins. */
const AREAS: [string, RegExp][] = [
  [
    'adaptive pacing',
    /^policies\/(pacer|pacer-throttle-state|delivery-rate|probe-ramp|bucket-window|pool-window)\.ts$|stages\/pacing-stage\.ts$/,
  ],
  [
    'latency: adaptive concurrency, hedging, derived timeouts',
    /^policies\/(adaptive-concurrency|latency-policies|latency-quantiles|hedging|derived-timeout)\.ts$|hedge|latency/,
  ],
  ['circuit breaker', /breaker/],
  ['retry budget and retry decision', /^policies\/(retry-budget|retry-decision|fleet-budget)\.ts$|budget-stage/],
  ['wait hints (Retry-After, RateLimit fields, dates, bodies)', /^hints\//],
  ['HTTP layer', /^http\//],
  ['classification of errors and statuses', /^classify\//],
  ['call orchestration and downstream', /^(orchestration|runtime)\//],
  ['options and errors', /^(options|errors)\//],
  ['time, timers and randomness', /^(time|random|backoff)\//],
];

/** The minified bytes of a bundle built from `src/`, by area (approximate: before gzip). */
function byArea(metafile: Metafile): Map<string, number> {
  const out = new Map<string, number>();
  const output = Object.values(metafile.outputs)[0];
  for (const [path, input] of Object.entries(output?.inputs ?? {})) {
    const local = path.startsWith('src/') ? path.slice(4) : path;
    const area = path.startsWith('src/') ? (AREAS.find(([, re]) => re.test(local))?.[0] ?? 'other') : 'other';
    out.set(area, (out.get(area) ?? 0) + input.bytesInOutput);
  }
  return out;
}

export interface BundleSizeResult {
  rows: Row[];
  ratios: Ratio[];
  /** kindly's fetch bundle built from `src/`, minified bytes by area, largest first. */
  areas: [string, number][];
}

export async function runBundleSize(): Promise<BundleSizeResult> {
  const rows: Row[] = [];
  const sizes = new Map<string, Bundled>();
  for (const c of BUNDLE_CASES) {
    const b = await bundle(c.entry, c.external);
    sizes.set(c.name, b);
    rows.push({ suite: 'bundle:gzip', name: c.name, value: b.gzipped, unit: 'bytes', runs: [b.gzipped] });
    rows.push({ suite: 'bundle:min', name: c.name, value: b.bytes, unit: 'bytes', runs: [b.bytes] });
  }
  const ratios: Ratio[] = [];
  for (const [a, b] of BUNDLE_RATIOS) {
    const x = sizes.get(a)?.gzipped ?? Number.NaN;
    const y = sizes.get(b)?.gzipped ?? Number.NaN;
    ratios.push({ suite: 'bundle:gzip', name: `${a} / ${b}`, ratio: round(x / y, 2), runs: [round(x / y, 2)] });
  }
  const fromSource = await bundle(`import { downstream } from '@src/index.ts';
import { createFetch } from '@src/http/index.ts';
export const send = createFetch(downstream('api', { retry: { maxAttempts: 3 } }));`);
  const areas = [...byArea(fromSource.metafile)].sort((p, q) => q[1] - p[1]);
  return { rows, ratios, areas };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runBundleSize();
  if (process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(result)}\n`);
  else printBundleSize(result, console.log);
}

export function printBundleSize(result: BundleSizeResult, log: (line?: string) => void): void {
  log('\nbrowser bundle (esbuild, minified, tree-shaken; gzip -9): bytes');
  log(`  ${'case'.padEnd(38)} ${'gzipped'.padStart(8)} ${'minified'.padStart(9)}`);
  const minified = new Map(result.rows.filter((r) => r.suite === 'bundle:min').map((r) => [r.name, r.value]));
  for (const r of result.rows.filter((row) => row.suite === 'bundle:gzip'))
    log(`  ${r.name.padEnd(38)} ${String(r.value).padStart(8)} ${String(minified.get(r.name)).padStart(9)}`);
  for (const r of result.ratios) log(`  ${r.name.padEnd(60)} ${r.ratio.toFixed(2)}×`);
  const total = result.areas.reduce((s, [, n]) => s + n, 0);
  log(`kindly: fetch, built from src/: ${total} bytes minified, by what the code is for`);
  for (const [area, n] of result.areas)
    log(`  ${area.padEnd(58)} ${String(n).padStart(7)}  ${((100 * n) / total).toFixed(1).padStart(5)} %`);
}
