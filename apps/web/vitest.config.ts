import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    reporters: reporters('web'),
    // The end-to-end file starts the real server and Chromium.
    testTimeout: 60_000,
    hookTimeout: 90_000,
  },
});
