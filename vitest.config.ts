import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Property tests draw from a named seed (test/support/property-seed.ts).
    setupFiles: ['test/support/property-seed.ts'],
  },
});
