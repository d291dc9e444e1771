// Long tests, not part of `npm test`: run them with `npm run test:long`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/long/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    testTimeout: 60 * 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // They start, kill and restart real daemons and time things: one file at a time.
    maxWorkers: 1,
    fileParallelism: false,
    reporters: ['default'],
  },
});
