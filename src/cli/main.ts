import { constants, realpathSync } from 'node:fs';
import { access, stat, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RetryOptions } from '../policies/retry-decision.js';
import { renderHtml } from '../sim/report/html.js';
import { renderText } from '../sim/report/text.js';
import { type ScenarioContext, type ScenarioResult, withDefaults } from '../sim/scenario.js';
import { findScenario, SCENARIOS } from '../sim/scenarios.js';
import type { Clock } from '../time/clock.js';
import { systemClock } from '../time/system-clock.js';
import { parseSimArgs } from './args.js';
import { loadRetryConfig } from './config.js';
import { mainHelp, scenarioHelp, simHelp } from './help.js';
import { Progress, type Writable } from './progress.js';
import { UsageError } from './usage-error.js';
import { isScenarioFile, loadUserScenario, scenarioResultProblems } from './user-scenario.js';
import { packageVersion } from './version.js';

/** Where the CLI writes, and what it may know about the terminal. */
export interface CliIo {
  stdout: Writable;
  stderr: Writable & { isTTY?: boolean };
  /** Whether stderr is a terminal (progress is shown only then). @default io.stderr.isTTY */
  isTTY?: boolean;
  /** Base for relative file names. @default process.cwd() */
  cwd?: string;
  /** Wall time, for the progress indicator only. @default systemClock */
  clock?: Pick<Clock, 'monotonic'>;
}

/** Exit codes: 0 done, 1 something failed while running, 2 bad command line. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * The `kindly` command, in-process: runs `argv` (without the node and script names) and
 * resolves to the exit code. Never throws and never calls `process.exit`.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  toleratePipeClose(io.stdout);
  toleratePipeClose(io.stderr);
  try {
    return await dispatch(argv, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`kindly: ${error.message}\n`);
      return EXIT_USAGE;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`kindly: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
    return EXIT_FAILURE;
  }
}

async function dispatch(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    io.stdout.write(mainHelp());
    return EXIT_OK;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT_OK;
  }
  if (command !== 'sim') throw new UsageError(`unknown command "${command}" (see kindly-calls --help)`);

  const [name, ...args] = rest;
  if (name === '--help' || name === '-h') {
    io.stdout.write(simHelp());
    return EXIT_OK;
  }
  if (name === undefined) {
    throw new UsageError(
      `sim: missing scenario, one of ${SCENARIOS.map((s) => s.name).join(', ')} (see kindly-calls sim --help)`,
    );
  }
  const cwd = io.cwd ?? process.cwd();
  // A path (./my-scenario.ts) runs the user's own scenario module, like a built-in.
  const scenario = isScenarioFile(name) ? await loadUserScenario(name, cwd) : findScenario(name);
  if (scenario === undefined) {
    throw new UsageError(`sim: unknown scenario "${name}", expected one of ${SCENARIOS.map((s) => s.name).join(', ')}`);
  }
  // Help wins over everything else on the line, a mistaken option included.
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout.write(scenarioHelp(scenario, name));
    return EXIT_OK;
  }
  const parsed = parseSimArgs(scenario, args, name);
  let report: string | undefined;
  if (parsed.report !== undefined) report = await writableReportPath(resolve(cwd, parsed.report), parsed.report);
  let retry: RetryOptions | undefined;
  if (parsed.config !== undefined) retry = await loadRetryConfig(parsed.config, cwd);

  const tty = io.isTTY ?? io.stderr.isTTY === true;
  const progress = tty ? new Progress(io.stderr, io.clock ?? systemClock, `kindly-calls sim ${scenario.name}`) : undefined;
  const context: ScenarioContext = { retry, onProgress: progress && ((done, total) => progress.update(done, total)) };
  let returned: unknown;
  try {
    // Awaited: a user's `async run()` (one that reads a data file, say) then works, and its
    // rejection ends here as a one-line error instead of an unhandled one with a stack trace.
    returned = await scenario.run(withDefaults(scenario, parsed.params), context);
  } catch (error) {
    if (!isScenarioFile(name)) throw error;
    throw new Error(`sim ${name}: run() failed: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    progress?.done();
  }
  const problems = scenarioResultProblems(returned);
  if (problems.length > 0) {
    throw new UsageError(`sim ${name}: run(params, context) must return { json, report } (${problems.join('; ')})`);
  }
  const result = returned as ScenarioResult;
  // Rendered before anything is written, so that a report the renderer cannot draw is named
  // as such, and the results are printed before the report is written: a file that cannot be
  // written then loses nothing.
  const rendered = report === undefined ? undefined : renderOrExplain(() => renderHtml(result.report), name, 'report');
  io.stdout.write(parsed.json ? `${jsonOf(result, name)}\n` : renderOrExplain(() => renderText(result.report), name, 'report'));
  if (report !== undefined && rendered !== undefined) {
    try {
      await writeFile(report, rendered);
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new Error(`cannot write report ${parsed.report} (${code ?? String(error)})`);
    }
    io.stderr.write(`kindly: report written to ${parsed.report}\n`);
  }
  return EXIT_OK;
}

/**
 * `path`, once it is clear a report can be written there: checked before the simulation runs,
 * so that a long run is not thrown away over a missing folder.
 */
