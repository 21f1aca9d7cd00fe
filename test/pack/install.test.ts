import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snippetsOf } from '../docs/snippets.js';

/**
 * The package as a newcomer gets it: `npm pack`, then `npm install` of the tarball into a fresh
 * project (no workspace link, offline: kindly has no dependencies). Checks the README quick
 * start, one import per subpath in ESM and CommonJS, `npx kindly-calls --version`, and a
 * `tsc --strict` compile under nodenext and node10. Optional peers are not installed; the few
 * checks that need one (gRPC at import time; OpenTelemetry and Fastify types) link it from this
 * repository's node_modules, as a user would have installed it.
 *
 * Needs dist/ built (`npm test` builds first).
 */
const run = promisify(execFile);
const root = fileURLToPath(new URL('../../', import.meta.url));
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  version: string;
  exports: Record<string, unknown>;
};
const subpaths = Object.keys(pkg.exports)
  .filter((s) => s !== './package.json')
  .map((s) => (s === '.' ? 'kindly-calls' : `kindly-calls/${s.slice(2)}`));
/** Subpaths that load their optional peer at import time. */
const NEEDS_PEER: Record<string, string> = {
  'kindly-calls/grpc': '@grpc/grpc-js',
  // Spans and histograms use the API at run time (context, propagation, span kinds).
  'kindly-calls/otel': '@opentelemetry/api',
};

const work = mkdtempSync(join(tmpdir(), 'kindly-pack-'));
const project = join(work, 'project');
const node = (args: string[]) => run(process.execPath, args, { cwd: project, timeout: 60_000 });

beforeAll(async () => {
  mkdirSync(project);
  const { stdout } = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: root, timeout: 60_000 });
  const tarball = join(work, stdout.trim().split('\n').pop() as string);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'newcomer', private: true }));
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball], {
    cwd: project,
    timeout: 60_000,
  });
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function linkPeer(name: string): void {
  const target = join(project, 'node_modules', name);
  mkdirSync(join(target, '..'), { recursive: true });
  try {
    symlinkSync(join(root, 'node_modules', name), target, 'dir');
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error;
  }
}

