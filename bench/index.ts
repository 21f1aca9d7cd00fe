/**
 * Side-by-side benchmarks, in one process so the ratios are fair: `npm run bench` prints a
 * table with ratios to kindly; `npm run bench -- --json` prints
 * `[{ "name": string, "nsPerCall": number }, …]`.
 *
 * Every case runs the same successful async operation; what differs is the resilience
 * wrapper around it. Each wrapper is built once, outside the measured loop, as a user would.
 */
import { bench, do_not_optimize, run } from 'mitata';
import { budgetCases } from './budget.js';
import { cases } from './cases.js';
import { fleetBench } from './fleet.js';

const json = process.argv.includes('--json');
const filter = process.argv.find((a) => a.startsWith('--filter='))?.slice('--filter='.length);

const wantsFleet = filter === undefined || 'kindly:fleet'.includes(filter) || filter.includes('fleet');
const fleet = wantsFleet ? await fleetBench() : undefined;
for (const c of [...cases, ...budgetCases, ...(fleet?.cases ?? [])]) {
  // The fleet cases are read against kindly:full (the same pipeline without a store).
  if (filter !== undefined && !c.name.includes(filter) && !(wantsFleet && c.name === 'kindly:full')) continue;
  const fn = await c.setup();
  // Sanity: every case must really run the operation and resolve.
  if ((await fn()) !== 42) throw new Error(`bench case ${c.name} did not return the operation's value`);
  if (c.sync) bench(c.name, () => do_not_optimize(fn()));
  else bench(c.name, async () => do_not_optimize(await fn()));
}

const result = await run({ format: 'quiet', throw: true });
const fleetReport = fleet?.report() ?? [];
await fleet?.close();
const rows = result.benchmarks.map((b) => ({
  name: b.alias,
  nsPerCall: Math.round((b.runs[0]?.stats?.avg ?? Number.NaN) * 10) / 10,
}));

if (json) {
  process.stdout.write(`${JSON.stringify(rows)}\n`);
} else {
  const kindlyOf = (name: string) => rows.find((r) => r.name === name.replace(/^[^:]+:/, 'kindly:'));
  console.log(`node ${process.version}, ${new Date().toISOString()}`);
  console.log('case                          ns/call    vs kindly');
  for (const r of rows) {
    const k = kindlyOf(r.name);
    const ratio = k && k !== r && r.name.includes(':') ? `${(r.nsPerCall / k.nsPerCall).toFixed(1)}×` : '';
    console.log(`${r.name.padEnd(28)} ${r.nsPerCall.toFixed(1).padStart(9)}    ${ratio}`);
  }
}
// The fleet store's cost: ns added over the same pipeline without a store, and round trips.
const full = rows.find((r) => r.name === 'kindly:full');
const fleetLines = [...fleetReport];
for (const name of ['kindly:fleet', 'kindly:fleet-redis-down']) {
  const r = rows.find((x) => x.name === name);
  if (r !== undefined && full !== undefined)
    fleetLines.push(`${name}: ${(r.nsPerCall - full.nsPerCall).toFixed(1)} ns added per call over kindly:full`);
}
for (const line of fleetLines) (json ? console.error : console.log)(line);
