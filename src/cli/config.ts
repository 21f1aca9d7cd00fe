import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { InvalidOptionsError } from '../options/validate.js';
import { type RetryOptions, RetryPolicy } from '../policies/retry-decision.js';
import { importUserModule } from './load-module.js';
import { UsageError } from './usage-error.js';

const MODULE_EXTENSIONS = new Set(['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts']);

function oneLine(message: string): string {
  return message.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * Reads the user's retry options for `--config`:
 * - a `.json` file holding a `RetryOptions` object. JSON has no `Infinity`, so
 *   `"maxAttempts": "Infinity"` stands for it (and, as always, needs a finite `maxElapsedMs`);
 * - a JavaScript or TypeScript module whose default export is the options. TypeScript loads
 *   natively on Node ≥ 22.18, through tsx (when installed) on older Node, and otherwise fails
 *   with a message saying so (see `importUserModule`).
 * The options are validated by `RetryPolicy` itself; any problem is a `UsageError` listing
 * every problem on one line.
 */
export async function loadRetryConfig(file: string, cwd: string = process.cwd()): Promise<RetryOptions> {
  const path = resolve(cwd, file);
  const where = `--config ${file}`;
  let value: unknown;
  if (MODULE_EXTENSIONS.has(extname(path))) {
    try {
      const mod = (await importUserModule(path, cwd)) as { default?: unknown };
      value = mod.default;
    } catch (error) {
      throw new UsageError(`${where}: cannot load (${oneLine(error instanceof Error ? error.message : String(error))})`);
    }
  } else {
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (error) {
      const code = (error as { code?: string }).code;
      throw new UsageError(`${where}: cannot read (${code ?? oneLine(String(error))})`);
    }
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`${where}: not valid JSON (${oneLine(error instanceof Error ? error.message : String(error))})`);
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${where}: expected an object of retry options (kindly RetryOptions)`);
  }
  const options = { ...(value as Record<string, unknown>) };
  if (options.maxAttempts === 'Infinity') options.maxAttempts = Number.POSITIVE_INFINITY;
  try {
    new RetryPolicy(options as RetryOptions);
  } catch (error) {
    if (error instanceof InvalidOptionsError) throw new UsageError(`${where}: ${error.problems.join('; ')}`);
    throw new UsageError(`${where}: ${oneLine(error instanceof Error ? error.message : String(error))}`);
  }
  return options as RetryOptions;
}