async function writableReportPath(path: string, given: string): Promise<string> {
  try {
    if ((await stat(path)).isDirectory()) throw new UsageError(`--report ${given} is a folder; give a file name`);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    if ((error as { code?: string }).code !== 'ENOENT')
      throw new UsageError(`--report ${given}: cannot write there (${(error as { code?: string }).code ?? String(error)})`);
  }
  try {
    await access(dirname(path), constants.W_OK);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new UsageError(
      `--report ${given}: cannot write there (${code === 'ENOENT' ? 'no such folder' : (code ?? String(error))})`,
    );
  }
  return path;
}

/** A user's report the renderer trips over (a table without rows, say) is a usage error naming the scenario. */
function renderOrExplain(render: () => string, name: string, what: string): string {
  try {
    return render();
  } catch (error) {
    if (!isScenarioFile(name)) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`sim ${name}: the ${what} that run() returned cannot be drawn (${reason})`);
  }
}

/** The `--json` document; one a user's scenario made unserialisable (a BigInt, a cycle) is a usage error. */
function jsonOf(result: ScenarioResult, name: string): string {
  try {
    return JSON.stringify(result.json, null, 2);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(`sim ${name}: the \`json\` that run() returned cannot be written as JSON (${reason})`);
  }
}

const tolerant = new WeakSet<object>();

/**
 * `kindly-calls sim herd | head` closes the pipe before everything is written: the rest of the
 * output is simply not wanted, so EPIPE is ignored instead of crashing the process with an
 * unhandled 'error' event. One listener per stream, however often `run` is called.
 */
function toleratePipeClose(stream: Writable): void {
  const emitter = stream as Writable & { on?: (event: string, listener: (error: unknown) => void) => unknown };
  if (typeof emitter.on !== 'function' || tolerant.has(emitter)) return;
  tolerant.add(emitter);
  emitter.on('error', (error) => {
    if ((error as { code?: string }).code !== 'EPIPE') throw error;
  });
}

/** True when this file is the program being run (`tsx src/cli/main.ts …`), not an import. */
function isMain(): boolean {
  const script = process.argv[1];
  if (script === undefined) return false;
  try {
    return realpathSync(script) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/**
 * The command as a process (`bin/kindly-calls.mjs`, or this file run directly): `run`, its code
 * as the exit code. A scenario whose `run()` returns a promise that never settles leaves Node
 * nothing to wait for, and Node would end the process with code 0 (or 13 under a top-level
 * `await`) and no word: that is said, exit 1.
 */
export function runAsProgram(argv: readonly string[]): void {
  let finished = false;
  const unfinished = () => {
    if (finished) return;
    finished = true;
    process.stderr.write("kindly: the simulation never finished: a promise it waited for (its run()'s) never settled\n");
    process.exitCode = EXIT_FAILURE;
  };
  process.once('beforeExit', unfinished);
  run(argv, { stdout: process.stdout, stderr: process.stderr }).then((code) => {
    finished = true;
    process.off('beforeExit', unfinished);
    process.exitCode = code;
  });
}

if (isMain()) runAsProgram(process.argv.slice(2));
