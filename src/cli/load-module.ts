import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const TYPESCRIPT = new Set(['.ts', '.mts', '.cts']);

/**
 * Imports a user's module (a `--config` file). TypeScript is loaded without the user
 * preloading anything:
 * - Node that strips types itself (22.18+, 23.6+, 24, 26) imports `.ts` directly;
 * - otherwise (Node 20, early 22) through tsx's `tsImport`, when tsx can be found from the
 *   file's folder, the working folder or this package (any project that has tsx installed);
 * - otherwise a `TypeScriptUnavailableError` that says what to do.
 */
export async function importUserModule(path: string, cwd: string): Promise<unknown> {
  const url = pathToFileURL(path).href;
  if (!TYPESCRIPT.has(extname(path))) return import(url);
  try {
    return await import(url);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error;
  }
  const api = tsxApi([path, join(cwd, 'noop.js'), import.meta.url]);
  if (api === undefined) throw new TypeScriptUnavailableError();
  const { tsImport } = (await import(pathToFileURL(api).href)) as {
    tsImport: (specifier: string, parentURL: string) => Promise<{ default?: unknown }>;
  };
  const mod = await tsImport(url, import.meta.url);
  // A .ts file outside an ESM package is compiled as CommonJS: its `export default` arrives
  // one level down, as `default.default` next to `__esModule`.
  const inner = mod.default as { __esModule?: unknown; default?: unknown } | undefined;
  return inner !== null && typeof inner === 'object' && inner.__esModule === true ? inner : mod;
}

/** This Node cannot load TypeScript by itself and no tsx was found. */
export class TypeScriptUnavailableError extends Error {
  override readonly name = 'TypeScriptUnavailableError';
  constructor() {
    super(
      `Node ${process.version} cannot load TypeScript by itself (Node 22.18 or later can); ` +
        'install tsx in your project (npm i -D tsx), or write the config as .json or .js',
    );
  }
}

/** The path of tsx's ESM module API (`tsx/esm/api`), found from the first base that has tsx. */
function tsxApi(bases: readonly string[]): string | undefined {
  for (const base of bases) {
    let manifest: string;
    try {
      manifest = createRequire(base).resolve('tsx/package.json');
    } catch {
      continue; // no tsx from here
    }
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as {
      exports?: Record<string, { import?: { default?: string } | string }>;
    };
    const entry = pkg.exports?.['./esm/api']?.import;
    const file = typeof entry === 'string' ? entry : entry?.default;
    if (file !== undefined) return join(dirname(manifest), file);
  }
  return undefined;
}
