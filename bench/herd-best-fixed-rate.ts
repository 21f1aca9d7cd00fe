/**
 * How close could any pacer come? The simulator's lower bound assumes the callee's whole rate
 * is used from the first instant; when service times or latencies spread, no client reaches it.
 * This runs the herd with a pacer that cheats (`fixedRateStrategy`: every retry on one shared
 * schedule at a rate known in advance) for several rates, beside kindly's adaptive pacing, on
 * the same seeds. The best of those rows is what pacing at a fixed rate can achieve there;
 * adaptive pacing, which learns the rate from the answers, is measured against it.
 *
 *     npx tsx bench/herd-best-fixed-rate.ts [--server concurrency] [--queue 1] [--latency lognormal]
 *       [--latency-ms 5] [--arrival-ms 3] [--seeds 24] [--rates 80,90,100,110,120]
 *
 * 100 callers, 10 per 100 ms (100/s), as `kindly-calls sim herd`. Medians over the seeds, the
 * slowest seed in brackets, and each time over the model's lower bound.
 */
import { adaptiveStrategy } from '../src/sim/herd-adaptive.js';
import { type HerdSetup, herdLowerBound, runHerd } from '../src/sim/herd-run.js';
import { fixedRateStrategy } from './fixed-rate-strategy.js';
import { median } from './stats.js';

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
for (const n of [queue, latencyMs, arrivalMs, seeds, ...rates])
  if (!Number.isFinite(n) || n < 0) throw new Error(`not a number ≥ 0: ${n}`);

const base = { clients: 100, capacity: 10, slotMs: 100 } as const;
const server = { model, queue, latencyMs, distribution } as HerdSetup['server'];
const bound = herdLowerBound({ ...base, server });

console.log(
  `${model}${model === 'concurrency' ? ` (queue ${queue})` : ''}, ${distribution} ${latencyMs} ms, first tries over ${arrivalMs} ms, ${seeds} seeds; bound ${bound.totalRequests} requests, ${bound.allSucceededMs} ms`,
);
for (const strategy of [adaptiveStrategy({}), ...rates.map(fixedRateStrategy)]) {
  const requests: number[] = [];
  const times: number[] = [];
  for (let seed = 1; seed <= seeds; seed++) {
    const run = runHerd({ ...base, seed, server, arrivalMs }, strategy);
    requests.push(run.totalRequests);
    times.push(run.allSucceededMs);
  }
  const t = median(times);
  console.log(
    `${strategy.name.padEnd(14)} ${String(median(requests)).padStart(6)} requests (${(median(requests) / bound.totalRequests).toFixed(2)}×)  ${t.toFixed(0).padStart(5)} ms (${(t / bound.allSucceededMs).toFixed(2)}×, slowest ${Math.max(...times).toFixed(0)} ms)`,
  );
}
