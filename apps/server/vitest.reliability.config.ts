import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['reliability/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    reporters: reporters('server-reliability'),
    // Each file starts real server processes; one at a time keeps the two cores for them.
    fileParallelism: false,
  },
});
