import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The installed package's version, read from its package.json: the nearest one above this
 * module named `kindly-calls` (dist/cli.js in an install, src/cli/version.ts in the repository).
 * `unknown` if it cannot be found.
 */
export function packageVersion(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'kindly-calls' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json here: look further up
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return 'unknown';
}
