import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Long tests (random kills...) run only with `npm run test:long` (vitest.long.config.ts).
    exclude: ['test/long/**', 'node_modules/**'],
    // One temporary folder for the run, and a check that no process a test started outlives the run.
    globalSetup: ['test/setup/global.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: end-to-end files start real daemons and processes; more workers only add noise.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
