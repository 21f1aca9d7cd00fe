import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    cli: 'src/cli/main.ts',
    otel: 'src/telemetry/opentelemetry.ts',
    http: 'src/http/index.ts',
    adapters: 'src/adapters/index.ts',
    sim: 'src/sim/index.ts',
    grpc: 'src/grpc/index.ts',
    chaos: 'src/chaos/index.ts',
  },
  format: ['esm', 'cjs'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  splitting: true,
  treeshake: true,
});
