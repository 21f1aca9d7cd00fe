/**
 * What one reading of the real clock costs, CPU ns per read (3 million reads per block,
 * median of 10 blocks after 2 warm-up blocks):
 *
 *   node bench/clock-read.mjs                  the platform's clocks: performance.now(),
 *                                              process.hrtime() and process.hrtime.bigint()
 *   node bench/clock-read.mjs DIR_A DIR_B      systemClock.monotonic() of two builds (each a
 *                                              built dist/), alternating in one process
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const READS = 3_000_000;
const BLOCKS = 12;
const WARM_UP = 2;

function cpuNsPerRead(read) {
  let sink = 0;
  const t0 = process.cpuUsage();
  for (let i = 0; i < READS; i++) sink += read();
  const used = process.cpuUsage(t0);
  if (sink === -1) console.log(sink); // keeps the reads from being optimised away
  return ((used.user + used.system) * 1000) / READS;
}

const median = (values) => {
  const sorted = values.slice(WARM_UP).sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
};

/** Runs the readers in turn, the order swapped every block, and prints each one's median. */
function compare(readers) {
  const runs = readers.map(() => []);
  for (let b = 0; b < BLOCKS; b++) {
    const order = b % 2 === 0 ? readers.map((_, i) => i) : readers.map((_, i) => readers.length - 1 - i);
    for (const i of order) runs[i].push(cpuNsPerRead(readers[i][1]));
  }
  for (const [i, [name]] of readers.entries())
    console.log(`${process.version}  ${name.padEnd(44)} ${median(runs[i]).toFixed(1)} ns`);
}

const dirs = process.argv.slice(2);
if (dirs.length === 0) {
  const perf = globalThis.performance;
  const hrtime = process.hrtime;
  const bigint = process.hrtime.bigint;
  compare([
    ['performance.now()', () => perf.now()],
    [
      'process.hrtime() as ms',
      () => {
        const t = hrtime();
        return t[0] * 1e3 + t[1] / 1e6;
      },
    ],
    ['process.hrtime.bigint() as ms', () => Number(bigint()) / 1e6],
  ]);
} else {
  const readers = [];
  for (const dir of dirs) {
    const { systemClock } = await import(pathToFileURL(resolve(dir, 'testing.js')).href);
    readers.push([`systemClock.monotonic(), ${dir}`, () => systemClock.monotonic()]);
  }
  compare(readers);
}
