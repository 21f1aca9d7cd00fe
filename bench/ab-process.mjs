// Before/after of one core case in alternating fresh processes (no JIT state shared between the
// two builds, unlike bench/ab.ts): each pair runs `bench/call-loop.mjs` on the before build, then
// on the after build; prints both medians and the median of the per-pair ratios.
//
//   node bench/ab-process.mjs --before=.tmp/base/dist --after=dist --case=full --pairs=12
//   node bench/ab-process.mjs --before=.tmp/base/dist --case=fetch-full --batches=60 --pairs=8
//
// Any case of bench/call-loop.mjs: core (`full`, `plain`, `signal`), the HTTP layer with an
// instant fetch (`fetch`, `fetch-full`) or on loopback (`http`, `http-full`).
//
// On this shared machine the same build against itself moves ±3 %: read smaller ratios as noise.
//
// `--cases=A,B,C` instead compares cases of one build (`--dir=`, default dist): each round runs
// every case once, in that order, each in a fresh process; prints each case's median and the
// median of its per-round ratio to the first case. What each stage of the full pipeline costs a
// loopback request:
//
//   node bench/ab-process.mjs --cases=http-floor,http,http+total,http+breaker,http+bulkhead,http+pacing,http-full --batches=30 --pairs=8
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';

const arg = (name, fallback) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3) ?? fallback;
const pairs = Number(arg('pairs', '12'));
// Batches per run: 2,000 calls each (200 on loopback); fewer for the HTTP cases, which cost µs.
const batches = arg('batches', '500');
const loop = new URL('./call-loop.mjs', import.meta.url).pathname;
// `--shape=bench`: each call timed inside an async function of its own, as bench/core.ts does.
const shape = process.argv.filter((a) => a === '--shape=bench');
const runCase = (dir, which) =>
  Number(execFileSync(process.execPath, [loop, dir, which, `--batches=${batches}`, ...shape], { encoding: 'utf8' }).trim());
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

const cases = arg('cases');
if (cases !== undefined) {
  const names = cases.split(',');
  if (names.length < 2) throw new Error('--cases needs at least two cases, the first being the reference');
  const dir = arg('dir', 'dist');
  const perCase = names.map(() => []);
  for (let round = 0; round < pairs; round++) {
    for (const [i, name] of names.entries()) perCase[i].push(runCase(dir, name));
  }
  console.log(`node ${process.version}, ${pairs} rounds, CPU ns per call (lower quartile of each run's batches); load ${load()}`);
  names.forEach((name, i) => {
    const ratios = perCase[i].map((x, r) => x / perCase[0][r]);
    const vs =
      i === 0 ? '' : `  ${name} / ${names[0]} ${median(ratios).toFixed(3)} (rounds ${ratios.map((r) => r.toFixed(2)).join(' ')})`;
    console.log(`  ${name.padEnd(16)} ${median(perCase[i]).toFixed(1).padStart(10)}${vs}`);
  });
  process.exit(0);
}

const before = arg('before');
if (before === undefined)
  throw new Error(
    'usage: bench/ab-process.mjs --before=DIR [--after=DIR] [--case=full] [--pairs=12], or --cases=A,B,… [--dir=DIR]',
  );
const after = arg('after', 'dist');
const which = arg('case', 'full');
const run = (dir) => runCase(dir, which);
const b = [];
const a = [];
// ABBA: the two builds swap places every pair, so that a drift (the machine warming up or
// slowing down) and any cost of coming second fall on both alike.
for (let i = 0; i < pairs; i++) {
  if (i % 2 === 0) {
    b.push(run(before));
    a.push(run(after));
  } else {
    const second = run(after);
    b.push(run(before));
    a.push(second);
  }
}
const ratios = a.map((x, i) => x / b[i]);
console.log(
  `node ${process.version} ${which}: before ${median(b).toFixed(1)} ns, after ${median(a).toFixed(1)} ns CPU per call; ` +
    `after/before ${median(ratios).toFixed(3)} (pairs ${ratios.map((r) => r.toFixed(2)).join(' ')}); load ${load()}`,
);
