import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The subprocess tests run the built binary; building once here keeps them on the current source.
    globalSetup: ['test/helpers/build.ts'],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    reporters: reporters('cli'),
  },
});
