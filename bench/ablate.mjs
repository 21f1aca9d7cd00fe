// Copies of a build with one piece of the success path cut out, to price each piece (the
// "what each nanosecond pays for" table in docs/benchmarks.md). A copy is not a correct
// kindly: it exists only to be timed against the build it came from.
//
//   node bench/ablate.mjs dist .tmp/abl timer            # → .tmp/abl/timer
//   node bench/ab-process.mjs --before=dist --after=.tmp/abl/timer --case=full --pairs=6 --batches=200 --shape=bench
//
// Pieces (join with `+` to cut several at once):
// - `clock`: the call's start reading (the coarse clock's on the common call, see
//   src/time/coarse-clock.ts) replaced by a constant (a non-integer, so times stay boxed doubles);
// - `timer`: the attempt timeout is not armed (no timer-wheel link or cancel);
// - `budget`: the retry budget's deposit skipped;
// - `lane`: no lane (no breaker or bulkhead stage, no lane lookup);
// - `gates`: lanes looked up, but the stage loops around the attempt run over no stage;
// - `stats`: the per-call counters not counted;
// - `resume`: the call's promise is the attempt's own, without the reaction that settles a
//   lost attempt in the call's async context (`.then(resumeLost)`), on every runtime (Node 20
//   already goes without it: src/runtime/lost-attempt-context.ts).
// Each patch looks for the exact text of the build; a build that no longer has it stops the
// script (update the patch with the code).
import { cpSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [from = 'dist', into = '.tmp/abl', pieces = 'timer'] = process.argv.slice(2);
const out = join(into, pieces);
rmSync(out, { recursive: true, force: true });
cpSync(from, out, { recursive: true });
const chunk = readdirSync(out)
  .filter((f) => f.startsWith('chunk-') && f.endsWith('.js'))
  .map((f) => join(out, f))
  .find((f) => readFileSync(f, 'utf8').includes('function runAttempt('));
const index = join(out, 'index.js');
if (chunk === undefined) throw new Error(`no chunk with runAttempt in ${from}`);

function patch(file, before, after) {
  const text = readFileSync(file, 'utf8');
  if (!text.includes(before)) throw new Error(`${file}: text not found (the build changed): ${before}`);
  writeFileSync(file, text.replace(before, after));
}

const PATCHES = {
  clock: () =>
    patch(
      index,
      'const startedAt = coarse ? coarseClock.coarseMonotonic() : this.clock.monotonic();',
      'const startedAt = 1e6 + 0.5;',
    ),
  timer: () => patch(chunk, 'if (timeoutMs !== Number.POSITIVE_INFINITY) armTimer(context);', ''),
  budget: () => patch(chunk, 'this.get(key).recordRequest(nowMs);', ''),
  lane: () =>
    patch(index, 'const lane = this.laned ? this.lanes.get(options?.key ?? this.name) : void 0;', 'const lane = void 0;'),
  gates: () => {
    patch(
      chunk,
      '  enterFrom(from, nowMs) {\n    const stages = this.gates;',
      '  enterFrom(from, nowMs) {\n    const stages = NO_GATES;',
    );
    patch(
      chunk,
      '  exitAll(nowMs, result) {\n    const stages = this.gates;',
      '  exitAll(nowMs, result) {\n    const stages = NO_GATES;',
    );
    patch(chunk, 'var capturedResolve = noop;', 'var capturedResolve = noop;\nvar NO_GATES = [0].slice(1);');
  },
  resume: () =>
    patch(index, 'return LOST_ATTEMPTS_RESOLVE_WITH_THENABLE ? attempt : attempt.then(resumeLost);', 'return attempt;'),
  stats: () => {
    patch(index, 'this.stats_.requests++;', '');
    patch(index, 'stats.attempts++;\n    if (attempt > 1) stats.retries++;', '');
  },
};
for (const piece of pieces.split('+')) {
  const cut = PATCHES[piece];
  if (cut === undefined) throw new Error(`unknown piece ${piece}: ${Object.keys(PATCHES).join(', ')}`);
  cut();
}
console.log(out);
