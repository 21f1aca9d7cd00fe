// Run by tsup after each build (tsup.config.ts `onSuccess`): merges every ES module chunk the
// root entry loads into one chunk.
//
// Why: with code splitting, esbuild cuts a chunk for each distinct set of entries that share
// code, and the root shares code with twelve subpaths in sixteen different ways, so a cold
// `import 'kindly-calls'` loaded 17 files. On this machine each file costs Node's ES module
// loader ~0.4 ms (resolve, read, compile, link), which alone put the import above its 15 ms
// target while the code itself takes ~1 ms to run (see docs/benchmarks.md, "Import"). One
// chunk keeps every class and module-level value a single instance shared by all entries
// (`instanceof` across subpaths keeps working), which bundling the root on its own would not.
// The price: a subpath that used a sliver of that code (otel, hints) now loads all of it.
//
// CommonJS output is left as esbuild wrote it (`require` is cheaper per file).
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { rollup } from 'rollup';
import { withoutComments } from './strip-comments.mjs';

const STATIC_CHUNK_IMPORT = /(?:^|[;\n}])\s*(?:import|export)\s*(?:[^'"();]*?\bfrom\s*)?['"]\.\/(chunk-[A-Za-z0-9_-]+\.js)['"]/g;

/** The chunk files `file` imports statically (dynamic `import()` stays lazy and is not followed). */
function staticChunkImports(dist, file) {
  return [...readFileSync(join(dist, file), 'utf8').matchAll(STATIC_CHUNK_IMPORT)].map((m) => m[1]);
}

/** Every chunk reached from `entry` through static imports. */
export function rootChunks(dist, entry = 'index.js') {
  const seen = new Set();
  const todo = [entry];
  while (todo.length > 0) {
    for (const chunk of staticChunkImports(dist, todo.pop())) {
      if (!seen.has(chunk)) {
        seen.add(chunk);
        todo.push(chunk);
      }
    }
  }
  return seen;
}

export async function mergeRootChunks(distDir) {
  const dist = resolve(distDir);
  const core = rootChunks(dist);
  if (core.size <= 1) return;
  const entries = readdirSync(dist).filter((f) => f.endsWith('.js') && !f.startsWith('chunk-'));
  const bundle = await rollup({
    input: Object.fromEntries(entries.map((f) => [f.slice(0, -3), join(dist, f)])),
    // Package dependencies and Node built-ins stay imports.
    external: (id) => !id.startsWith('.') && !id.startsWith('/'),
    preserveEntrySignatures: 'strict',
    // esbuild already removed what is unused; this step only regroups modules.
    treeshake: false,
    onwarn(warning) {
      throw new Error(`merge-root-chunks: ${warning.message}`);
    },
    plugins: [
      {
        name: 'esbuild-output-with-maps',
        load(id) {
          if (!id.startsWith(dist)) return null;
          const code = readFileSync(id, 'utf8');
          let map;
          try {
            map = readFileSync(`${id}.map`, 'utf8');
          } catch {}
          return { code, map };
        },
        // Rollup chains this map after esbuild's, so stack traces still point into `src/`.
        transform(code, id) {
          return id.startsWith(dist) ? withoutComments(code, id) : null;
        },
      },
    ],
  });
  const staging = join(dist, '.merge-root-chunks');
  rmSync(staging, { recursive: true, force: true });
  await bundle.write({
    dir: staging,
    format: 'es',
    sourcemap: true,
    // The maps are written in the staging folder but read from `dist`, one level up: their
    // paths to the sources must be relative to `dist`.
    sourcemapPathTransform: (source) => relative(dist, resolve(staging, source)),
    entryFileNames: '[name].js',
    chunkFileNames: 'chunk-[hash].js',
    manualChunks: (id) => (id.startsWith(dist) && core.has(id.slice(dist.length + 1)) ? 'root' : undefined),
  });
  await bundle.close();
  for (const f of readdirSync(dist)) if (/\.js(\.map)?$/.test(f)) rmSync(join(dist, f));
  for (const f of readdirSync(staging)) renameSync(join(staging, f), join(dist, f));
  rmSync(staging, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) await mergeRootChunks(process.argv[2] ?? 'dist');
