import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: end-to-end files start real daemons and processes; more workers only add noise.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
