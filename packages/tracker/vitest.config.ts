import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: reporters('tracker'),
    // The end-to-end file starts a server and a browser.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
