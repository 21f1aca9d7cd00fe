/**
 * Two builds of kindly on loopback, side by side in one process: the floor (`fetch` with its
 * own AbortController), `fetchThrough` of the `before` build and of the `after` build take
 * turns batch by batch (rounds.ts), sequentially or `--concurrency=N`; CPU and wall time per
 * request, and the per-block ratios. The second build loaded reads ~2 % cheaper against an
 * identical first one (A/A), so run both orders.
 *
 *   npx tsx bench/http-ab.ts --before=DIR --after=dist [--group=plain|full|rejected|throttled] [--concurrency=1] [--blocks=7] [--warmup=2000]
 *
 * `full` is the HTTP bench's full pipeline (total timeout included); `rejected`, the plain
 * pipeline without retries against `503 busy` (a short text body), handed back; `throttled`,
 * the same against a 429 with `Retry-After` (no body hint looked for: the body stays unread).
 * On Node 20 a build that enters a deadline scope per attempt switches promise hooks on for
 * the whole process, the other build and the floor included: compare such builds in fresh
 * processes instead (`bench/ab-process.mjs --case=http-full`).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { WARM_UP } from './http.js';
import { FULL_HTTP_PIPELINE, PLAIN_PIPELINE } from './pipelines.js';
import { interleavedRounds } from './rounds.js';
import { median } from './stats.js';

const arg = (name: string, fallback?: string) =>
  process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const beforeDir = arg('before');
if (beforeDir === undefined)
  throw new Error('usage: bench/http-ab.ts --before=DIR [--after=DIR] [--group=plain|full|rejected|throttled]');
const afterDir = arg('after', 'dist') as string;
const group = arg('group', 'plain') as string;
const concurrency = Number(arg('concurrency', '1'));
const blocks = Number(arg('blocks', '7'));

const server = spawn(process.execPath, [new URL('./loopback-server.mjs', import.meta.url).pathname], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const lines = createInterface({ input: server.stdout as NodeJS.ReadableStream });
const [port] = (await once(lines, 'line')) as [string];
lines.close();
const answers: Record<string, [path: string, body: string]> = {
  rejected: ['/busy', 'busy\n'],
  throttled: ['/throttled', 'slow down\n'],
};
const [path, expected] = answers[group] ?? ['/item', 'ok'];
const url = `http://127.0.0.1:${Number(port)}${path}`;
const options = group === 'plain' ? PLAIN_PIPELINE : group in answers ? { ...PLAIN_PIPELINE, retry: false } : FULL_HTTP_PIPELINE;

async function build(dir: string, name: string): Promise<() => Promise<Response>> {
  const { downstream } = await import(pathToFileURL(resolve(dir, 'index.js')).href);
  const { fetchThrough } = await import(pathToFileURL(resolve(dir, 'http.js')).href);
  const api = downstream(name, options);
  return () => fetchThrough(api, url) as Promise<Response>;
}
const sends: Record<string, () => Promise<Response>> = {
  floor: () => fetch(url, { signal: new AbortController().signal, headers: {} }),
  before: await build(beforeDir, 'ab-before'),
  after: await build(afterDir, 'ab-after'),
};
const cases = Object.entries(sends).map(([name, send]) => ({
  name,
  once: async () => {
    const response = await send();
    if ((await response.text()) !== expected) throw new Error(`${name}: unexpected answer ${response.status}`);
  },
}));
// Warm, as the HTTP bench is (`WARM_UP` says why): without it the first blocks ran while V8
// was still compiling, and an A/A (one build against a copy of itself) read before/floor ~8
// points higher and after/before 2–4 % off 1.
const warmup = Number(arg('warmup', String(WARM_UP)));
for (let i = 0; i < warmup; i++) for (const c of cases) await c.once();
const measured = await interleavedRounds(cases, {
  blocks,
  batches: concurrency === 1 ? 60 : 16,
  ops: concurrency === 1 ? 4 : 2 * concurrency,
  concurrency,
});
const figures = (name: string, kind: 'cpu' | 'wall') => measured.get(name)?.[kind] ?? [];
const ratio = (a: string, b: string, kind: 'cpu' | 'wall') => {
  const r = figures(a, kind).map((x, i) => x / (figures(b, kind)[i] as number));
  return `${median(r).toFixed(3)} [${r.map((v) => v.toFixed(2)).join(' ')}]`;
};
const us = (name: string, kind: 'cpu' | 'wall') => (median(figures(name, kind)) / 1000).toFixed(1);
for (const kind of ['cpu', 'wall'] as const) {
  console.log(
    `node ${process.version} ${group}, concurrency ${concurrency}, ${kind} µs per request: floor ${us('floor', kind)}, before ${us('before', kind)}, after ${us('after', kind)}; ` +
      `after/before ${ratio('after', 'before', kind)}; before/floor ${ratio('before', 'floor', kind)}; after/floor ${ratio('after', 'floor', kind)}`,
  );
}
server.stdin?.end();
