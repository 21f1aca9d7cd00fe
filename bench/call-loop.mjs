// One core case of a built package in a plain loop, for a profiler or an A/B (no tsx, no other
// case in the process):
//
//   node --cpu-prof --cpu-prof-dir=.tmp/prof bench/call-loop.mjs dist full 4000000
//   node bench/call-loop.mjs DIR CASE --batches=500
//
// CASE: `full` (budget + breaker + bulkhead, as `kindly:full`), `plain` (retry + timeout) or
// `signal` (the operation reads `context.signal`). With `--batches=N` it warms up, then times N
// batches of 2,000 calls and prints the lower quartile of their CPU ns per call (the batches a
// burst of outside load hit are the slow ones).
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir = 'dist', which = 'full', countArg = '3000000'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const batchesArg = process.argv.find((a) => a.startsWith('--batches='));
const { downstream } = await import(pathToFileURL(resolve(dir, 'index.js')).href);
const operation = async () => 42;
const api =
  which === 'full'
    ? downstream('loop-full', {
        retry: { maxAttempts: 3 },
        attemptTimeoutMs: 10_000,
        budget: {},
        breaker: {},
        bulkhead: { maxConcurrent: 1_000 },
      })
    : downstream('loop', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 });
const once = which === 'signal' ? () => api.call((c) => (c.signal.aborted ? 0 : operation())) : () => api.call(operation);
if ((await once()) !== 42) throw new Error(`case ${which} did not return the operation's value`);

if (batchesArg === undefined) {
  for (let i = 0; i < Number(countArg); i++) await once();
} else {
  for (let i = 0; i < 100_000; i++) await once();
  const perCall = [];
  for (let b = 0; b < Number(batchesArg.slice('--batches='.length)); b++) {
    const start = process.cpuUsage();
    for (let i = 0; i < 2_000; i++) await once();
    const used = process.cpuUsage(start);
    perCall.push(((used.user + used.system) * 1_000) / 2_000);
  }
  perCall.sort((a, b) => a - b);
  console.log(perCall[perCall.length >> 2].toFixed(1));
}
