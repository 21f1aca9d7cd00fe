/**
 * A process's first herd against a real rate limiter: the herd a service meets before V8 has
 * compiled its HTTP client or kindly's code, when sending 100 requests takes it tens of ms and
 * it reads the answers in one backlog. Each run is a fresh process of
 * `bench/real-limiter-herds.ts MODEL 1 STRATEGY --server-process --warmup=1`, whose warm-up
 * herd is the cold one; prints each first herd's requests and time, then the medians, beside
 * the same processes' second (warm-ish) herds.
 *
 *     npx tsx bench/cold-herds.ts token-bucket|fixed-window|concurrency|leaky-bucket|gcra [processes=8] [adaptive|full|decorrelated|fixed-rate]
 *
 * One cold herd says little (its shape depends on how late the client's sends go out); the
 * spread over several processes is the figure.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { median } from './stats.js';

const run = promisify(execFile);
const [model = 'concurrency', processesArg = '8', strategy = 'adaptive'] = process.argv.slice(2);
const processes = Number(processesArg);
if (!Number.isInteger(processes) || processes < 1) throw new Error('processes must be a whole number, at least 1');

const herdsScript = new URL('./real-limiter-herds.ts', import.meta.url).pathname;
const WARM_UP = /warm-up herds? first, not counted: ([\d.]+) s \((\d+)\)/;
const TIMED = /^\s+(\d+) requests \/ ([\d.]+) s/m;

interface Herd {
  requests: number;
  seconds: number;
}
const cold: Herd[] = [];
const second: Herd[] = [];
for (let i = 0; i < processes; i++) {
  // One process at a time: two cold processes on one machine would slow each other.
  const { stdout } = await run(
    process.execPath,
    ['--import', 'tsx', herdsScript, model, '1', strategy, '--server-process', '--warmup=1'],
    { maxBuffer: 1 << 20 },
  );
  const first = WARM_UP.exec(stdout);
  const timed = TIMED.exec(stdout);
  if (first === null || timed === null) throw new Error(`Unexpected output from real-limiter-herds:\n${stdout}`);
  cold.push({ seconds: Number(first[1]), requests: Number(first[2]) });
  second.push({ requests: Number(timed[1]), seconds: Number(timed[2]) });
  console.log(`  process ${i + 1}: first herd ${first[2]} requests / ${first[1]} s, second ${timed[1]} / ${timed[2]} s`);
}

const summary = (herds: Herd[]) =>
  `${median(herds.map((h) => h.requests))} requests / ${median(herds.map((h) => h.seconds)).toFixed(2)} s`;
console.log(`${model}, ${strategy}, ${processes} fresh processes on ${process.version}:`);
console.log(`  first herd (cold): median ${summary(cold)}`);
console.log(`  second herd: median ${summary(second)}`);