describe('the packed tarball in a fresh project', () => {
  it('installs as a real copy: package.json, dist, bin, docs and examples, no workspace link', () => {
    const installed = join(project, 'node_modules', 'kindly-calls');
    expect(JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')).version).toBe(pkg.version);
    for (const file of ['dist/index.js', 'bin/kindly-calls.mjs', 'docs/guide.md', 'docs/http.md', 'examples/quick-start.ts']) {
      expect(readFileSync(join(installed, file)).length, file).toBeGreaterThan(0);
    }
  });

  it('runs the README quick start as printed', async () => {
    const [quickStart] = snippetsOf('README.md', readFileSync(join(root, 'README.md'), 'utf8'));
    const server = [
      "import { createServer } from 'node:http';",
      'let seen = 0;',
      'const server = createServer((_req, res) => {',
      "  if (++seen === 1) res.writeHead(429, { 'retry-after': '1' }).end();",
      '  else res.writeHead(200, { \'content-type\': \'application/json\' }).end(\'{"id":"ch_1","status":"paid"}\');',
      '});',
      "await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));",
      'process.env.PAYMENTS_URL = `http://127.0.0.1:${server.address().port}`;',
      'server.unref();',
    ].join('\n');
    // The snippet has no type annotations, so it runs as JavaScript on every supported Node.
    writeFileSync(join(project, 'quick-start.mjs'), `${server}\n${quickStart!.code}`);
    const { stdout, stderr } = await node(['quick-start.mjs']);
    expect(stderr).toBe('');
    expect(stdout).toBe("200 { id: 'ch_1', status: 'paid' }\n");
  });

  it('imports every subpath with import and with require', async () => {
    const esm = subpaths.filter((s) => NEEDS_PEER[s] === undefined);
    writeFileSync(
      join(project, 'imports.mjs'),
      esm.map((s, i) => `import * as m${i} from '${s}';`).join('\n') +
        `\nconsole.log(JSON.stringify([${esm.map((_, i) => `Object.keys(m${i}).length`).join(', ')}]));\n`,
    );
    writeFileSync(
      join(project, 'requires.cjs'),
      `console.log(JSON.stringify([${esm.map((s) => `Object.keys(require('${s}')).length`).join(', ')}]));\n`,
    );
    const counts = [JSON.parse((await node(['imports.mjs'])).stdout), JSON.parse((await node(['requires.cjs'])).stdout)];
    expect(counts[0]).toEqual(counts[1]);
    for (const n of counts[0] as number[]) expect(n).toBeGreaterThan(0);

    // A subpath that needs its peer says so when it is missing, and loads once it is installed.
    for (const [subpath, peer] of Object.entries(NEEDS_PEER)) {
      const missing = await node(['-e', `require('${subpath}')`]).catch((e: { stderr: string }) => e);
      expect((missing as { stderr: string }).stderr).toContain(`Cannot find module '${peer}'`);
      linkPeer(peer);
      const esmCount = (await node(['--input-type=module', '-e', `console.log(Object.keys(await import('${subpath}')).length)`]))
        .stdout;
      const cjsCount = (await node(['-e', `console.log(Object.keys(require('${subpath}')).length)`])).stdout;
      expect(Number(esmCount)).toBeGreaterThan(0);
      expect(esmCount).toBe(cjsCount);
    }
  });

  it('npx kindly-calls --version prints the version', async () => {
    const { stdout } = await run('npx', ['--no-install', 'kindly-calls', '--version'], { cwd: project, timeout: 60_000 });
    expect(stdout).toBe(`${pkg.version}\n`);
  });

  it('sim --config file.ts: loads on Node that strips types; elsewhere (no tsx here) says what to do', async () => {
    writeFileSync(
      join(project, 'retry.ts'),
      'const options: { maxAttempts: number } = { maxAttempts: 4 };\nexport default options;\n',
    );
    const bin = join(project, 'node_modules', 'kindly-calls', 'bin', 'kindly-calls.mjs');
    const args = [bin, 'sim', 'herd', '--seeds', '1', '--clients', '10', '--strategy', 'full', '--config', 'retry.ts', '--json'];
    const result = await node(args).then(
      (r) => ({ code: 0, ...r }),
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    const strips = Boolean((process as { features?: { typescript?: unknown } }).features?.typescript);
    if (strips) {
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('"strategy": "config"');
    } else {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('cannot load TypeScript by itself (Node 22.18 or later can); install tsx in your project');
    }
  });

  it('type-checks under --strict with nodenext (ESM) and node10 (module commonjs)', async () => {
    linkPeer('@opentelemetry/api'); // the otel subpath's types are its peer's
    linkPeer('fastify');
    const source = [
      "import Fastify from 'fastify';",
      "import { downstream, type RetryOptions } from 'kindly-calls';",
      "import { axiosInterceptors, queryRetry } from 'kindly-calls/adapters';",
      "import { createFetch, fastifyPlugin, nodeHttpHandler } from 'kindly-calls/http';",
      "import { instrumentDownstreams } from 'kindly-calls/otel';",
      "import * as redis from 'kindly-calls/redis';",
      "import { SCENARIOS } from 'kindly-calls/sim';",
      '',
      'export async function main(): Promise<void> {',
      '  const retry: RetryOptions = { maxAttempts: 3 };',
      "  const api = downstream('payments', { retry, breaker: true });",
      '  const kindlyFetch: (input: string) => Promise<Response> = createFetch(api);',
      '  const app = Fastify();',
      '  await app.register(fastifyPlugin, { maxTimeoutMs: 5_000 });',
      "  app.get('/', async (request) => request.kindly?.timeoutMs ?? 0); // typed: RequestContext | null",
      '  console.log(typeof axiosInterceptors, typeof queryRetry, typeof nodeHttpHandler, typeof instrumentDownstreams);',
      '  console.log(Object.keys(redis).length, SCENARIOS.length, typeof kindlyFetch, api.breakerState());',
      '}',
      '',
    ].join('\n');
    writeFileSync(join(project, 'check.mts'), source);
    writeFileSync(join(project, 'check.ts'), source);
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const common = ['--noEmit', '--strict', '--target', 'es2022', '--typeRoots', join(root, 'node_modules', '@types')];
    const compile = (args: string[]) =>
      run(process.execPath, [tsc, ...common, ...args], { cwd: project, timeout: 90_000 }).then(
        () => '',
        (e: { stdout: string }) => e.stdout,
      );
    const [nodenext, node10] = await Promise.all([
      compile(['--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', 'check.mts']),
      compile([
        '--module',
        'commonjs',
        '--moduleResolution',
        'node10',
        '--ignoreDeprecations',
        '6.0',
        '--types',
        'node',
        'check.ts',
      ]),
    ]);
    expect(nodenext).toBe('');
    expect(node10).toBe('');
  }, 120_000);
});
