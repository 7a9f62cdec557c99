import { defineConfig } from 'vitest/config';
import { reporters } from '../../vitest.shared.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    reporters: reporters('sdk'),
    // Type-level tests (*.test-d.ts) run through tsc in the same run, so `pnpm test` fails on a wrong public type.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
    // Retry tests really wait (Retry-After: 1, backoff), and the integration test starts a server.
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
