/**
 * Runs one benchmark case in a loop so that a profiler can see where its time goes:
 *
 *   node --cpu-prof --cpu-prof-dir=.tmp/prof --import tsx bench/profile.ts kindly:signal 200000
 *   node --import tsx bench/profile-summary.ts .tmp/prof/<file>.cpuprofile
 *
 * Core cases by name (see cases.ts), or `http:<case>` (bare, floor, call, kindly, kindly-full, ky)
 * against the loopback server; `http:rejected-floor` and `http:rejected-kindly` are its `503 busy`
 * answer, kindly with `retry: false` (bench/http.ts's rejected group).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import ky from 'ky';
import { fetchThrough } from '../dist/http.js';
import { downstream } from '../dist/index.js';
import { cases } from './cases.js';
import { FULL_HTTP_PIPELINE, PLAIN_PIPELINE } from './pipelines.js';

const [name = 'kindly:signal', countArg = '200000'] = process.argv.slice(2);
const count = Number(countArg);

if (name.startsWith('http:')) {
  const child = spawn(process.execPath, [new URL('./loopback-server.mjs', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const [port] = (await once(lines, 'line')) as [string];
  const url = `http://127.0.0.1:${Number(port)}/item`;
  // The pipelines bench/http.ts measures, so a profile explains its figures.
  const api = downstream('profile', PLAIN_PIPELINE);
  const full = downstream('profile-full', FULL_HTTP_PIPELINE);
  const client = ky.create({ retry: { limit: 2 }, timeout: 10_000 });
  const busy = url.replace(/\/item$/, '/busy');
  const rejecting = downstream('profile-rejected', { ...PLAIN_PIPELINE, retry: false });
  const one: Record<string, () => Promise<Response>> = {
    'http:bare': () => fetch(url),
    // kindly sends no internal header by default (no deadline scope): the floor sends none either.
    'http:floor': () => fetch(url, { signal: new AbortController().signal, headers: {} }),
    // `.call()` around the floor's own request: what the call machinery adds in situ.
    'http:call': () => api.call((context) => fetch(url, { signal: context.signal, headers: {} })),
    'http:kindly': () => fetchThrough(api, url),
    'http:kindly-full': () => fetchThrough(full, url),
    'http:ky': () => client.get(url),
    'http:rejected-floor': () => fetch(busy, { signal: new AbortController().signal, headers: {} }),
    'http:rejected-kindly': () => fetchThrough(rejecting, busy),
  };
  const send = one[name];
  if (send === undefined) throw new Error(`unknown case ${name}`);
  const concurrency = Number(process.argv[4] ?? 1);
  let started = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started++ < count) await (await send()).text();
    }),
  );
  child.stdin?.end();
} else {
  const c = cases.find((x) => x.name === name);
  if (c === undefined) throw new Error(`unknown case ${name}`);
  const fn = await c.setup();
  for (let i = 0; i < count; i++) await fn();
}
