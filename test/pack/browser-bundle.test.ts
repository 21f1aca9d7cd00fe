import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/**
 * What a front-end app's bundle pulls in when it uses kindly's browser-facing entries: built for
 * the browser as an app's bundler would (esbuild, ES module, tree-shaken), from the sources, the
 * bundle must build (no Node built-in reachable) and hold none of the code that only servers,
 * the CLI or tests use. Each such file would be shipped to every page for nothing.
 */

const REPO = new URL('../..', import.meta.url).pathname;

/** Source folders and files no browser bundle of these entries may contain. */
const SERVER_ONLY = [
  /^src\/sim\//,
  /^src\/cli\//,
  /^src\/grpc\//,
  /^src\/chaos\//,
  /^src\/testing\//,
  /^src\/store\/(?!fleet-store\.ts$)/, // the store's interface is the downstream's option type; links and Redis are not
  /^src\/telemetry\/otel/,
  /^src\/http\/(express|fastify|node-http|server-context)\.ts$/,
];

async function inputsOf(entry: string): Promise<string[]> {
  const result = await build({
    stdin: { contents: entry, resolveDir: REPO, sourcefile: 'app.ts', loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    external: ['axios', '@tanstack/query-core'],
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const output = Object.values(result.metafile.outputs)[0];
  // Only files that put bytes into the bundle: a module imported for a type or an unused
  // export is tree-shaken out and costs the page nothing.
  return Object.entries(output?.inputs ?? {})
    .filter(([, input]) => input.bytesInOutput > 0)
    .map(([path]) => path);
}

const CASES: [string, string][] = [
  [
    'downstream().call',
    `import { downstream } from './src/index.ts';
export const api = downstream('api', { retry: { maxAttempts: 3 }, attemptTimeoutMs: 10_000 });`,
  ],
  [
    'createFetch',
    `import { downstream } from './src/index.ts';
import { createFetch } from './src/http/index.ts';
export const send = createFetch(downstream('api', { retry: { maxAttempts: 3 } }));`,
  ],
  [
    'the axios and TanStack Query adapters',
    `import { downstream } from './src/index.ts';
import { axiosInterceptors, queryRetry } from './src/adapters/index.ts';
const api = downstream('api', { retry: { maxAttempts: 3 } });
export const both = [axiosInterceptors(api), queryRetry(api)];`,
  ],
];

describe('a browser bundle of the front-end entries', () => {
  for (const [name, entry] of CASES) {
    it(`${name}: builds for the browser and holds no server-only code`, async () => {
      const inputs = await inputsOf(entry);
      // The entry's own code is in (the check reads real inputs, not an empty list).
      expect(inputs).toContain('src/runtime/downstream.ts');
      expect(inputs.filter((path) => SERVER_ONLY.some((re) => re.test(path)))).toEqual([]);
    });
  }

  it('the check sees server-only code when an entry reaches it', async () => {
    const inputs = await inputsOf(`import { downstream } from './src/index.ts';
import { runHerd } from './src/sim/herd-run.ts';
export const both = [downstream('api', {}), runHerd];`);
    expect(inputs.filter((path) => SERVER_ONLY.some((re) => re.test(path))).length).toBeGreaterThan(0);
  });
});

/** The code of adaptive pacing and the latency policies, which `kindly-calls/lite` leaves out. */
const PACING_AND_LATENCY = [
  /^src\/policies\/(pacer|pacer-throttle-state|pool-window|probe-ramp|probe-sends|delivery-rate|send-log|released-tickets|late-wake-queue|flight-latencies)\.ts$/,
  /^src\/policies\/(adaptive-concurrency|latency-policies|hedging)\.ts$/,
  /^src\/runtime\/latency-lane\.ts$/,
  /^src\/orchestration\/stages\/(pacing|latency|hedging)-stage\.ts$/,
];

describe('a browser bundle of kindly-calls/lite', () => {
  const LITE_CASES: [string, string][] = CASES.map(([name, entry]) => [
    name,
    entry.replace("import { downstream } from './src/index.ts';", "import { downstream } from './src/lite.ts';"),
  ]);
  for (const [name, entry] of LITE_CASES) {
    it(`${name}: holds neither adaptive pacing nor the latency policies, nor server-only code`, async () => {
      expect(entry).toContain('./src/lite.ts');
      const inputs = await inputsOf(entry);
      expect(inputs).toContain('src/runtime/downstream.ts');
      expect(inputs.filter((path) => PACING_AND_LATENCY.some((re) => re.test(path)))).toEqual([]);
      expect(inputs.filter((path) => SERVER_ONLY.some((re) => re.test(path)))).toEqual([]);
    });
  }

  it("the root entry's downstream() holds them: the check sees them when they are in", async () => {
    const inputs = await inputsOf(CASES[0]?.[1] as string);
    const found = inputs.filter((path) => PACING_AND_LATENCY.some((re) => re.test(path)));
    expect(found).toContain('src/policies/pacer.ts');
    expect(found).toContain('src/runtime/latency-lane.ts');
  });
});
