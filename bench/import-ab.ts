/**
 * Cold import of two builds' root entries, side by side:
 * `npx tsx bench/import-ab.ts --before=DIR --after=DIR [--samples=21]` (DIR: a `dist/`).
 * Each sample is a fresh Node process timing `await import()` as `import-cost.ts` does; the
 * two builds alternate (and swap order every sample) so that outside load lands on both.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './stats.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const before = arg('before');
const after = arg('after');
if (before === undefined || after === undefined) throw new Error('usage: import-ab.ts --before=DIR --after=DIR [--samples=N]');
const samples = Number(arg('samples') ?? 21);

const entry = (dir: string) => pathToFileURL(resolve(dir, 'index.js')).href;
const child = (target: string) =>
  `const t0 = process.hrtime.bigint(); await import(${JSON.stringify(target)}); process.stdout.write(String(Number(process.hrtime.bigint() - t0) / 1e6));`;
const time = (target: string) =>
  Number(execFileSync(process.execPath, ['--input-type=module', '-e', child(target)], { encoding: 'utf8' }));

const a: number[] = [];
const b: number[] = [];
for (let i = 0; i < samples; i++) {
  if (i % 2 === 0) {
    a.push(time(entry(before)));
    b.push(time(entry(after)));
  } else {
    b.push(time(entry(after)));
    a.push(time(entry(before)));
  }
}
const load = loadavg()
  .map((x) => x.toFixed(1))
  .join(' ');
console.log(
  `node ${process.version}, ${samples} samples each, load ${load}: before ${median(a).toFixed(2)} ms, after ${median(b).toFixed(2)} ms (cold import of the root entry, median)`,
);
