/**
 * Cold import of two or more builds' root entries, side by side:
 * `npx tsx bench/import-ab.ts --before=DIR --after=DIR [--samples=21]`, or
 * `--builds=DIR,DIR,DIR...` (DIR: a `dist/`). Each sample is a fresh Node process timing
 * `await import()` as `import-cost.ts` does; every round runs each build once, in an order
 * rotated from round to round, so that outside load lands on all of them. Printed per build:
 * the median wall time and CPU time (user + system, the process's own, compiler threads
 * included), and the median of the per-round differences from the first build.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './stats.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const builds = arg('builds')?.split(',') ?? [arg('before'), arg('after')];
if (builds.length < 2 || builds.some((b) => b === undefined || b === ''))
  throw new Error('usage: import-ab.ts --before=DIR --after=DIR | --builds=DIR,DIR[,DIR...] [--samples=N]');
const dirs = builds as string[];
const samples = Number(arg('samples') ?? 21);

/**
 * A build outside a `"type": "module"` package is read twice by Node 20.19 and later (once as
 * CommonJS, which fails, then as an ES module: `--experimental-detect-module`), ~4 ms more
 * here; such a comparison would time the detection, not the builds.
 */
function moduleScopeOf(dir: string): string {
  for (let at = resolve(dir); ; at = dirname(at)) {
    const file = join(at, 'package.json');
    if (existsSync(file)) {
      if ((JSON.parse(readFileSync(file, 'utf8')) as { type?: string }).type === 'module') return file;
      break;
    }
    if (dirname(at) === at) break;
  }
  throw new Error(
    `${dir} is not inside a package with "type": "module"; add one (echo '{"type":"module"}' > ${dir}/package.json)`,
  );
}
for (const dir of dirs) moduleScopeOf(dir);

const entry = (dir: string) => pathToFileURL(resolve(dir, 'index.js')).href;
// The time is taken before `process.stdout` is read: its first read makes the stream (2–4 ms),
// and a member expression is evaluated before the call's arguments.
const child = (target: string) =>
  `const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint(); await import(${JSON.stringify(target)}); ` +
  'const ms = Number(process.hrtime.bigint() - t0) / 1e6; const c = process.cpuUsage(c0); ' +
  'process.stdout.write(JSON.stringify({ ms, cpu: (c.user + c.system) / 1e3 }));';
const time = (target: string) =>
  JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', child(target)], { encoding: 'utf8' })) as {
    ms: number;
    cpu: number;
  };

const wall: number[][] = dirs.map(() => []);
const cpu: number[][] = dirs.map(() => []);
for (let round = 0; round < samples; round++) {
  for (let k = 0; k < dirs.length; k++) {
    const i = (k + round) % dirs.length;
    const s = time(entry(dirs[i] as string));
    wall[i]?.push(s.ms);
    cpu[i]?.push(s.cpu);
  }
}
const load = loadavg()
  .map((x) => x.toFixed(1))
  .join(' ');
const pairedFromFirst = (runs: number[][], i: number) =>
  median((runs[i] as number[]).map((x, round) => x - ((runs[0] as number[])[round] as number)));
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(2)}`;
console.log(`node ${process.version}, ${samples} rounds, load ${load} (cold import of the root entry, ms, medians)`);
dirs.forEach((dir, i) => {
  const diffs = i === 0 ? '' : `   vs first: wall ${signed(pairedFromFirst(wall, i))}, cpu ${signed(pairedFromFirst(cpu, i))}`;
  console.log(`  ${dir}: wall ${median(wall[i] as number[]).toFixed(2)}, cpu ${median(cpu[i] as number[]).toFixed(2)}${diffs}`);
});
