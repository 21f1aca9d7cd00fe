import { run } from '../../src/cli/main.js';

/** Runs the CLI in-process, capturing what it writes. */
export async function runCli(
  argv: string[],
  options: { isTTY?: boolean; cwd?: string; clock?: { monotonic(): number } } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    isTTY: options.isTTY ?? false,
    cwd: options.cwd,
    clock: options.clock,
  });
  return { code, stdout, stderr };
}
