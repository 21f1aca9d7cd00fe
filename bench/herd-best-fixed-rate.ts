/**
 * How close could any pacer come? The simulator's lower bound assumes the callee's whole rate
 * is used from the first instant; when service times or latencies spread, no client reaches it.
 * This runs the herd with a pacer that cheats (`fixedRateStrategy`: every retry on one shared
 * schedule at a rate known in advance) for several rates, beside kindly's adaptive pacing, on
 * the same seeds. The best of those rows is what pacing at a fixed rate can achieve there;
 * adaptive pacing, which learns the rate from the answers, is measured against it.
 *
 * Against a worker pool it also runs `toldWindowStrategy`: as many requests in flight as the
 * pool holds, known in advance, the next sent the instant an answer arrives.
 *
 *     npx tsx bench/herd-best-fixed-rate.ts [--server concurrency] [--queue 1] [--latency lognormal]
 *       [--latency-ms 5] [--arrival-ms 3] [--seeds 24] [--rates 80,90,100,110,120] [--windows 10,11]
 *
 * 100 callers, 10 per 100 ms (100/s), as `kindly-calls sim herd`. Each seed's requests and
 * time over the lower bound for that seed's arrivals (`herdSpreadLowerBound`); median and mean
 * over the seeds, and the slowest.
 */
import { adaptiveStrategy } from '../src/sim/herd-adaptive.js';
import { type HerdSetup, herdSpreadLowerBound, runHerd } from '../src/sim/herd-run.js';
import { fixedRateStrategy } from './fixed-rate-strategy.js';
import { median } from './stats.js';
import { toldWindowStrategy } from './told-window-strategy.js';

function option(name: string, fallback: string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 && process.argv[at + 1] !== undefined ? (process.argv[at + 1] as string) : fallback;
}

const model = option('server', 'concurrency');
const queue = Number(option('queue', '1'));
const distribution = option('latency', 'lognormal');
const latencyMs = Number(option('latency-ms', '5'));
const arrivalMs = Number(option('arrival-ms', '3'));
const seeds = Number(option('seeds', '24'));
const rates = option('rates', '80,90,100,110,120').split(',').map(Number);
const windows = option('windows', model === 'concurrency' ? `10,${10 + queue}` : '')
  .split(',')
  .filter((w) => w !== '')
  .map(Number);
for (const n of [queue, latencyMs, arrivalMs, seeds, ...rates, ...windows])
  if (!Number.isFinite(n) || n < 0) throw new Error(`not a number ≥ 0: ${n}`);

const base = { clients: 100, capacity: 10, slotMs: 100 } as const;
const server = { model, queue, latencyMs, distribution } as HerdSetup['server'];
const setupOf = (seed: number): HerdSetup => ({ ...base, seed, server, arrivalMs });
// The bound for each seed's own arrivals (with first tries at once, the bound of a herd at t = 0).
const bounds = Array.from({ length: seeds }, (_, i) => herdSpreadLowerBound(setupOf(i + 1), 1));

console.log(
  `${model}${model === 'concurrency' ? ` (queue ${queue})` : ''}, ${distribution} ${latencyMs} ms, first tries over ${arrivalMs} ms, ${seeds} seeds; bound (median) ${median(bounds.map((b) => b.totalRequests))} requests, ${median(bounds.map((b) => b.allSucceededMs)).toFixed(0)} ms`,
);
console.log('strategy        requests over the bound: median · mean    time over the bound: median · mean · slowest');
for (const strategy of [
  adaptiveStrategy({}),
  ...rates.map(fixedRateStrategy),
  ...[...new Set(windows)].map(toldWindowStrategy),
]) {
  const requests: number[] = [];
  const times: number[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const run = runHerd(setupOf(seed), strategy);
    const bound = bounds[seed - 1] as (typeof bounds)[number];
    requests.push(run.totalRequests / bound.totalRequests);
    times.push(run.allSucceededMs / bound.allSucceededMs);
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `${strategy.name.padEnd(14)}  ${median(requests).toFixed(3)}× · ${mean(requests).toFixed(3)}×${' '.repeat(22)}${median(times).toFixed(3)}× · ${mean(times).toFixed(3)}× · ${Math.max(...times).toFixed(3)}×`,
  );
}
