/**
 * Self time by function (and by file) from a `.cpuprofile` written by `node --cpu-prof`:
 * `node --import tsx bench/profile-summary.ts FILE [top]`. Also prints time by the nearest
 * kindly frame (`dist/`): everything a kindly function spent, itself or in what it called
 * (the platform's `fetch` excepted: it is kindly's `platformFetch` frame), which is what
 * kindly adds over the platform.
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
const [file, topArg = '40'] = process.argv.slice(2);
process.stdout.on('error', () => process.exit(0)); // piped into head
if (file === undefined) throw new Error('usage: profile-summary FILE [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: ProfileNode[]; samples: number[] };
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const total = profile.samples.length;
const self = new Map<string, number>();
const byFile = new Map<string, number>();
for (const id of profile.samples) {
  const node = byId.get(id);
  if (node === undefined) continue;
  const f = node.callFrame;
  const where = f.url.replace(/^.*\/(node_modules|dist|src|bench)\//, '$1/').replace(/^node:/, 'node:');
  const key = `${f.functionName || '(anonymous)'}  ${where}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + 1);
  const fileKey = where === '' ? f.functionName : where;
  byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + 1);
}
const limit = Number(topArg);
const pct = (n: number) => `${((100 * n) / total).toFixed(1).padStart(5)} %`;
console.log(`${total} samples`);
console.log('\nself time by function');
for (const [k, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, limit)) console.log(`${pct(n)}  ${k}`);
console.log('\nself time by file');
for (const [k, n] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${pct(n)}  ${k}`);

// Attribution to the nearest frame of the package itself (dist/), for the kindly share.
const ownDist = new URL('../dist/', import.meta.url).href;
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const nearest = new Map<string, number>();
let inKindly = 0;
for (const id of profile.samples) {
  let cursor: number | undefined = id;
  while (cursor !== undefined) {
    const node = byId.get(cursor);
    if (node === undefined) break;
    if (node.callFrame.url.startsWith(ownDist)) {
      const f = node.callFrame;
      const key = `${f.functionName || '(anonymous)'}  ${f.url.replace(/^.*\/dist\//, 'dist/')}:${f.lineNumber + 1}`;
      nearest.set(key, (nearest.get(key) ?? 0) + 1);
      inKindly++;
      break;
    }
    cursor = parent.get(cursor);
  }
}
console.log(`\nunder kindly frames (self + callees, by nearest dist/ frame): ${pct(inKindly)} of samples`);
for (const [k, n] of [...nearest].sort((a, b) => b[1] - a[1]).slice(0, limit)) console.log(`${pct(n)}  ${k}`);

// `--per=N` (N operations profiled, warm-up included): the same attribution in µs per operation
// of busy (non-idle) time, without the platform's `fetch` (`platformFetch`) and the attempt's
// AbortController (`get signal`), which the HTTP floor pays too — what kindly's own code costs
// per request (docs/benchmarks.md, "HTTP … Checked again").
const perArg = process.argv.find((a) => a.startsWith('--per='));
if (perArg !== undefined) {
  const per = Number(perArg.slice('--per='.length));
  const deltas = (profile as { timeDeltas?: number[] }).timeDeltas ?? [];
  let busy = 0;
  let own = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const dt = deltas[i + 1] ?? 0;
    let cursor: number | undefined = profile.samples[i];
    if (byId.get(cursor as number)?.callFrame.functionName === '(idle)') continue;
    busy += dt;
    while (cursor !== undefined) {
      const node = byId.get(cursor);
      if (node === undefined) break;
      if (node.callFrame.url.startsWith(ownDist)) {
        const name = node.callFrame.functionName;
        if (name !== 'platformFetch' && name !== 'get signal') own += dt;
        break;
      }
      cursor = parent.get(cursor);
    }
  }
  console.log(
    `\nper operation: busy ${(busy / per).toFixed(1)} µs; kindly's own frames (not fetch, not the attempt's AbortController) ${(own / per).toFixed(2)} µs (${((100 * own) / busy).toFixed(2)} % of busy)`,
  );
}
