import { defineConfig } from 'tsup';

// Migrations stay outside the bundle (apps/server/migrations), loaded at run time.
export default defineConfig({
  // The click writer thread is its own entry: a worker thread loads it by file name.
  entry: { main: 'src/main.ts', index: 'src/index.ts', 'click-writer.worker': 'src/db/click-writer.worker.mjs' },
  format: ['esm'],
  platform: 'node',
  target: 'node20',
  clean: true,
  sourcemap: true,
  dts: false,
});
