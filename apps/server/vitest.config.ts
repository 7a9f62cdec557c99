import path from 'node:path';
import { fileURLToPath } from 'node:url';
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
    // The stats thread's file, bundled from its sources before the tests start (test/helpers/build-workers.ts).
    globalSetup: ['test/helpers/build-workers.ts'],
    env: { REFTRACK_STATS_WORKER: path.resolve(path.dirname(fileURLToPath(import.meta.url)), 'test/.workers/stats.worker.js') },
  },
});
