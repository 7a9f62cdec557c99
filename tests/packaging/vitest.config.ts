import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: reporters('packaging'),
    // Packing four packages and one `npm install` (third-party dependencies from the registry).
    hookTimeout: 180_000,
    testTimeout: 60_000,
  },
});
