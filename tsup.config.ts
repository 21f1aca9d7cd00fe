import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    lite: 'src/lite.ts',
    policies: 'src/policies/index.ts',
    hints: 'src/hints/index.ts',
    classify: 'src/classify/index.ts',
    testing: 'src/testing/index.ts',
    cli: 'src/cli/main.ts',
    otel: 'src/telemetry/opentelemetry.ts',
    http: 'src/http/index.ts',
    adapters: 'src/adapters/index.ts',
    sim: 'src/sim/index.ts',
    redis: 'src/store/redis.ts',
    grpc: 'src/grpc/index.ts',
    chaos: 'src/chaos/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: {
    // Fastify's `request.kindly`, typed. Written here rather than in src/http/fastify.ts because
    // the declaration build cannot resolve the optional `fastify` peer; a project without
    // fastify ignores an augmentation of a module it does not have.
    footer: [
      "declare module 'fastify' {",
      '  interface FastifyRequest {',
      "    /** Set by the `fastifyPlugin` plugin: the request's deadline, signal and retry state. */",
      "    kindly: import('./http.js').RequestContext | null;",
      '  }',
      '}',
    ].join('\n'),
  },
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
  // One chunk for everything the root entry loads (17 files → 2), then ASCII-only comments,
  // which Node decodes and V8 scans faster: see the scripts.
  async onSuccess() {
    const { mergeRootChunks } = await import('./scripts/merge-root-chunks.mjs');
    const { asciiCommentsIn } = await import('./scripts/ascii-comments.mjs');
    await mergeRootChunks('dist');
    asciiCommentsIn('dist');
  },
});
