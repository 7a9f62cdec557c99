import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: reporters('server'),
    // Files share the machine's two cores and one PostgreSQL; running them one after another keeps
    // timings (rate-limit windows, concurrency tests) predictable.
    fileParallelism: false,
  },
});
