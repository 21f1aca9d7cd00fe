/**
 * `npm run bench`: every benchmark, side by side with peers in one process per suite, each
 * figure the median of several interleaved runs, with ratios printed (and targets checked).
 * `npm run bench -- --json` prints `{ node, rows, ratios, imports, bundleAreas }` instead.
 *
 * Options: `--only=core,http,import,bundle,fleet` (suites; fleet starts redis-server), `--filter=NAME` (core cases), `--runs=N`
 * (core and HTTP blocks; default 5), `--warmup=N` (HTTP requests per case before timing; default 2,000).
 *
 * The machine these figures come from may be shared: absolute times move with the load,
 * ratios measured side by side much less. Read the ratios.
 */
import { execFileSync } from 'node:child_process';
import { printBundleSize, runBundleSize } from './bundle-size.js';
import { CORE_TARGETS, PEER_FACTOR, runCore } from './core.js';
import { runFleet } from './fleet.js';
import type { HttpGroup } from './http.js';
import { IMPORT_TARGET_MS, runImportCost } from './import-cost.js';
import { formatRatio, type Ratio, type Row } from './stats.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const json = process.argv.includes('--json');
const only = new Set((arg('only') ?? 'core,http,import,bundle,fleet').split(','));
const runs = arg('runs') === undefined ? undefined : Number(arg('runs'));

const rows: Row[] = [];
const ratios: Ratio[] = [];
const log = (line = '') => {
  if (!json) console.log(line);
};
log(`node ${process.version}, ${new Date().toISOString()}`);

if (only.has('core')) {
  const core = await runCore({ runs: runs ?? 5, filter: arg('filter') });
  rows.push(...core.rows);
  for (const r of core.ratios) {
    const factor = PEER_FACTOR[r.name.split(' / ')[0] as string];
    if (factor !== undefined) r.target = factor;
  }
  ratios.push(...core.ratios);
  let suite = '';
  for (const r of core.rows) {
    if (r.suite !== suite) {
      suite = r.suite;
      log(`\n${suite}: ns per call (median of blocks)        blocks`);
    }
    const target = r.suite === 'core:cpu' ? CORE_TARGETS[r.name] : undefined;
    const verdict = target === undefined ? '' : (r.nsPerCall as number) <= target ? `  ≤ ${target} met` : `  ≤ ${target} MISSED`;
    log(`  ${r.name.padEnd(34)} ${String(r.nsPerCall).padStart(9)}   ${r.runs.join(' ')}${verdict}`);
  }
  log('core:cpu: peer / kindly (how many times cheaper kindly is); kindly / floor (what kindly adds)');
  for (const r of core.ratios) {
    if (r.name.includes(' / floor:')) {
      log(`  ${formatRatio(r)}`);
      continue;
    }
    const verdict = r.target === undefined ? '' : r.ratio >= r.target ? `  ≥ ${r.target}× met` : `  ≥ ${r.target}× MISSED`;
    log(`  ${r.name.padEnd(46)} ${r.ratio.toFixed(1)}×   runs: ${r.runs.map((x) => x.toFixed(1)).join(' ')}${verdict}`);
  }
}

if (only.has('http')) {
  for (const group of ['plain', 'deadline', 'rejected'] as HttpGroup[]) {
    // A fresh process per group: see http.ts on AsyncLocalStorage and promise hooks.
    const extra = runs === undefined ? [] : [`--blocks=${runs}`];
    const warmup = arg('warmup');
    if (warmup !== undefined) extra.push(`--warmup=${warmup}`);
    const out = execFileSync(
      process.execPath,
      ['--import', 'tsx', new URL('./http.ts', import.meta.url).pathname, `--group=${group}`, ...extra],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const result = JSON.parse(out) as { rows: Row[]; ratios: Ratio[] };
    rows.push(...result.rows);
    ratios.push(...result.ratios);
    let suite = '';
    for (const r of result.rows) {
      if (r.suite !== suite) {
        suite = r.suite;
        log(`\n${suite}: µs per request (median of blocks)`);
      }
      log(
        `  ${r.name.padEnd(16)} ${((r.nsPerCall as number) / 1000).toFixed(1).padStart(7)}   ${r.runs.map((x) => (x / 1000).toFixed(1)).join(' ')}`,
      );
    }
    for (const r of result.ratios) log(`  ${r.suite.padEnd(26)} ${formatRatio(r)}`);
  }
}

let imports: { loaded: string[]; offending: string[] } | undefined;
if (only.has('import')) {
  const cost = runImportCost({ samples: 7 });
  rows.push(...cost.rows);
  imports = { loaded: cost.loaded, offending: cost.offending };
  log('\nimport of the root entry in a fresh process (median of 7)');
  for (const r of cost.rows) log(`  ${r.name.padEnd(28)} ${String(r.value).padStart(7)} ${r.unit}   ${r.runs.join(' ')}`);
  const ms = cost.rows[0]?.value ?? Number.NaN;
  log(`  target ≤ ${IMPORT_TARGET_MS} ms: ${ms <= IMPORT_TARGET_MS ? 'met' : 'MISSED'}`);
  log(
    cost.offending.length === 0
      ? '  loads no HTTP, simulator, adapter or fleet-link code: met'
      : `  loads code it should not (MISSED): ${cost.offending.map((f) => f.replace(/^.*\/dist\//, 'dist/')).join(', ')}`,
  );
}

// What an app's browser bundle carries: kindly's cases beside ky, cockatiel and p-retry.
let bundleAreas: [string, number][] | undefined;
if (only.has('bundle')) {
  const sizes = await runBundleSize();
  rows.push(...sizes.rows);
  ratios.push(...sizes.ratios);
  bundleAreas = sizes.areas;
  printBundleSize(sizes, log);
}

// The fleet store against a real redis-server: what it adds to kindly:full (interleaved runs),
// and Redis round trips per call at a steady rate.
if (only.has('fleet')) {
  const fleet = await runFleet({ runs: runs ?? 3 });
  rows.push(...fleet.rows);
  log('\nfleet: ns per call (median of runs)                runs');
  for (const r of fleet.rows)
    if (r.nsPerCall !== undefined) log(`  ${r.name.padEnd(28)} ${String(r.nsPerCall).padStart(9)}   ${r.runs.join(' ')}`);
  for (const line of fleet.lines) log(`  ${line}`);
}

if (json) process.stdout.write(`${JSON.stringify({ node: process.version, rows, ratios, imports, bundleAreas })}\n`);
